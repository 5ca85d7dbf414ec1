/* Sampling policies (sampling.h): parsing them, and deciding per launch
 * with a count per kernel in a uthash table and the state of the window. */
#include "trace/sampling.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* out of memory in HASH_ADD leaves the entry out instead of exiting */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (oom = 1)
#include <uthash.h>

#define POLICY_MAX 4096

struct kernel_count {
	UT_hash_handle hh;
	int64_t seen;		/* launches so far */
	int match;		/* passes the match= filter (decided at first sight) */
	int64_t window;		/* the window it was last traced in */
	int quota;		/* ... then with first= launches still to trace */
	int64_t retried;	/* the window of its last retry (nt_sampling_retry) */
	int awaited;		/* ... whose pick its next launch is */
	char name[];		/* mangled */
};

/* The kernels last looked up, by the address of the name they were
 * asked with: a backend hands the same string for every launch of a
 * kernel, and hashing a mangled name (PyTorch's run to 1,600 bytes) was
 * most of an untraced launch's cost (`make bench-host`).  A hit is taken
 * only when the names are equal too: an address may be reused. */
#define LOOKASIDE 64

struct nt_sampling {
	struct {
		const char *mangled;
		struct kernel_count *k;
	} lookaside[LOOKASIDE];
	int all, none;
	int64_t first, every, max;	/* 0: not given */
	int64_t window, skip, idle;	/* 0: not given */
	int64_t blocks;			/* 0: not given */
	double budget;			/* percent; 0: not given */
	double gpu;			/* seconds; 0: not given */
	char **match;
	int n_match;
	struct kernel_count *counts;
	char *canon;
	/* the run so far */
	int64_t launches, traced, windows, in_windows;
	int started;
	double t0;			/* first launch */
	/* the window */
	int open;
	int64_t in_window, since_traced;
	int64_t window_blocks;		/* blocks of the window's traced launches (nt_sampling_blocks) */
	double window_gpu;		/* their GPU seconds so far (nt_sampling_gpu_time) */
	int64_t quota_kernels;		/* traced in the window, first= not done */
	int64_t retry_kernels;		/* awaited in the window: a pick to retry */
	double opened_at, closed_at, spent;	/* spent: closed windows, seconds */
	/* phases (nt_sampling_phases): of the window, the one now (or the
	 * next, once a phase closed: `resume` 2 until the close is done,
	 * nt_sampling_window_done, then 1 until the phase opens) */
	int phases, phase, resume;
	int64_t phase_start;		/* in_window when the phase began */
	int force;			/* nt_sampling_close_now(): close at the next decision */
	int hold;			/* nt_sampling_hold(): no window opens at a decision */
};

/* "first=8" -> 8 into *v; -1 when term is not `name=<positive integer>`
 * or the key was already given. */
static int parse_count(const char *term, const char *val, int64_t *v, struct nt_err *err)
{
	char *end;
	long long n;

	if (*v)
		return nt_err_set(err, "sampling policy: '%s' given twice", term);
	errno = 0;
	n = *val >= '0' && *val <= '9' ? strtoll(val, &end, 10) : 0;
	if (n <= 0 || errno || *end)
		return nt_err_set(err, "sampling policy: in '%s', '%s' is not a positive integer", term, val);
	*v = n;
	return 0;
}

/* "budget=2.5" -> 2.5 into *v: a decimal in (0, hi], what (a percent,
 * seconds) in the message. */
static int parse_decimal(const char *term, const char *val, double hi, const char *what, double *v,
			 struct nt_err *err)
{
	char *end = (char *)val;
	double p = 0;

	if (*v)
		return nt_err_set(err, "sampling policy: '%s' given twice", term);
	errno = 0;
	if ((*val >= '0' && *val <= '9') || *val == '.')
		p = strtod(val, &end);
	if (errno || *end || !(p > 0 && p <= hi))
		return nt_err_set(err, "sampling policy: in '%s', '%s' is not %s in (0, %g]", term, val, what,
				  hi);
	*v = p;
	return 0;
}

