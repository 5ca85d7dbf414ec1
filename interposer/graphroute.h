/*
 * graphroute.h - the program's graph launches routed through
 * libnucatrace (graphroute.c), so that a sampling window can launch a
 * shadow exec in the place of an exec the program made before it (issue
 * 33): one made from a clone of its graph whose kernel nodes name
 * instrumented twins (interposer/blocks/san_twins.c).  The program's
 * exec itself is then never changed: the Compute Sanitizer makes an exec
 * updated to other functions and back about 0.5 us a replay slower for
 * the rest of its life (docs/results/2026-12-05-dark-cost.md), which the
 * other route, pointing the program's exec at the twins, pays.
 *
 * On unless NUCATRACE_GRAPH_ROUTE=update (config.h), and only where
 * libnucatrace is preloaded: the CUDA runtime finds the driver's functions with
 * cuGetProcAddress, which it finds with dlsym on its handle of libcuda,
 * so the routing answers dlsym's lookups of cuGetProcAddress (and of the
 * graph launch functions themselves), and a program linked to libcuda
 * calls the exported cuGraphLaunch.  Lookups made before tracing starts
 * are answered the same way; until a backend sets a route, a routed
 * launch calls the driver at once.
 *
 * nt_graph_route_set(r): from now on each routed graph launch of exec on
 * stream (CU_STREAM_PER_THREAD for the per-thread default stream's
 * function on stream 0) calls r->begin(exec, stream, same), which
 * returns the exec to launch in its place (or exec), then the driver
 * with it.  same: exec's last routed launch was on this stream, as far
 * as the routing knows (a launch of another exec in exec's place is
 * ordered after the exec's earlier launches only by their stream: the
 * driver orders the launches of one exec, whatever their streams).
 * When the driver refuses the exec returned, the program's own exec is
 * launched instead (the program sees what its own launch gives), and
 * r->failed(exec, result) is told when that one went through.
 * r->end(exec, given) after every launch that called r->begin, given
 * what it returned.  When exec's last launch ran another exec in its
 * place on another stream, r->fence(stream) is called before exec
 * itself is launched: it waits for that launch.  r stays valid for good.
 *
 * nt_graph_route_quiet(q): while q, routed launches call the driver at
 * once (the backend's launch callbacks off between windows: no begin).
 *
 * nt_graph_routed(): how many lookups of the graph launch have been
 * answered with the route (0: the program's launches do not come this
 * way, and a window points its execs at twins instead).
 */
#ifndef NT_GRAPHROUTE_H
#define NT_GRAPHROUTE_H

#include <cuda.h>

struct nt_graph_route {
	CUgraphExec (*begin)(CUgraphExec exec, CUstream stream, int same);
	void (*failed)(CUgraphExec exec, CUresult result);
	void (*end)(CUgraphExec exec, CUgraphExec ran);
	void (*fence)(CUstream stream);
};

void nt_graph_route_set(const struct nt_graph_route *r);
void nt_graph_route_quiet(int q);
unsigned long nt_graph_routed(void);

/* NUCATRACE_GRAPH_ROUTE's values */
#define NT_GRAPH_ROUTE_ENV "NUCATRACE_GRAPH_ROUTE"

#endif
