/* nucatrace map fit: the NUCA model and the structure of one map. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "map/heatmap.h"
#include "util/text.h"
#include "util/json.h"
#include "map_cmds.h"
#include "analysis/model.h"
#include "analysis/structure.h"
#include "usage.h"

static const char usage[] =
	"nucatrace map fit [SPEC] [--part lines|first|repeat] [--groups R] [--json] [--store PATH]";

/* Print the items as "0-3, 8, 10-11", wrapped at 100 columns with
 * continuation lines indented to `indent`; col is where the cursor is. */
struct ranges {
	FILE *f;
	int col, indent, first;
};

static void range_item(struct ranges *r, int lo, int hi)
{
	char item[32];
	int len = hi > lo ? snprintf(item, sizeof(item), "%d-%d", lo, hi)
			  : snprintf(item, sizeof(item), "%d", lo);

	if (!r->first && r->col + 2 + len > 100) {
		fprintf(r->f, ",\n%*s", r->indent, "");
		r->col = r->indent;
	} else if (!r->first) {
		fputs(", ", r->f);
		r->col += 2;
	}
	fputs(item, r->f);
	r->col += len;
	r->first = 0;
}

/* The runs of consecutive i < n with key[i] == want. */
static void print_runs(FILE *f, int col, int indent, int n, int (*key)(const void *, int),
		       const void *arg, int want)
{
	struct ranges r = { f, col, indent, 1 };

	for (int i = 0; i < n; i++) {
		int j = i;

		if (key(arg, i) != want)
			continue;
		while (j + 1 < n && key(arg, j + 1) == want)
			j++;
		range_item(&r, i, j);
		i = j;
	}
	fputc('\n', f);
}

/* 1 above zero, 0 at or below, -1 not measured. */
static int sign_key(const void *arg, int i)
{
	double v = ((const double *)arg)[i];

	return isnan(v) ? -1 : v > 0;
}

static int group_key(const void *arg, int i)
{
	return ((const struct nt_groups *)arg)->group[i];
}

static int count_sign(const double *v, int n, int sign)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += !isnan(v[i]) && (sign > 0 ? v[i] > 0 : v[i] <= 0);
	return c;
}

static void fit_text(const struct nt_map *m, const char *part, const struct nt_fit *fit,
		     const struct nt_groups *g)
{
	static const char *rows[] = { "additive", "+ 1 interaction term", "+ 2 interaction terms",
				      "+ 3 interaction terms" };
	char name[NT_TEXT_ROOM(96)];

	printf("%s  %s: %s matrix, %d SMs x %d lines\n\n", nt_text_safe(name, sizeof(name), m->gpu.name, 0),
	       m->gpu.uuid,
	       !strcmp(part, "lines") ? "line" : !strcmp(part, "first") ? "first-touch" : "right-after",
	       fit->rows_used, m->n_line);
	printf("  %-24s %6s  %s\n", "model", "R^2", "singular value");
	for (int t = 0; t <= NT_FIT_KMAX; t++) {
		printf("  %-24s %6.3f", rows[t], fit->r2[t]);
		if (t > 0 && t <= fit->k)
			printf("  %.1f", fit->sigma[t - 1]);
		putchar('\n');
	}
	printf("\n  mu %.2f cycles\n", fit->mu);
	for (int t = 0; t < fit->k; t++) {
		int col = printf("  interaction %d: %d SMs on the + side: ", t + 1,
				 count_sign(fit->u[t], m->n_sm, 1));

		print_runs(stdout, col, 17, m->n_sm, sign_key, fit->u[t], 1);
		col = printf("  %*s%d SMs on the - side: ", 15, "", count_sign(fit->u[t], m->n_sm, -1));
		print_runs(stdout, col, 17, m->n_sm, sign_key, fit->u[t], 0);
		printf("  %*s%d of %d lines on the + side\n", 15, "", count_sign(fit->v[t], m->n_line, 1),
		       m->n_line);
	}
	printf("\n  GPC-like groups (average-linkage, rows correlate at r >= %.2f): %d\n", g->min_r,
	       g->n_groups);
	for (int k = 0; k < g->n_groups; k++) {
		int size = 0;

		for (int i = 0; i < g->n; i++)
			size += g->group[i] == k;
		int col = printf("    group %d: %3d SMs, within r %.3f: ", k, size, g->within_r[k]);

		print_runs(stdout, col, 6, g->n, group_key, g, k);
	}
	printf("\n  SM term a(sm), cycles:\n");
	nt_heatmap_term(stdout, fit->a, m->n_sm, 16, 0, "cycles");
}

