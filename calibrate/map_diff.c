/* nucatrace map diff: per-SM differences of two maps against the noise. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/text.h"
#include "map_cmds.h"
#include "analysis/structure.h"
#include "usage.h"

static const char usage[] = "nucatrace map diff SPEC_A SPEC_B [--json] [--store PATH]";

/* An SM differs when |delta - offset| exceeds FACTOR times its noise
 * floor: the larger run-to-run |delta| of the two maps, never below
 * NT_MAP_MIN_FLOOR (nt_map_noise_floor(); a map without a noise part
 * gets NT_MAP_DEFAULT_FLOOR). */
#define FACTOR 3.0

struct diff {
	int n, beyond;
	double offset, r, mean_raw, max_raw, mean_abs, max_abs, floor_median;
	int argmax;
	double *delta, *floor;
};


static void compute(const struct nt_map *a, const struct nt_map *b, struct diff *d)
{
	int used = 0;

	d->n = a->n_sm;
	d->delta = malloc(d->n * sizeof(double));
	d->floor = malloc(d->n * sizeof(double));
	if (!d->delta || !d->floor)
		die("out of memory");
	for (int s = 0; s < d->n; s++) {
		d->delta[s] = b->chain[s] - a->chain[s];
		d->floor[s] = nt_map_noise_floor(a, b, s);
	}
	d->offset = nt_median(d->delta, d->n);
	d->r = nt_pearson(a->chain, b->chain, d->n);
	d->floor_median = nt_median(d->floor, d->n);
	d->argmax = -1;
	d->max_abs = d->max_raw = d->mean_abs = d->mean_raw = 0;
	d->beyond = 0;
	for (int s = 0; s < d->n; s++) {
		double raw, rel;

		if (isnan(d->delta[s]))
			continue;
		raw = fabs(d->delta[s]);
		rel = fabs(d->delta[s] - d->offset);
		used++;
		d->mean_raw += raw;
		d->mean_abs += rel;
		if (raw > d->max_raw)
			d->max_raw = raw;
		if (rel > d->max_abs || d->argmax < 0)
			d->max_abs = rel, d->argmax = s;
		d->beyond += rel > FACTOR * d->floor[s];
	}
	d->mean_raw = used ? d->mean_raw / used : NAN;
	d->mean_abs = used ? d->mean_abs / used : NAN;
}

static void print_text(const char *sa, const char *sb, const struct nt_map *a,
		       const struct nt_map *b, const struct diff *d)
{
	char na[NT_TEXT_ROOM(96)], nb[NT_TEXT_ROOM(96)];

	printf("A  %s  %s  (%s)\n", nt_text_safe(na, sizeof(na), a->gpu.name, 0), a->gpu.uuid, sa);
	printf("B  %s  %s  (%s)\n", nt_text_safe(nb, sizeof(nb), b->gpu.name, 0), b->gpu.uuid, sb);
	printf("   %s\n\n", strcmp(a->gpu.uuid, b->gpu.uuid) ? "different GPUs" : "the same GPU");
	printf("  offset (median of B - A)        %+.3f cycles\n", d->offset);
	printf("  raw |B - A|                     mean %.3f, max %.3f cycles\n", d->mean_raw, d->max_raw);
	printf("  |B - A - offset|                mean %.3f, max %.3f cycles (SM %d)\n", d->mean_abs,
	       d->max_abs, d->argmax);
	printf("  correlation of the two maps     r = %.5f\n", d->r);
	printf("  noise floor per SM              median %.3f cycles%s\n", d->floor_median,
	       a->noise || b->noise ? "" : " (neither map has a noise part: assumed)");
	printf("  SMs beyond %.0fx their floor      %d of %d\n", FACTOR, d->beyond, d->n);
	for (int s = 0; s < d->n; s++)
		if (!isnan(d->delta[s]) && fabs(d->delta[s] - d->offset) > FACTOR * d->floor[s])
			printf("    SM %3d  A %8.2f  B %8.2f  delta-offset %+7.2f  (floor %.2f)\n", s,
			       a->chain[s], b->chain[s], d->delta[s] - d->offset, d->floor[s]);
}

static int print_json(const struct nt_map *a, const struct nt_map *b, const struct diff *d)
{
	struct nt_json j;

	nt_json_init(&j, stdout, 1);
	nt_json_begin_object(&j);
	nt_json_key(&j, "a");
	nt_json_str(&j, a->gpu.uuid);
	nt_json_key(&j, "b");
	nt_json_str(&j, b->gpu.uuid);
	nt_json_key(&j, "same_gpu");
	nt_json_bool(&j, !strcmp(a->gpu.uuid, b->gpu.uuid));
	nt_json_key(&j, "offset");
	nt_json_double(&j, d->offset);
	nt_json_key(&j, "mean_abs_raw");
	nt_json_double(&j, d->mean_raw);
	nt_json_key(&j, "max_abs_raw");
	nt_json_double(&j, d->max_raw);
	nt_json_key(&j, "mean_abs");
	nt_json_double(&j, d->mean_abs);
	nt_json_key(&j, "max_abs");
	nt_json_double(&j, d->max_abs);
	nt_json_key(&j, "r");
	nt_json_double(&j, d->r);
	nt_json_key(&j, "beyond_noise");
	nt_json_int(&j, d->beyond);
	nt_json_key(&j, "delta");
	nt_json_double_array(&j, d->delta, d->n);
	nt_json_key(&j, "floor");
	nt_json_double_array(&j, d->floor, d->n);
	nt_json_end_object(&j);
	return nt_json_finish(&j);
}

int map_diff(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, MAP_COMMON_OPTIONS, { NULL, 0, NULL, 0 },
	};
	struct nt_map *a, *b;
	struct diff d = { 0 };
	int json = 0, o, ret = -1;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (o == 'j')
			json = 1;
		else if (map_common_option(o, usage, "map diff", argv, &store_path))
			return 0;
	}
	if (argc - optind != 2)
		usage_error(usage, "map diff needs two SPECs");
	a = map_load_spec(argv[optind], store_path);
	b = map_load_spec(argv[optind + 1], store_path);
	if (a->n_sm != b->n_sm) {
		error("cannot compare per SM: '%s' has %d SMs and '%s' has %d", argv[optind], a->n_sm,
		      argv[optind + 1], b->n_sm);
		goto out;
	}
	compute(a, b, &d);
	if (json ? print_json(a, b, &d) : (print_text(argv[optind], argv[optind + 1], a, b, &d), 0)) {
		error("cannot write the comparison to stdout");
		goto out;
	}
	ret = 0;
out:
	free(d.delta);
	free(d.floor);
	nt_map_free(a);
	nt_map_free(b);
	return ret;
}