static int parse_term(struct nt_sampling *s, char *term, struct nt_err *err)
{
	char *val = strchr(term, '=');
	char **more;

	if (!strcmp(term, "all") || !strcmp(term, "none")) {
		int *flag = term[0] == 'a' ? &s->all : &s->none;

		if (*flag)
			return nt_err_set(err, "sampling policy: '%s' given twice", term);
		*flag = 1;
		return 0;
	}
	if (!val)
		goto unknown;
	*val++ = '\0';
	if (!strcmp(term, "first"))
		return parse_count("first", val, &s->first, err);
	if (!strcmp(term, "every"))
		return parse_count("every", val, &s->every, err);
	if (!strcmp(term, "max"))
		return parse_count("max", val, &s->max, err);
	if (!strcmp(term, "window"))
		return parse_count("window", val, &s->window, err);
	if (!strcmp(term, "skip"))
		return parse_count("skip", val, &s->skip, err);
	if (!strcmp(term, "idle"))
		return parse_count("idle", val, &s->idle, err);
	if (!strcmp(term, "blocks"))
		return parse_count("blocks", val, &s->blocks, err);
	if (!strcmp(term, "budget"))
		return parse_decimal("budget", val, 100, "a percent", &s->budget, err);
	if (!strcmp(term, "gpu"))
		return parse_decimal("gpu", val, 3600, "seconds", &s->gpu, err);
	if (!strcmp(term, "match")) {
		if (!*val)
			return nt_err_set(err, "sampling policy: 'match=' needs a pattern");
		if (!(more = realloc(s->match, (s->n_match + 1) * sizeof(*more))))
			return nt_err_set(err, "sampling policy: out of memory");
		s->match = more;
		if (!(s->match[s->n_match] = strdup(val)))
			return nt_err_set(err, "sampling policy: out of memory");
		s->n_match++;
		return 0;
	}
	val[-1] = '=';
unknown:
	return nt_err_set(err, "sampling policy: unknown term '%s' (known: all, none, first=N, every=K, "
			  "match=GLOB, max=N, window=N, skip=N, idle=N, blocks=N, gpu=S, budget=P)", term);
}

/* Trim spaces around a term in place. */
static char *trim(char *p)
{
	char *end = p + strlen(p);

	while (*p == ' ' || *p == '\t')
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return p;
}

static int canonical(struct nt_sampling *s, struct nt_err *err)
{
	size_t len = 128;
	int at = 0;

	for (int i = 0; i < s->n_match; i++)
		len += strlen(s->match[i]) + 8;
	if (!(s->canon = malloc(len)))
		return nt_err_set(err, "sampling policy: out of memory");
	s->canon[0] = '\0';
	if (s->none)
		at += sprintf(s->canon + at, "none");
	if (s->all)
		at += sprintf(s->canon + at, "all");
	if (s->first)
		at += sprintf(s->canon + at, "%sfirst=%lld", at ? "," : "", (long long)s->first);
	if (s->every)
		at += sprintf(s->canon + at, "%severy=%lld", at ? "," : "", (long long)s->every);
	for (int i = 0; i < s->n_match; i++)
		at += sprintf(s->canon + at, "%smatch=%s", at ? "," : "", s->match[i]);
	if (s->max)
		at += sprintf(s->canon + at, "%smax=%lld", at ? "," : "", (long long)s->max);
	if (s->window)
		at += sprintf(s->canon + at, "%swindow=%lld", at ? "," : "", (long long)s->window);
	if (s->skip)
		at += sprintf(s->canon + at, "%sskip=%lld", at ? "," : "", (long long)s->skip);
	if (s->idle)
		at += sprintf(s->canon + at, "%sidle=%lld", at ? "," : "", (long long)s->idle);
	if (s->blocks)
		at += sprintf(s->canon + at, "%sblocks=%lld", at ? "," : "", (long long)s->blocks);
	if (s->gpu)
		at += sprintf(s->canon + at, "%sgpu=%g", at ? "," : "", s->gpu);
	if (s->budget)
		sprintf(s->canon + at, "%sbudget=%g", at ? "," : "", s->budget);
	return 0;
}

