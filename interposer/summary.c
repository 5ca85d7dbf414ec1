/* The exit summary (summary.h). */
#include "summary.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

#define TOP 5
#define NAME_MAX_SHOWN 70
#define TOP_DROPS 3

static int by_time(const void *a, const void *b)
{
	const struct nt_sink_kernel *x = *(const struct nt_sink_kernel *const *)a;
	const struct nt_sink_kernel *y = *(const struct nt_sink_kernel *const *)b;

	return (x->ns < y->ns) - (x->ns > y->ns);
}

/* name, at most NAME_MAX_SHOWN bytes of it, control bytes as '?'. */
static void put_name(FILE *f, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < n && i < NAME_MAX_SHOWN; i++)
		fputc((unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i], f);
	if (n > NAME_MAX_SHOWN)
		fputs("...", f);
}

/* Why launches were dropped: the TOP_DROPS most frequent reasons, in
 * full (control bytes as '?'). */
static void top_drops(FILE *f, const struct nt_summary *s)
{
	uint64_t rest = s->dropped_other;

	if (!s->n_drops && !rest)
		return;
	fprintf(f, "nucatrace: dropped, by reason:\n");
	for (size_t i = 0; i < s->n_drops; i++) {
		if (i >= TOP_DROPS) {
			rest += s->drops[i]->n;
			continue;
		}
		fprintf(f, "  %8" PRIu64 "  ", s->drops[i]->n);
		for (const char *p = s->drops[i]->reason; *p; p++)
			fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
		fputc('\n', f);
	}
	if (rest)
		fprintf(f, "  %8" PRIu64 "  for other reasons (the trace has each; nucatrace report lists them)\n",
			rest);
}

static void top_kernels(FILE *f, const struct nt_summary *s)
{
	const struct nt_sink_kernel **v;
	int64_t total = 0;

	if (!s->n_kernels || !(v = malloc(s->n_kernels * sizeof(*v))))
		return;
	memcpy(v, s->kernels, s->n_kernels * sizeof(*v));
	for (size_t i = 0; i < s->n_kernels; i++)
		total += v[i]->ns;
	qsort(v, s->n_kernels, sizeof(*v), by_time);
	fprintf(f, "nucatrace: top kernels by %s GPU time%s:\n",
		strcmp(s->backend, "kernels") ? "traced" : "recorded",
		s->entry_only == 1 ? " (entry-only: first block start to last)"
		: s->entry_only ? " (entry-only launches: first block start to last)" : "");
	for (size_t i = 0; i < s->n_kernels && i < TOP && v[i]->launches; i++) {
		fprintf(f, "  %5.1f%%  %10.3f ms  %6" PRIu64 " launches  ", total ? 100.0 * v[i]->ns / total : 0.0,
			v[i]->ns / 1e6, v[i]->launches);
		put_name(f, v[i]->demangled ? v[i]->demangled : v[i]->mangled);
		fputc('\n', f);
	}
	free(v);
}

