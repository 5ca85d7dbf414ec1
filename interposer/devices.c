/* Device rows, maps and SM limits for the trace (devices.h). */
#include "devices.h"

#include <stdlib.h>
#include <string.h>

#include "gpu/calib.h"
#include "gpu/cudrv.h"
#include "gpu/occupancy.h"
#include "map/store.h"
#include "collector.h"
#include "warn.h"

#define MAX_DEVICES 256

struct nt_devices {
	const char *store;
	char store_buf[4096];	/* the default store's path, resolved at creation */
	char *lib;		/* $NUCATRACE_LIBCUDA at creation, or NULL */
	unsigned char seen[MAX_DEVICES];
	unsigned char later[MAX_DEVICES];	/* seen while the driver was not ours */
	short cc[MAX_DEVICES];		/* compute capability * 10 */
	struct nt_cuda cu;
	int cu_loaded;		/* bound */
	int cu_init;		/* bound and cuInit: 0 not yet, 1 done, -1 failed */
	char no_map[256];
};

/* Made on a thread of the program's (the collector's start, or a fork
 * child's): the environment is read here, never on the collector's
 * thread, where getenv() could race the program's setenv().  The driver
 * is bound and initialised at the first device (not here: this may run
 * inside the program's cuInit, or in a fork child's handler, where
 * dlopen() could wait for a loader lock held at the fork). */
struct nt_devices *nt_devices_new(const char *store)
{
	struct nt_devices *d = calloc(1, sizeof(*d));
	const char *lib = getenv("NUCATRACE_LIBCUDA");

	if (!d)
		return NULL;
	d->store = store ? store : nt_store_default_path(d->store_buf, sizeof(d->store_buf));
	if (lib && *lib && !(d->lib = strdup(lib))) {
		free(d);
		return NULL;
	}
	return d;
}

void nt_devices_free(struct nt_devices *d)
{
	if (!d)
		return;
	if (d->cu_loaded)
		nt_cuda_unload(&d->cu);
	free(d->lib);
	free(d);
}

static void add_map(struct nt_devices *d, struct nt_trace *t, const char *uuid)
{
	struct nt_store *store = NULL;
	struct nt_map *map = NULL;
	struct nt_err err;
	int ok;

	ok = !nt_store_open_default(d->store, 0, &store, &err) && !nt_store_latest(store, uuid, &map, &err) &&
	     !nt_trace_add_map(t, map, &err);
	nt_map_free(map);
	nt_store_close(store);
	if (!ok && strlen(d->no_map) + strlen(uuid) + 3 < sizeof(d->no_map))
		strcat(strcat(d->no_map, d->no_map[0] ? ", " : ""), uuid);
}

static void note(struct nt_devices *d, struct nt_trace *t, int ordinal, int wait)
{
	struct nt_trace_device row = { 0 };
	struct nt_sm_limits lim;
	struct nt_err err;
	struct nt_gpu g;
	int ok;

	if (ordinal < 0 || ordinal >= MAX_DEVICES || d->seen[ordinal])
		return;
	/* a launch waiting for record space holds a switch: at a later
	 * launch of the device, or at the trace's close */
	if (wait)
		nt_collector_driver_enter();
	else if (!nt_collector_driver_try_enter()) {
		d->later[ordinal] = 1;
		return;
	}
	d->seen[ordinal] = 1;
	d->later[ordinal] = 0;
	if (!d->cu_init) {
		d->cu_loaded = !nt_cuda_bind_lib(&d->cu, d->lib, &err);
		d->cu_init = d->cu_loaded && d->cu.cuInit(0) == CUDA_SUCCESS ? 1 : -1;
	}
	ok = d->cu_init == 1 && !nt_gpu_query(&d->cu, ordinal, &g, &err);
	nt_collector_driver_leave();
	if (!ok)
		return;
	d->cc[ordinal] = (short)(g.cc_major * 10 + g.cc_minor);
	row.device = ordinal;
	memcpy(row.uuid, g.uuid, sizeof(row.uuid));
	memcpy(row.name, g.name, sizeof(row.name));
	row.sm_count = g.sm_count;
	row.cc_major = g.cc_major;
	row.cc_minor = g.cc_minor;
	row.l2_bytes = g.l2_bytes;
	row.clock_khz = g.clock_khz;
	row.max_threads_per_sm = row.max_blocks_per_sm = row.regs_per_sm = NT_TRACE_UNKNOWN;
	row.smem_per_sm = NT_TRACE_UNKNOWN;
	if (!nt_sm_limits_for(g.cc_major, g.cc_minor, &lim, NULL)) {
		row.max_threads_per_sm = lim.max_threads_per_sm;
		row.max_blocks_per_sm = lim.max_blocks_per_sm;
		row.regs_per_sm = lim.regs_per_sm;
		row.smem_per_sm = lim.smem_per_sm;
	}
	if (nt_trace_add_device(t, &row, &err)) {
		nt_warn("%s", err.msg);
		return;
	}
	add_map(d, t, g.uuid);
}

void nt_devices_note(struct nt_devices *d, struct nt_trace *t, int ordinal)
{
	note(d, t, ordinal, 0);
}

int nt_devices_later(const struct nt_devices *d, int ordinal)
{
	return ordinal >= 0 && ordinal < MAX_DEVICES && d->later[ordinal];
}

void nt_devices_note_later(struct nt_devices *d, struct nt_trace *t)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		if (d->later[i])
			note(d, t, i, 1);
}

int32_t nt_devices_occupancy(const struct nt_devices *d, int device, int threads, int registers,
			     int64_t static_smem, int64_t dyn_smem)
{
	struct nt_launch_res res = { 0 };
	struct nt_sm_limits lim;
	struct nt_occupancy o;
	int cc = device >= 0 && device < MAX_DEVICES ? d->cc[device] : 0;

	if (!cc || registers < 0 || static_smem < 0 || dyn_smem < 0 ||
	    nt_sm_limits_for(cc / 10, cc % 10, &lim, NULL))
		return NT_TRACE_UNKNOWN;
	res.threads = threads;
	res.registers = registers;
	res.static_smem = static_smem;
	res.dynamic_smem = dyn_smem;
	if (nt_occupancy(&lim, &res, &o, NULL))
		return NT_TRACE_UNKNOWN;
	return o.blocks;
}

const char *nt_devices_missing_maps(const struct nt_devices *d)
{
	return d->no_map;
}