int nt_sampling_parse(const char *policy, struct nt_sampling **out, struct nt_err *err)
{
	struct nt_sampling *s = NULL;
	char *copy = NULL, *term;
	int ret = -1;

	*out = NULL;
	if (!policy)
		policy = NT_SAMPLING_DEFAULT;
	if (strlen(policy) > POLICY_MAX)
		return nt_err_set(err, "sampling policy: longer than %d bytes", POLICY_MAX);
	if (!(s = calloc(1, sizeof(*s))) || !(copy = strdup(policy))) {
		nt_err_set(err, "sampling policy: out of memory");
		goto out;
	}
	s->phases = 1;
	if (!*trim(copy)) {
		nt_err_set(err, "sampling policy is empty (say 'none' to trace nothing)");
		goto out;
	}
	/* strsep, not strtok: an empty term ("first=8,,max=2") is an error */
	for (char *rest = copy; (term = strsep(&rest, ",")); ) {
		term = trim(term);
		if (!*term) {
			nt_err_set(err, "sampling policy '%s': empty term", policy);
			goto out;
		}
		if (parse_term(s, term, err))
			goto out;
	}
	if (s->none && (s->all || s->first || s->every || s->n_match || s->max || s->window || s->skip ||
			s->idle || s->budget)) {
		nt_err_set(err, "sampling policy '%s': 'none' cannot be combined with other terms", policy);
		goto out;
	}
	if (s->all && (s->first || s->every)) {
		nt_err_set(err, "sampling policy '%s': 'all' already selects every launch; "
			   "drop it or first/every", policy);
		goto out;
	}
	if (!s->none && !s->first && !s->every)
		s->all = 1;
	if (canonical(s, err))
		goto out;
	*out = s;
	s = NULL;
	ret = 0;
out:
	free(copy);
	nt_sampling_free(s);
	return ret;
}

static int matches(const struct nt_sampling *s, const char *mangled, const char *demangled)
{
	if (!s->n_match)
		return 1;
	for (int i = 0; i < s->n_match; i++)
		if (!fnmatch(s->match[i], mangled, 0) || (demangled && !fnmatch(s->match[i], demangled, 0)))
			return 1;
	return 0;
}

/* The kernel of that name seen before, or NULL. */
static struct kernel_count *known(struct nt_sampling *s, const char *mangled)
{
	size_t slot = ((uintptr_t)mangled >> 4) % LOOKASIDE;
	struct kernel_count *k = s->lookaside[slot].k;

	if (k && s->lookaside[slot].mangled == mangled && !strcmp(k->name, mangled))
		return k;
	HASH_FIND_STR(s->counts, mangled, k);
	if (k) {
		s->lookaside[slot].mangled = mangled;
		s->lookaside[slot].k = k;
	}
	return k;
}

int nt_sampling_needs_demangled(struct nt_sampling *s, const char *mangled)
{
	if (!s->n_match || s->none || !mangled)
		return 0;
	return !known(s, mangled);
}

int nt_sampling_may_trace(struct nt_sampling *s, const char *mangled, const char *demangled)
{
	struct kernel_count *k;

	if (s->none)
		return 0;
	if (!s->n_match)
		return 1;
	return (k = known(s, mangled)) ? k->match : matches(s, mangled, demangled);
}

/* The kernel's entry, made (and matched) at first sight: fnmatch per
 * launch would cost every launch of a long run.  NULL when out of memory. */
static struct kernel_count *kernel(struct nt_sampling *s, const char *mangled, const char *demangled)
{
	struct kernel_count *k;
	size_t len;
	int oom = 0;

	if ((k = known(s, mangled)))
		return k;
	len = strlen(mangled);
	if (!(k = calloc(1, sizeof(*k) + len + 1)))
		return NULL;
	memcpy(k->name, mangled, len + 1);
	k->match = matches(s, mangled, demangled);
	HASH_ADD(hh, s->counts, name, len, k);
	if (oom) {
		free(k);
		return NULL;
	}
	return k;
}

/* Do first/every/all (or a retry) select the kernel's next launch (not
 * counting it)? */
static int picks(const struct nt_sampling *s, const struct kernel_count *k)
{
	int64_t n = k->seen;

	return s->all || k->awaited || (s->first && n < s->first) || (s->every && n % s->every == 0);
}