void nt_summary_print(FILE *f, const struct nt_summary *s)
{
	const struct nt_run_counts *run = s->run;

	if (!strcmp(s->backend, "kernels")) {
		fprintf(f, "nucatrace: kernels mode: %" PRIu64 " launches recorded\n", s->traced);
		top_drops(f, s);
	} else {
		fprintf(f, "nucatrace: %s mode: traced %" PRIu64 " of %" PRIu64 " launches, %" PRIu64
			   " blocks recorded, %" PRIu64 " launches dropped\n", s->backend, s->traced,
			run->launches, s->blocks, s->dropped);
		top_drops(f, s);
		if (run->dark_spans)
			fprintf(f, "nucatrace: launch callbacks off between windows for %.3f s (%" PRIu64 " span%s%s): "
				   "launches then ran with no callback and are not in the count above\n",
				run->dark_s, run->dark_spans, run->dark_spans == 1 ? "" : "s",
				run->dark_at_exit ? ", the last until exit" : "");
		if (run->switch_overlaps)
			fprintf(f, "nucatrace: %" PRIu64 " launch%s began while another thread was patching or "
				   "unpatching modules (no data given: docs/limits.md)\n", run->switch_overlaps,
				run->switch_overlaps == 1 ? "" : "es");
		if (run->room_waits)
			fprintf(f, "nucatrace: %" PRIu64 " launch%s waited %.3f s in all for block record space "
				   "(%" PRIu64 " inside %s launch callback)\n", run->room_waits,
				run->room_waits == 1 ? "" : "es", run->room_wait_s, run->room_waits_in_callback,
				run->room_waits == 1 ? "its" : "their");
		if (run->graph_execs)
			fprintf(f, "nucatrace: %" PRIu64 " CUDA graph exec%s made (%" PRIu64 " whose kernels could not "
				   "be listed); a module a live exec runs is never patched: an exec made before a window "
				   "was pointed at instrumented twins %" PRIu64 " time%s (%" PRIu64 " by a shadow exec launched "
				   "in its place; %" PRIu64 " twin%s loaded; %" PRIu64 " cubins kept, %.1f of %.1f MiB)\n",
				run->graph_execs, run->graph_execs == 1 ? "" : "s", run->graph_execs_unlisted,
				run->graph_execs_twinned, run->graph_execs_twinned == 1 ? "" : "s",
				run->graph_execs_shadowed, run->twins,
				run->twins == 1 ? "" : "s", run->twin_images, run->twin_image_kept / 1048576.0,
				run->twin_image_bytes / 1048576.0);
		if (run->twin_refused) {
			int n = (int)strcspn(run->twin_refused_names, ";");

			fprintf(f, "nucatrace: %" PRIu64 " module%s a window wanted a twin of %s module-scope variables "
				   "(their graph nodes are dropped), such as %.*s%s\n", run->twin_refused,
				run->twin_refused == 1 ? "" : "s", run->twin_refused == 1 ? "has" : "have", n,
				run->twin_refused_names,
				run->twin_refused_names[n] ? " (more in the trace's meta twin_refused_names)" : "");
		}
		if (!run->sampling.windows && run->launches)
			fprintf(f, "nucatrace: no sampling window opened in %" PRIu64 " launches (policy %s); "
				   "for a short program use --sample all or first=N\n", run->launches, s->sampling);
		if (run->sampling.windows)
			fprintf(f, "nucatrace: %" PRId64 " sampling window%s, %" PRId64 " launches in them, "
				   "%.3f s; %" PRIu64 " module patches (%.3f s), %" PRIu64
				   " unpatches (%.3f s), %" PRIu64 " waits for the GPU before them (%.3f s); %" PRIu64
				   " untraced launches timed natively\n",
				run->sampling.windows, run->sampling.windows == 1 ? "" : "s",
				run->sampling.in_windows, run->sampling.window_s, run->patches, run->patch_s,
				run->unpatches, run->unpatch_s, run->settles, run->settle_s, s->native);
		/* what tracing cost the program's own wall time, where it goes */
		fprintf(f, "nucatrace: own time: %" PRIu64 " callbacks %.3f s (about %" PRIu64 " at launches, "
			   "%.3f s; %" PRIu64 " module loads, %.3f s); %" PRIu64 " block records packed in %.3f s "
			   "and written in %.3f s",
			run->callbacks, run->callback_ns / 1e9, run->launch_callbacks, run->launch_callback_ns / 1e9,
			run->modules, run->module_s, s->blocks, s->pack_s, s->write_s);
		if (s->blocks && s->pack_s + s->write_s > 0)
			fprintf(f, " (%.2f million a second, %.1f bytes each)", s->blocks / (s->pack_s + s->write_s) / 1e6,
				(double)s->block_bytes / (double)s->blocks);
		if (run->exit_begin > 0)
			fprintf(f, "; at exit %.3f s so far", nt_now_s() - run->exit_begin);
		fputc('\n', f);
	}
	top_kernels(f, s);
	if (s->missing_maps && s->missing_maps[0])
		fprintf(f, "nucatrace: no calibration map for %s in the store: the trace has no map "
			   "(run 'nucatrace calibrate')\n", s->missing_maps);
	if (s->path && s->incomplete)
		fprintf(f, "nucatrace: trace written to %s, incomplete: writes to it failed (see above)\n", s->path);
	else if (s->path)
		fprintf(f, "nucatrace: trace written to %s\n", s->path);
}
