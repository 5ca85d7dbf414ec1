/* Sampling policies (sampling.h): parsing them, and deciding per launch
 * with a count per kernel in a uthash table. */
#include "trace/sampling.h"

#include <errno.h>
#include <fnmatch.h>
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
	char name[];		/* mangled */
};

struct nt_sampling {
	int all, none;
	int64_t first, every, max;	/* 0: not given */
	char **match;
	int n_match;
	int64_t traced;
	struct kernel_count *counts;
	char *canon;
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
			  "match=GLOB, max=N)", term);
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
		sprintf(s->canon + at, "%smax=%lld", at ? "," : "", (long long)s->max);
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
	if (s->none && (s->all || s->first || s->every || s->n_match || s->max)) {
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

int nt_sampling_needs_demangled(struct nt_sampling *s, const char *mangled)
{
	struct kernel_count *k;

	if (!s->n_match || s->none || !mangled)
		return 0;
	HASH_FIND_STR(s->counts, mangled, k);
	return !k;
}

/* Kernels are matched once, at first sight (fnmatch per launch would
 * cost every launch of a long run); then counted. */
int nt_sampling_decide(struct nt_sampling *s, const char *mangled, const char *demangled)
{
	struct kernel_count *k;
	int64_t n;
	int oom = 0, pick;

	if (s->none || !mangled)
		return 0;
	HASH_FIND_STR(s->counts, mangled, k);
	if (!k) {
		size_t len = strlen(mangled);

		if (!(k = calloc(1, sizeof(*k) + len + 1)))
			return 0;
		memcpy(k->name, mangled, len + 1);
		k->match = matches(s, mangled, demangled);
		HASH_ADD(hh, s->counts, name, len, k);
		if (oom) {
			free(k);
			return 0;
		}
	}
	if (!k->match)
		return 0;
	n = k->seen++;
	pick = s->all || (s->first && n < s->first) || (s->every && n % s->every == 0);
	if (!pick || (s->max && s->traced >= s->max))
		return 0;
	s->traced++;
	return 1;
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