/* What the next window is expected to cost: as much as a window so far
 * on average (closed ones; 0 before the first).  budget= holds with it
 * spent: windows take at most P% of the run by the time the one opening
 * closes, not only as it opens (that was about 2P% once it closed: on
 * the H200 the default's two windows took 1.8% of a 3.9 s graph-replay
 * loop, docs/results/2026-12-05-dark-cost.md). */
static double next_cost(const struct nt_sampling *s)
{
	int64_t closed = s->windows - (s->open ? 1 : 0);

	return closed > 0 ? s->spent / (double)closed : 0;
}

/* With `extra` seconds more spent in windows, may one open now?  (With
 * the next window's cost in the run's time too: budget=100 lets windows
 * follow one another.) */
static int budget_allows(const struct nt_sampling *s, double now, double extra)
{
	double next = next_cost(s);

	return !s->budget || s->spent + extra + next <= s->budget / 100 * (now - s->t0 + next);
}

static int64_t idle_limit(const struct nt_sampling *s)
{
	return s->idle ? s->idle : NT_SAMPLING_IDLE;
}

int nt_sampling_exhausted(const struct nt_sampling *s)
{
	return s->none || (s->max && s->traced >= s->max);
}

int nt_sampling_from_start(const struct nt_sampling *s)
{
	return !nt_sampling_exhausted(s) && !s->skip && (!s->windows || (s->windows == 1 && s->open));
}

/* Without window=, is the open window done?  After idle= launches with
 * none traced; or, when only first=/every= pick launches, as soon as a
 * launch is not picked while no kernel traced in the window still has
 * first= launches to come: the next pick (every=) is far, and until then
 * patched code would only cost.  A kernel with first= launches to come
 * holds the window for NT_SAMPLING_QUOTA_IDLE launches not picked at
 * most: on the H200 a triad's fill kernel, launched twice, held a
 * first=8 window open through all 93 triads after its first 8, each
 * running instrumented code (session 17, run 1). */
static int window_done(const struct nt_sampling *s, int picked)
{
	if (s->since_traced >= idle_limit(s) || nt_sampling_exhausted(s))
		return 1;
	if (s->window || s->all || picked || s->retry_kernels)
		return 0;
	return !s->quota_kernels || s->since_traced >= NT_SAMPLING_QUOTA_IDLE;
}

/* A traced launch of k (counted) in the open window. */
static void note_traced(struct nt_sampling *s, struct kernel_count *k)
{
	int left = s->first && k->seen < s->first;

	s->traced++;
	s->since_traced = 0;
	if (k->window != s->windows) {
		k->window = s->windows;
		k->quota = left;
		s->quota_kernels += left;
	} else if (k->quota && !left) {
		k->quota = 0;
		s->quota_kernels--;
	}
}

/* The open window's phase has had its window= launches, or its traced
 * launches its blocks= blocks or gpu= seconds. */
static int phase_full(const struct nt_sampling *s)
{
	return (s->window && s->in_window - s->phase_start >= s->window) ||
	       (s->blocks && s->window_blocks >= s->blocks) || (s->gpu && s->window_gpu >= s->gpu);
}

int nt_sampling_decide(struct nt_sampling *s, const char *mangled, const char *demangled, double now)
{
	return nt_sampling_decide_grid(s, mangled, demangled, 0, now);
}

void nt_sampling_left(const struct nt_sampling *s, int64_t *launches, int64_t *blocks)
{
	int64_t n;

	*launches = *blocks = -1;
	if (s->first || s->every) {
		*launches = 0;
		return;
	}
	if (s->max)
		*launches = s->max > s->traced ? s->max - s->traced : 0;
	if (s->open && s->window) {
		n = s->window - (s->in_window - s->phase_start);
		n = n > 0 ? n : 0;
		if (*launches < 0 || n < *launches)
			*launches = n;
	}
	if (s->open && s->blocks)
		*blocks = s->blocks > s->window_blocks ? s->blocks - s->window_blocks : 0;
}

/* budget= (with spent seconds of a window still open) and window=
 * allow a new window now. */
static int may_open(const struct nt_sampling *s, double now, double spent)
{
	return budget_allows(s, now, spent) && (!s->window || s->budget || !s->windows);
}

