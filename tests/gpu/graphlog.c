/*
 * What the Compute Sanitizer tells a subscriber about graphs, printed: a
 * CUDA injection library that enables the whole graphs domain and the
 * launch domain's LAUNCH_BEGIN, patches nothing, and writes one line per
 * callback to stderr:
 *
 *   graphlog exec-created exec=E graph=G device-launch=0 launches-device-graphs=1
 *   graphlog launch-begin exec=E launch=ID upload=0
 *   graphlog node exec=E launch=ID node=N type=T grid=GRIDID f=NAME upload=0
 *   graphlog launch f=NAME grid=GRIDID
 *
 * For questions the interposer's graph handling rests on and the API's
 * documentation leaves open: whether a destroyed exec's handle comes back
 * for the next exec made, whether launch ids count per exec, and which
 * callbacks a graph launched from the device or a dynamic-parallelism
 * child brings (tests/gpu/progs/graphs_device.cu).
 *
 *   CUDA_INJECTION64_PATH=build/tests/gpu/graphlog.so build/tests/gpu/graphs_device execs 3
 *
 * The library is $NUCATRACE_SANITIZER_LIB, else
 * /usr/local/cuda/compute-sanitizer/libsanitizer-public.so.
 */
#include <stdint.h>
#include <stdio.h>

#include "tests/gpu/subscribe.h"

static const char *const graph_cbids[] = {
	"invalid", "exec-creating", "exec-created", "exec-destroying",
	"node-begin", "node-end", "launch-begin", "launch-end",
};

static void on_graphs(uint32_t cbid, const void *data)
{
	const char *what = cbid < sizeof(graph_cbids) / sizeof(*graph_cbids) ? graph_cbids[cbid] : "?";

	switch (cbid) {
	case NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATING:
	case NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED:
	case NT_SAN_CBID_GRAPHS_GRAPHEXEC_DESTROYING: {
		const struct nt_san_graphexec_data *d = data;

		fprintf(stderr, "graphlog %s exec=%p graph=%p device-launch=%u launches-device-graphs=%u\n", what,
			(void *)d->graphExec, (void *)d->graph, d->isDeviceLaunch, d->containsDeviceGraphLaunches);
		break;
	}
	case NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN:
	case NT_SAN_CBID_GRAPHS_NODE_LAUNCH_END: {
		const struct nt_san_graph_node_data *d = data;
		int kernel = d->nodeType == CU_GRAPH_NODE_TYPE_KERNEL;

		fprintf(stderr, "graphlog %s exec=%p launch=%u node=%p type=%d grid=%llu f=%s upload=%u\n", what,
			(void *)d->graphExec, d->launchId, (void *)d->node, (int)d->nodeType,
			kernel ? (unsigned long long)d->launchData.gridId : 0ULL,
			kernel && d->launchData.functionName ? d->launchData.functionName : "-", d->isGraphUpload);
		break;
	}
	case NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN:
	case NT_SAN_CBID_GRAPHS_LAUNCH_END: {
		const struct nt_san_graph_launch_data *d = data;

		fprintf(stderr, "graphlog %s exec=%p upload=%u\n", what, (void *)d->graphExec, d->isGraphUpload);
		break;
	}
	default:
		fprintf(stderr, "graphlog graphs-cbid-%u\n", cbid);
	}
}

static void on_callback(void *userdata, nt_san_domain domain, uint32_t cbid, const void *data)
{
	(void)userdata;
	if (domain == NT_SAN_CB_DOMAIN_GRAPHS)
		on_graphs(cbid, data);
	else if (domain == NT_SAN_CB_DOMAIN_LAUNCH && cbid == NT_SAN_CBID_LAUNCH_BEGIN) {
		const struct nt_san_launch_data *d = data;

		fprintf(stderr, "graphlog launch f=%s grid=%llu\n", d->functionName ? d->functionName : "-",
			(unsigned long long)d->gridId);
	}
}

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	struct test_san s;

	if (test_subscribe("graphlog", on_callback, &s))
		return 0;
	if (s.domain(1, s.sub, NT_SAN_CB_DOMAIN_GRAPHS) ||
	    s.callback(1, s.sub, NT_SAN_CB_DOMAIN_LAUNCH, NT_SAN_CBID_LAUNCH_BEGIN)) {
		fprintf(stderr, "graphlog: cannot enable its callbacks\n");
		return 0;
	}
	return 1;
}
