/*
 * nucatrace/localize_table.h - what the host hands the self-localisation
 * probe (localize.cuh), and what the probe hands back.  Plain C, shared
 * by the host (core/analysis/localize.h builds the table from a stored map) and
 * the device (the probe reads it from device memory).
 *
 * The table.  A stored map's line matrix gives, per SM, the L2 hit
 * latency of 256 single 128-byte lines at byte offsets of an L2-sized
 * footprint.  The table keeps n_line of those lines (chosen to tell the
 * TPCs apart), the map's row of every SM over them (tmpl), the map's
 * timing parameters, and the GPC-like group of every SM.  base is the
 * device address of a footprint the host allocated and wrote: line k is
 * at base + offset[k] and holds its own address (a self-loop).
 *
 * The classifier.  The probe measures x[k], cycles per load on line k.
 * For each SM s of the table, with r[k] = x[k] - tmpl[s][k]:
 *
 *	x = tmpl[s] + o + e,   e ~ N(0, sigma^2) per line,
 *	                       o ~ N(0, tau^2), one offset for all lines
 *	                       (clock, temperature, probe overhead)
 *	d[s] = sum (r - mean r)^2 / sigma^2 + n mean(r)^2 / (sigma^2 + n tau^2)
 *
 * d is -2 log of that model's likelihood, up to a constant, so the
 * posterior of SM s is w[s] / sum w, w[s] = exp(-(d[s] - min d) / 2);
 * a TPC's is the sum over its SMs (2k and 2k+1), a group's the sum over
 * its SMs.  The answer is the TPC of highest posterior, the better SM of
 * that TPC, and the group of that SM.  fit = min d / n is about 1 when
 * the probe agrees with the map within sigma; far above 1 it does not
 * (another GPU, a busy GPU, the footprint on other physical pages).
 *
 * Both sides compute d with nt_loc_distance() below, in float.
 */
#ifndef NUCATRACE_LOCALIZE_TABLE_H
#define NUCATRACE_LOCALIZE_TABLE_H

#ifdef __CUDACC__
#define NT_LOC_HD __host__ __device__ __forceinline__
#else
#define NT_LOC_HD static inline
#endif

#define NT_LOC_MAGIC 0x4e544c31u	/* "NTL1" */
#define NT_LOC_VERSION 1
#define NT_LOC_MAX_LINES 32		/* one per lane of the classifying warp */
#define NT_LOC_MAX_SM 256
#define NT_LOC_NO_GROUP (-1)		/* group[] of an SM the map has no row for */

struct nt_loc_table {
	unsigned magic;			/* NT_LOC_MAGIC */
	unsigned version;		/* NT_LOC_VERSION */
	int n_sm;			/* SMs of the map (smids 0 .. n_sm-1) */
	int n_line;			/* lines the probe times, 1 .. NT_LOC_MAX_LINES */
	int loads;			/* timed dependent loads per walk (the map's line_loads) */
	int reps;			/* timed walks per line; the minimum counts */
	int warm;			/* untimed loads per line first */
	int n_groups;
	float sigma, tau;		/* cycles; the model above */
	unsigned long long base;	/* device address of the footprint (host sets it) */
	unsigned long long offset[NT_LOC_MAX_LINES];	/* byte offsets into the footprint */
	int line[NT_LOC_MAX_LINES];	/* which line of the map each one is */
	int group[NT_LOC_MAX_SM];	/* GPC-like group, NT_LOC_NO_GROUP: no row */
	float tmpl[NT_LOC_MAX_SM][NT_LOC_MAX_LINES];	/* the map: cycles per load */
};

struct nt_loc_result {
	int sm, tpc, group;		/* most likely; -1 when the table is unusable */
	float p_sm, p_tpc, p_group;	/* their posterior probabilities */
	float fit;			/* min d / n_line, ~1 when the probe matches the map */
	float offset;			/* mean x - tmpl of the answer, cycles */
	unsigned long long probe_cycles;	/* clock64 spent on the lines */
	unsigned long long total_cycles;	/* the whole call, classification included */
	float x[NT_LOC_MAX_LINES];	/* measured cycles per load, per line of the table */
};

/* Rounded float products and sums on both sides: nvcc would otherwise
 * fuse a * b + c, and the device's d would differ from the host's in the
 * last bits (the two SMs of a TPC are often that close). */
#ifdef __CUDA_ARCH__
#define NT_LOC_MUL(a, b) __fmul_rn(a, b)
#define NT_LOC_ADD(a, b) __fadd_rn(a, b)
#else
#define NT_LOC_MUL(a, b) ((a) * (b))
#define NT_LOC_ADD(a, b) ((a) + (b))
#endif

/* Add line k's residual e = x[k] - tmpl[s][k] to the sums of r and r^2. */
NT_LOC_HD void nt_loc_accumulate(float *s1, float *s2, float e)
{
	*s1 = NT_LOC_ADD(*s1, e);
	*s2 = NT_LOC_ADD(*s2, NT_LOC_MUL(e, e));
}

/* d[s] from s1 = sum r and s2 = sum r^2 over n lines (the model above). */
NT_LOC_HD float nt_loc_distance(float s1, float s2, int n, float sigma, float tau)
{
	float m2 = NT_LOC_MUL(s1, s1) / (float)n;	/* n mean(r)^2 */
	float within = s2 - m2;
	float var = NT_LOC_MUL(sigma, sigma);

	if (within < 0.0f)
		within = 0.0f;
	return NT_LOC_ADD(within / var, m2 / NT_LOC_ADD(var, NT_LOC_MUL((float)n, NT_LOC_MUL(tau, tau))));
}

#endif