static int fit_json(const struct nt_map *m, const char *part, const struct nt_fit *fit,
		    const struct nt_groups *g)
{
	struct nt_json j;

	nt_json_init(&j, stdout, 1);
	nt_json_begin_object(&j);
	nt_json_key(&j, "uuid");
	nt_json_str(&j, m->gpu.uuid);
	nt_json_key(&j, "part");
	nt_json_str(&j, part);
	nt_json_key(&j, "rows_used");
	nt_json_int(&j, fit->rows_used);
	nt_json_key(&j, "n_line");
	nt_json_int(&j, m->n_line);
	nt_json_key(&j, "mu");
	nt_json_double(&j, fit->mu);
	nt_json_key(&j, "r2");
	nt_json_double_array(&j, fit->r2, NT_FIT_KMAX + 1);
	nt_json_key(&j, "sigma");
	nt_json_double_array(&j, fit->sigma, fit->k);
	nt_json_key(&j, "a");
	nt_json_double_array(&j, fit->a, m->n_sm);
	nt_json_key(&j, "b");
	nt_json_double_array(&j, fit->b, m->n_line);
	nt_json_key(&j, "u");
	nt_json_begin_array(&j);
	for (int t = 0; t < fit->k; t++)
		nt_json_double_array(&j, fit->u[t], m->n_sm);
	nt_json_end_array(&j);
	nt_json_key(&j, "v");
	nt_json_begin_array(&j);
	for (int t = 0; t < fit->k; t++)
		nt_json_double_array(&j, fit->v[t], m->n_line);
	nt_json_end_array(&j);
	nt_json_key(&j, "groups");
	nt_json_begin_object(&j);
	nt_json_key(&j, "min_r");
	nt_json_double(&j, g->min_r);
	nt_json_key(&j, "count");
	nt_json_int(&j, g->n_groups);
	nt_json_key(&j, "of_sm");
	nt_json_begin_array(&j);
	for (int i = 0; i < g->n; i++)
		nt_json_int(&j, g->group[i]);
	nt_json_end_array(&j);
	nt_json_end_object(&j);
	nt_json_end_object(&j);
	return nt_json_finish(&j);
}

int map_fit(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = {
		{ "part", required_argument, NULL, 'p' }, { "groups", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' }, MAP_COMMON_OPTIONS, { NULL, 0, NULL, 0 },
	};
	const char *part = "lines", *what;
	struct nt_groups g = { 0 };
	struct nt_fit fit = { 0 };
	double min_r = 0.9;
	struct nt_err err;
	struct nt_map *m;
	const double *mat;
	int json = 0, o, ret = 0;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (o) {
		case 'p': part = optarg; break;
		case 'j': json = 1; break;
		case 'g':
			if (sscanf(optarg, "%lf", &min_r) != 1 || !(min_r > -1 && min_r < 1))
				usage_error(usage, "--groups: '%s' is not a correlation in (-1, 1)", optarg);
			break;
		default:
			if (map_common_option(o, usage, "map fit", argv, &store_path))
				return 0;
		}
	}
	if (argc - optind > 1)
		usage_error(usage, "map fit takes one SPEC");
	m = map_load_spec(optind < argc ? argv[optind] : NULL, store_path);
	if (!strcmp(part, "lines"))
		mat = m->line_lat, what = "line matrix";
	else if (!strcmp(part, "first"))
		mat = m->ft_first, what = "first-touch matrix";
	else if (!strcmp(part, "repeat"))
		mat = m->ft_repeat, what = "right-after matrix";
	else
		usage_error(usage, "--part: '%s' is not lines, first or repeat", part);
	if (!mat)
		die("this map of %s has no %s matrix: calibrate without --quick/--no-lines/"
		    "--no-first-touch", m->gpu.uuid, part);
	if (nt_fit_matrix(mat, m->n_sm, m->n_line, NT_FIT_KMAX, what, &fit, &err) ||
	    nt_groups_cluster(mat, m->n_sm, m->n_line, min_r, &g, &err))
		die("%s", err.msg);
	if (json)
		ret = fit_json(m, part, &fit, &g);
	else
		fit_text(m, part, &fit, &g);
	nt_groups_free(&g);
	nt_fit_free(&fit);
	nt_map_free(m);
	return ret ? error("cannot write the fit to stdout") : 0;
}