/* A new window's counts (it is open, or goes on from the last one). */
static void window_begin(struct nt_sampling *s)
{
	s->in_window = 0;
	s->phase_start = 0;
	s->window_blocks = 0;
	s->window_gpu = 0;
	s->since_traced = 0;
	s->quota_kernels = 0;
	s->retry_kernels = 0;
	s->windows++;
}

static void start(struct nt_sampling *s, double now)
{
	if (!s->started) {
		s->started = 1;
		s->t0 = now;
	}
}

int nt_sampling_decide_grid(struct nt_sampling *s, const char *mangled, const char *demangled, int64_t blocks,
			    double now)
{
	struct kernel_count *k;
	int pick, selectable, close, too_big = 0;

	if (s->none || !mangled)
		return 0;
	start(s, now);
	s->launches++;
	if (!(k = kernel(s, mangled, demangled))) {
		close = s->open && window_done(s, 0);
		goto out;
	}
	if (k->awaited && (!s->open || k->retried != s->windows))
		k->awaited = 0;	/* its retry's window closed first: that pick is gone */
	selectable = k->match && (!s->max || s->traced < s->max);
	pick = selectable && picks(s, k);
	if (pick && s->blocks && blocks > s->blocks) {	/* it alone would pass the budget */
		too_big = 1;
		pick = 0;
	}
	if (s->resume == 1 && pick && !s->hold) {	/* the window's next phase, whatever skip= and budget= say */
		s->resume = 0;
		s->open = 1;
		s->opened_at = now;
	}
	close = s->open && ((phase_full(s) && s->phase >= s->phases - 1) || window_done(s, pick) || s->force);
	if (s->open && !close && phase_full(s)) {	/* the next phase (nt_sampling_phases) */
		s->phase++;
		s->resume = 2;	/* once its modules are unpatched */
		s->phase_start = s->in_window;
		s->window_blocks = 0;
		s->window_gpu = 0;
		close = 1;
	} else if (close || (!s->open && !s->resume)) {
		s->phase = 0;
		s->resume = 0;
		s->force = 0;
	}
	if ((!s->open || close) && !s->resume && pick && (!s->hold || s->open) && s->launches > s->skip &&
	    may_open(s, now, close ? now - s->opened_at : 0)) {
		/* a new window; right after the last one, it goes on from it:
		 * the modules stay patched */
		if (!close) {
			s->open = 1;
			s->opened_at = now;
		}
		close = 0;
		window_begin(s);
	}
	if (!s->open || close) {
		/* Without window=, every launch of the kernel counts. */
		if (!s->window && k->match)
			k->seen++;
		goto out;
	}
	s->in_window++;
	s->in_windows++;
	if (k->match)
		k->seen++;
	if (pick) {
		if (k->awaited) {	/* the retry (its window may have closed just now) */
			k->awaited = 0;
			if (k->retried == s->windows)
				s->retry_kernels--;
		}
		note_traced(s, k);
		return NT_SAMPLE_TRACE;
	}
	s->since_traced++;
	if (too_big)
		return NT_SAMPLE_TOO_BIG;
out:
	if (!close)
		return 0;
	s->open = 0;
	s->spent += now - s->opened_at;
	s->closed_at = now;
	return NT_SAMPLE_CLOSE;
}

/* Whether one of the next n launches would open a window (or a window's
 * next phase) whatever kernels they are: the policy picks every launch
 * (all, no match=), and nothing else stands in the way that decide()
 * checks; skip= may end inside them. */
int nt_sampling_opens_next(const struct nt_sampling *s, int64_t n, double now)
{
	if (!s->all || s->n_match || s->open || nt_sampling_exhausted(s))
		return 0;
	if (s->resume)
		return s->resume == 1;
	return s->launches + (n > 1 ? n : 1) > s->skip && may_open(s, now, 0);
}

void nt_sampling_hold(struct nt_sampling *s, int on)
{
	s->hold = on && s->all && !s->n_match;
}

