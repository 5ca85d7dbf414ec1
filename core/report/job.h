/*
 * job.h - the job view: the traces of the ranks of one data-parallel job
 * set side by side, their steps lined up at their collectives, and for
 * each step which rank finished its compute last, by how much, and how
 * much of that the slow SMs under that rank's blocks explain.
 * nt_report_build() makes it (report_job.c) from what the report already
 * holds; nothing here reads a trace or prints.
 *
 * One job.  Traces with a rank (meta `rank`) are ranks of one job when
 * they ran the same program (the same `exe` and `cmdline`: torchrun,
 * mpirun and srun start every rank with the same command) at the same
 * time (their host-time spans, start_unix_ns to end_unix_ns, overlap,
 * directly or through other ranks: two runs of one command one after the
 * other are two jobs).  The parent process is not used: ranks under
 * their own `nucatrace run`, or on other hosts, have other parents.  A
 * rank seen in two traces of one job (a forked child keeps its parent's
 * RANK) counts once, in the first; the other is named in `note`.  A job
 * needs two ranks.
 *
 * Collectives.  A kernel is a collective when its name (demangled, after
 * any "void ", else mangled, after "_Z<length>") starts with "nccl" and
 * its identifier holds "Kernel": NCCL names its kernels ncclDevKernel_*
 * (2.19 on), ncclKernel_* (2.12 to 2.18), nccl*Kernel_* (older).  NCCL
 * requires every rank of a communicator to make the same collective calls
 * in the same order, and a collective ends on every rank at about the
 * same moment (none can end before the last one has arrived): each is a
 * sync point.  The view assumes one communicator that every rank is in
 * (data parallelism).
 *
 * Lining ranks up.  When every rank's trace holds every launch of its
 * process (launch numbers 1..n, no gap: `--sample all`), the k-th
 * collective of each rank is one sync point (NT_JOB_BY_ORDER).
 * Otherwise (sampling windows) a sync point is a launch number that is a
 * collective on every rank (NT_JOB_BY_LAUNCH): this needs the ranks to
 * make the same launches, which the view checks: every launch number
 * traced on every rank must be the same kernel on each, else there is no
 * step and `why` names the first that is not.  Clocks are never compared
 * between ranks (GPUs on other hosts, or unsynchronised, would not
 * allow it): everything below is measured on each rank's own clock.
 *
 * Steps.  Step k is what each rank launched between sync point k-1 and
 * sync point k: its compute, which sync point k waits for.  A training
 * loop with one collective an iteration has one step an iteration; with
 * DDP's gradient buckets, a step per bucket (the first holding the
 * optimizer, forward and most of backward).  The launches before a
 * rank's first sync point make no step.  Per step and rank (struct
 * nt_job_cell):
 *   compute  the summed GPU time of its compute launches (collectives
 *            excluded) that are measured: in native time where the
 *            kernel has one (report.h, the probe effect), else traced;
 *            kernels running at once on several streams count twice;
 *   lost     lost to slow SMs (replay.h) over those of its launches that
 *            are credible and of measurable kernels, like the program's;
 *   span     traced GPU time from the step's first launch start to its
 *            collective's start: the compute as the traced run lived it,
 *            host gaps and instrumentation included; only when every
 *            launch of the step is traced on that rank;
 *   wait     its collective's traced GPU time: it waited in it for the
 *            others, then moved the data; the last to arrive waits least.
 * Sampling: traces hold traced launches only, in windows.  A launch of
 * the step is measured when it is traced on every rank (by launch
 * number; by order every launch is), so the ranks' compute is summed over
 * the same launches, the sampled ones, and stays comparable; `measured`
 * against `step_launches` says how much of the step that is (complete:
 * all of it, on every rank).  A step with no launch measured on every
 * rank is not judged.
 *
 * The verdict of a judged step.  The rank with the most compute finished
 * its compute last (ties: the lower rank); its lead is its compute minus
 * the next one's.  Its lost time is what slow SMs cost it in that step;
 * `explained` = min(lost, lead) / lead: the share of the lead its slow
 * SMs account for.  `job_lost` = max(compute) - max(compute - lost) over
 * the ranks: how much sooner the step's last rank would have been done
 * had no rank lost time to slow SMs.  Not counted: a GPU whose whole map
 * is slower than another's (lost is against each GPU's own mean SM); the
 * per-rank map means show it.
 */
#ifndef NT_JOB_H
#define NT_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct nt_report;

enum nt_job_align {
	NT_JOB_UNALIGNED,	/* no steps: `why` says why */
	NT_JOB_BY_ORDER,	/* the k-th collective of each rank */
	NT_JOB_BY_LAUNCH,	/* the same launch number on each rank */
};

/* One rank of a job: a trace. */
struct nt_job_rank {
	int trace;		/* index into r->traces */
	int rank;
	int device;		/* index into r->devices: its traced launches' GPU; -1: none */
	/* its map's chain latencies, cycles (NAN without a map) */
	double map_mean, map_min, map_max, map_spread_pct;
	int collectives;	/* its traced collective launches */
	/* over the judged steps */
	int last;		/* steps in which it finished its compute last */
	double lead_ns;		/* its leads in those */
	double compute_ns, lost_ns;
};

/* One rank in one step (top of this file). */
struct nt_job_cell {
	size_t collective;	/* its collective: index into r->launches */
	int launches;		/* its compute launches traced in the step */
	int measured;		/* of those, traced on every rank (all, by order) */
	double compute_ns, lost_ns;	/* over the measured ones */
	double span_ns;		/* NAN unless every launch of the step is traced here */
	double wait_ns;		/* NAN when its collective has no times */
};

struct nt_job_step {
	int64_t launch;		/* its collective's launch number, on the job's first rank */
	int kernel;		/* that collective's kernel: index into r->kernels */
	int64_t step_launches;	/* launches the first rank made in it (its launch numbers) */
	int complete;		/* every launch of it traced on every rank */
	int judged;		/* a launch measured on every rank */
	int last, next;		/* indices into ranks: last to finish its compute and the one
				 * before it; -1 when not judged */
	double lead_ns, lost_ns, explained, job_lost_ns;	/* explained NAN when lead is 0 */
	struct nt_job_cell *cells;	/* [n_ranks] */
};

struct nt_report_job {
	int n_ranks;
	struct nt_job_rank *ranks;	/* by rank */
	enum nt_job_align align;
	char why[256];		/* without steps: why */
	char note[256];		/* traces of a rank seen before, left out; "" when none */
	int n_steps, judged, complete;
	struct nt_job_step *steps;
	/* over the judged steps: the last rank's compute, the leads, the part
	 * of them its lost time explains (min(lost, lead)), and job_lost */
	double critical_ns, lead_ns, explained_ns, job_lost_ns;
};

/* Whether a kernel is a collective (top of this file); demangled may be
 * NULL. */
int nt_report_is_collective(const char *mangled, const char *demangled);

/* The jobs among r's traces into r->jobs (report.h): 0, or -1 with err
 * set when out of memory.  nt_report_jobs_free() frees them. */
int nt_report_jobs(struct nt_report *r, struct nt_err *err);
void nt_report_jobs_free(struct nt_report *r);

#endif
