/*
 * calib.h - measuring a GPU's L2 latency map (the core of `calibrate`).
 *
 * nt_gpu_query() reads a device's identity and properties;
 * nt_calib_run() measures the parts of a map asked for in opts->parts
 * (the chain map always) on one device and returns a new map.
 *
 * Method (docs/calibration.md has the long form):
 *  - every probe kernel runs one block per SM (large dynamic shared
 *    memory keeps a second block out) and the blocks take turns, so one
 *    SM at a time loads the memory system;
 *  - the SM clock is brought out of idle first (a short spin on every SM)
 *    and measured during each map (clock64 against %globaltimer);
 *  - chain: a random cyclic permutation of 128-byte lines in a small
 *    buffer; reps timed walks of chain_loads hops after one untimed walk;
 *    cycles per load = statistic over reps (min or median) / loads;
 *  - noise: the chain map again, right after; |difference| per SM;
 *  - lines: n_lines single lines spread over an L2-sized footprint, each
 *    a self-loop; per SM and line, warm loads then reps timed walks;
 *  - first touch: per SM, one launch: the copy engine rewrites the lines
 *    (so no SM holds them), then that SM alone times its first load of
 *    each line and ft_reps loads right after; plus a never-touched line
 *    per SM and line as a DRAM reference.
 * A launch that leaves SMs without a block is repeated (max_tries); SMs
 * still missing are an error naming them.
 */
#ifndef NT_CALIB_H
#define NT_CALIB_H

#include "gpu/cudrv.h"
#include "util/err.h"
#include "map/map.h"

struct nt_calib_opts {
	unsigned parts;		/* NT_MAP_NOISE | NT_MAP_LINES | NT_MAP_FIRST_TOUCH */
	int64_t chain_bytes;
	int chain_loads, chain_reps;
	int n_lines, line_loads, line_reps;
	int64_t footprint;	/* 0: the device's L2 size */
	int ft_reps;
	int median;		/* statistic over repetitions: 0 min, 1 median */
	int max_tries;
	uint64_t seed;
	/* Called at each stage with a short description; may be NULL. */
	void (*progress)(const char *stage);
};

/* What the run saw besides the map. */
struct nt_calib_stats {
	double wall_warmup, wall_chain, wall_noise, wall_lines, wall_first;	/* seconds */
	double warm_clock_mhz;	/* SM clock after the warm-up spin */
	double clock_min_mhz, clock_max_mhz;	/* over the SMs, during the chain map */
	double dram_median;	/* cycles: first load of a never-touched line */
	int launches;		/* kernel launches, retries included */
};

void nt_calib_defaults(struct nt_calib_opts *o);

/* Identity and properties of device `ordinal`.  Fails with a clear
 * message for a MIG slice or a compute capability below 7.5. */
int nt_gpu_query(struct nt_cuda *cu, int ordinal, struct nt_gpu *g, struct nt_err *err);

/* 0 when o is a run nt_calib_run() can make on a GPU whose L2 holds
 * l2_bytes (the footprint must give each line its own 128-byte slot);
 * else -1 and a message saying which option is wrong. */
int nt_calib_check_opts(const struct nt_calib_opts *o, int64_t l2_bytes, struct nt_err *err);

int nt_calib_run(struct nt_cuda *cu, int ordinal, const struct nt_calib_opts *o,
		 struct nt_map **out, struct nt_calib_stats *st, struct nt_err *err);

/*
 * A device held open for a series of chain maps (`calibrate
 * --stability`).  nt_calib_open() loads the probes (the device's primary
 * context, made current) and builds the chain once, so that every map of
 * the series walks the same lines at the same physical addresses: maps
 * of separate processes do not, and differ by more than the noise floor
 * on some SMs (docs/calibration.md, Limits).  nt_calib_chain() measures
 * one chain map, and its noise floor when o->parts has NT_MAP_NOISE (the
 * other parts are ignored); warm: spin the SM clock out of idle first,
 * as nt_calib_run() does.  The map has no command, host or tool version;
 * the caller fills them.  nt_calib_close() frees everything (NULL is
 * fine).
 */
struct nt_calib_dev;

int nt_calib_open(struct nt_cuda *cu, int ordinal, const struct nt_calib_opts *o,
		  struct nt_calib_dev **out, struct nt_err *err);
int nt_calib_chain(struct nt_calib_dev *d, int warm, struct nt_map **out, struct nt_calib_stats *st,
		   struct nt_err *err);
void nt_calib_close(struct nt_calib_dev *d);

#endif