int nt_sampling_open_ahead(struct nt_sampling *s, int64_t n, double now)
{
	if (!nt_sampling_opens_next(s, n, now))
		return 0;
	start(s, now);
	s->open = 1;
	s->opened_at = now;
	if (s->resume) {	/* the window's next phase (as decide() opens it) */
		s->resume = 0;
		return 1;
	}
	s->phase = 0;
	s->force = 0;
	window_begin(s);
	return 1;
}

void nt_sampling_blocks(struct nt_sampling *s, int64_t blocks)
{
	if (s->open && blocks > 0)
		s->window_blocks += blocks;
}

int64_t nt_sampling_phase_id(const struct nt_sampling *s)
{
	return s->open ? s->windows * 256 + s->phase : -1;
}

void nt_sampling_gpu_time(struct nt_sampling *s, int64_t phase_id, double seconds)
{
	if (s->open && phase_id >= 0 && phase_id == nt_sampling_phase_id(s) && seconds > 0)
		s->window_gpu += seconds;
}

void nt_sampling_retry(struct nt_sampling *s, const char *mangled, int64_t blocks)
{
	struct kernel_count *k = NULL;

	if (mangled)
		HASH_FIND_STR(s->counts, mangled, k);
	if (!k || !s->open || k->retried == s->windows)
		return;
	k->retried = s->windows;
	k->awaited = 1;
	s->retry_kernels++;
	if (s->traced > 0)
		s->traced--;
	/* nor does it count towards window= or blocks=: a window that opens
	 * at a graph launch of more nodes than window= (PyTorch's captured
	 * step: 1,114), whose modules are patched only as the next graph
	 * launch enters the driver, would else close at the end of the first
	 * with nothing traced (session 17, run 3) */
	if (s->in_window > 0)
		s->in_window--;
	s->window_blocks -= blocks > 0 && blocks <= s->window_blocks ? blocks : 0;
}

int nt_sampling_open(const struct nt_sampling *s)
{
	return s->open;
}

void nt_sampling_close_now(struct nt_sampling *s)
{
	if (s->open)
		s->force = 1;
}

int nt_sampling_waits(const struct nt_sampling *s)
{
	return !s->window;
}

int nt_sampling_phases(struct nt_sampling *s, int n)
{
	s->phases = n > 1 && s->window ? n : 1;
	return s->phases;
}

int nt_sampling_phase(const struct nt_sampling *s)
{
	return s->phase;
}

double nt_sampling_next_open(const struct nt_sampling *s, double now)
{
	double t;

	if (s->none || nt_sampling_exhausted(s))
		return INFINITY;
	if (!s->started || s->open || s->resume || !s->window || s->launches <= s->skip)
		return now;
	if (!s->budget)
		return s->windows ? INFINITY : now;
	/* budget_allows(s, t, 0) from t on */
	t = s->t0 + (s->spent + next_cost(s)) * 100 / s->budget - next_cost(s);
	return t > now ? t : now;
}

void nt_sampling_window_done(struct nt_sampling *s, double now)
{
	/* a next phase opens only now: until its modules are unpatched,
	 * a launch traced in it would run the last phase's patches (on the
	 * H200 a close that had to wait left a mixed window's second phase
	 * entry-only: docs/results/2026-12-03-record-budget.md) */
	if (s->resume == 2)
		s->resume = 1;
	if (now > s->closed_at)
		s->spent += now - s->closed_at;
	s->closed_at = now;
}

void nt_sampling_stats(const struct nt_sampling *s, double now, struct nt_sampling_stats *out)
{
	out->launches = s->launches;
	out->windows = s->windows;
	out->in_windows = s->in_windows;
	out->last_window = s->in_window;
	out->traced = s->traced;
	out->window_s = s->spent + (s->open && now > s->opened_at ? now - s->opened_at : 0);
}

const char *nt_sampling_string(const struct nt_sampling *s)
{
	return s->canon;
}

void nt_sampling_free(struct nt_sampling *s)
{
	struct kernel_count *k, *tmp;

	if (!s)
		return;
	HASH_ITER(hh, s->counts, k, tmp) {
		HASH_DEL(s->counts, k);
		free(k);
	}
	for (int i = 0; i < s->n_match; i++)
		free(s->match[i]);
	free(s->match);
	free(s->canon);
	free(s);
}
