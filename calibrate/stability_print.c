/* What calibrate --stability prints: text and JSON (calib_stability.h). */
#include "calib_stability.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "util/version.h"

#define WIDTH 100

/* "1980", "1755-1980" or "-": a range of values shown with no decimals. */
static const char *range0(char *buf, size_t len, double lo, double hi)
{
	if (isnan(lo) || isnan(hi))
		snprintf(buf, len, "-");
	else if (lround(lo) == lround(hi))
		snprintf(buf, len, "%.0f", lo);
	else
		snprintf(buf, len, "%.0f-%.0f", lo, hi);
	return buf;
}

/* v, but 0 where "%+.3f" would print "-0.000". */
static double tidy(double v)
{
	return fabs(v) < 5e-4 ? 0.0 : v;
}

static const char *num(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
	return buf;
}

/* text after a label of `indent` columns, wrapped at WIDTH. */
static void wrapped(FILE *f, int indent, const char *label, const char *text)
{
	int col = fprintf(f, "  %-*s", indent - 2, label);

	while (*text) {
		size_t word = strcspn(text, " ");

		if (col > indent && col + 1 + (int)word > WIDTH) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		col += fprintf(f, "%.*s", (int)word, text);
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

void stab_print_header(FILE *f, const struct stab_report *rp)
{
	const struct nt_stab_plan *p = rp->plan;
	const struct nt_loadgen_info *l = rp->load;
	char buf[512];

	fprintf(f, "%s  %s  device %d, %d SMs\n", rp->gpu->name, rp->gpu->uuid, rp->device,
		rp->gpu->sm_count);
	snprintf(buf, sizeof(buf), "%.1f minutes: idle %.0f s (%d maps), load %.0f s (%d maps, one "
		 "every %.1f s), idle %.0f s (%d maps)", rp->minutes, p->before_s,
		 p->per_phase[NT_STAB_IDLE_BEFORE], p->load_s, p->per_phase[NT_STAB_LOAD],
		 p->load_every_s, p->after_s, p->per_phase[NT_STAB_IDLE_AFTER]);
	wrapped(f, 14, "stability", buf);
	wrapped(f, 14, "maps", "chain maps with their noise floor (the chain map twice, back to "
		"back); drift per SM against map 1, the first idle map");
	if (l) {
		snprintf(buf, sizeof(buf), "%d blocks x %d threads (%d per SM: %d of %d threads), "
			 "%.0f MiB streamed through the L2, FMAs on it; %.0f ms launches back to back",
			 l->blocks, l->threads, l->blocks_per_sm, l->blocks_per_sm * l->threads,
			 l->max_sm_threads, l->bytes / 1048576.0, l->launch_s * 1e3);
		wrapped(f, 14, "load", buf);
	}
	snprintf(buf, sizeof(buf), "%s%s", rp->sensors_missing ? "none: " : "NVML: temperature "
		 "and power, read right before each map", rp->sensors_missing ? rp->sensors_missing : "");
	wrapped(f, 14, "sensors", buf);
	fprintf(f, "\n    #  %-11s %5s %6s %5s %5s %5s %8s %7s %7s %6s %3s %3s %8s\n", "phase", "t s",
		"MHz", "load", "temp", "power", "mean", "offset", "scale", "max|d|", "SM", ">3x", "r");
}

/* The SM clock differed by more than 1% between the SMs of the map. */
static int clock_varied(const struct nt_stab_input *in)
{
	return in->clock_hi_mhz - in->clock_lo_mhz > 0.01 * in->m->sm_clock_mhz;
}

void stab_print_row(FILE *f, const struct stab_report *rp, int i)
{
	const struct nt_stab_input *in = &rp->in[i];
	const struct nt_stab_row *w = rp->res ? &rp->res->row[i] : NULL;
	char load[16], temp[16], power[16], off[16], sc[16], mx[16], sm[16], bey[16], r[16];

	fprintf(f, "  %3d  %-11s %5.0f %6.0f%c%5s %5s %5s ", i + 1, nt_stab_phase_name(in->phase),
		in->t, in->m->sm_clock_mhz, clock_varied(in) ? '*' : ' ',
		num(load, sizeof(load), "%.0f", in->load_mhz),
		num(temp, sizeof(temp), "%.0fC", in->temp_c),
		num(power, sizeof(power), "%.0fW", in->power_w));
	if (!w) {
		struct nt_map_summary ms;

		nt_map_summarize(in->m, &ms);
		fprintf(f, "%8.3f  no reference (noise median %.3f)\n", ms.mean, ms.noise_median);
		return;
	}
	fprintf(f, "%8.3f ", w->mean);
	if (w->busy) {
		fprintf(f, " busy (median noise %.2f): left out\n", w->noise_median);
		return;
	}
	if (!w->compared) {
		fprintf(f, "%7s  (noise median %.3f, max %.3f)\n", "ref", w->noise_median, w->noise_max);
		return;
	}
	snprintf(sm, sizeof(sm), "%d", w->max_sm);
	snprintf(bey, sizeof(bey), "%d", w->beyond);
	fprintf(f, "%7s %7s %6s %3s %3s %8s\n", num(off, sizeof(off), "%+.3f", tidy(w->offset)),
		num(sc, sizeof(sc), "%.4f", w->scale), num(mx, sizeof(mx), "%.3f", w->max_abs), sm, bey,
		num(r, sizeof(r), "%.5f", w->r));
}

static void print_load(FILE *f, const struct stab_report *rp)
{
	const struct stab_load_total *t = &rp->load_total;
	double secs = t->gpu_seconds > 0 ? t->gpu_seconds : t->seconds;
	char buf[512], clk[32], extra[96] = "";

	if (!t->launches) {
		wrapped(f, 14, "load", "none ran");
		return;
	}
	if (!isnan(t->power_max_w))
		snprintf(extra, sizeof(extra), ", up to %.0f W and %.0f C", t->power_max_w,
			 t->temp_max_c);
	snprintf(buf, sizeof(buf), "%d launches, %.1f s, on %d of %d SMs at least; %.2f TB/s "
		 "through the L2 (read + written), %.1f TFLOP/s FP32 (FMA); SM clock %s MHz%s",
		 t->launches, t->seconds, t->sms_min, rp->gpu->sm_count, t->bytes / secs * 1e-12,
		 2 * t->fmas / secs * 1e-12, range0(clk, sizeof(clk), t->clock_min_mhz,
						    t->clock_max_mhz), extra);
	wrapped(f, 14, "load", buf);
}

static void print_sms(FILE *f, const char *label, const struct nt_stab_sm *v, int n, int limit)
{
	char buf[2048];
	size_t len = 0;

	if (!n)
		return;
	for (int k = 0; k < n && k < limit && len < sizeof(buf) - 128; k++) {
		len += snprintf(buf + len, sizeof(buf) - len, "%sSM %d %+.3f (", k ? ", " : "",
				v[k].sm, v[k].worst);
		if (v[k].maps == 1)
			len += snprintf(buf + len, sizeof(buf) - len, "map %d", v[k].worst_map + 1);
		else
			len += snprintf(buf + len, sizeof(buf) - len, "%d maps", v[k].maps);
		for (int p = 0, first = 1; p < NT_STAB_N_PHASES; p++)
			if (v[k].phases & 1u << p) {
				len += snprintf(buf + len, sizeof(buf) - len, "%s%s", first ? ", " : " + ",
						nt_stab_phase_name(p));
				first = 0;
			}
		len += snprintf(buf + len, sizeof(buf) - len, ")");
	}
	if (n > limit)
		snprintf(buf + len, sizeof(buf) - len, ", and %d more (--json lists them all)",
			 n - limit);
	wrapped(f, 14, label, buf);
}

void stab_print_summary(FILE *f, const struct stab_report *rp)
{
	const struct nt_stab_result *r = rp->res;
	char a[32], b[32], c[32], d[32], e[32], text[512];

	for (int i = 0; i < rp->n; i++)
		if (clock_varied(&rp->in[i])) {
			fprintf(f, "  * the SM clock differed by more than 1%% between the SMs of the "
				"map (--json: the range)\n");
			break;
		}
	if (r)
		fprintf(f, "\n  %-11s %4s %11s %12s %10s %7s %7s\n", "phase", "maps", "mean cycles",
			"SM clock MHz", "load MHz", "temp C", "power W");
	for (int p = 0; r && p < NT_STAB_N_PHASES; p++) {
		const struct nt_stab_phase_sum *ph = &r->phase[p];

		fprintf(f, "  %-11s %4d %11s %12s %10s %7s %7s\n", nt_stab_phase_name(p), ph->maps,
			num(a, sizeof(a), "%.3f", ph->mean),
			range0(b, sizeof(b), ph->clock_min, ph->clock_max),
			range0(c, sizeof(c), ph->load_clock_min, ph->load_clock_max),
			range0(d, sizeof(d), ph->temp_min, ph->temp_max),
			num(e, sizeof(e), "%.0f", ph->power_max));
	}
	if (r) {
		fprintf(f, "\n  %-11s %19s %17s %13s %8s %8s\n", "vs idle", "offset (cycles)", "scale",
			"max|d| (SM)", ">3x max", "min r");
		for (int p = 0; p < NT_STAB_N_PHASES; p++) {
			const struct nt_stab_phase_sum *ph = &r->phase[p];
			char off[48] = "-", sc[48] = "-", mx[32] = "-", rr[16];

			if (ph->compared) {
				snprintf(off, sizeof(off), "%+.3f .. %+.3f", tidy(ph->offset_min),
					 tidy(ph->offset_max));
				snprintf(sc, sizeof(sc), "%.4f .. %.4f", ph->scale_min, ph->scale_max);
				snprintf(mx, sizeof(mx), "%.3f (%d)", ph->max_abs, ph->max_sm);
			}
			snprintf(a, sizeof(a), "%d", ph->beyond_max);
			fprintf(f, "  %-11s %19s %17s %13s %8s %8s\n", nt_stab_phase_name(p), off, sc, mx,
				ph->compared ? a : "-", num(rr, sizeof(rr), "%.5f", ph->r_min));
		}
	}
	fputc('\n', f);
	print_load(f, rp);
	if (!r) {
		wrapped(f, 14, "verdict", rp->analysis_error ? rp->analysis_error : "no analysis");
		return;
	}
	if (r->busy) {
		snprintf(text, sizeof(text), "%d map%s left out: median noise above %.1f cycles "
			 "(other work on the GPU)", r->busy, r->busy > 1 ? "s" : "", NT_STAB_BUSY_NOISE);
		wrapped(f, 14, "busy", text);
	}
	print_sms(f, "moved", r->moved, r->n_moved, 16);
	print_sms(f, "isolated", r->glitch, r->n_glitch, 12);
	nt_stab_verdict_text(r, text, sizeof(text));
	wrapped(f, 14, "verdict", text);
}

static void json_range(struct nt_json *j, const char *lo_key, double lo, const char *hi_key,
		       double hi)
{
	nt_json_kv_double(j, lo_key, lo);
	nt_json_kv_double(j, hi_key, hi);
}

static void json_sms(struct nt_json *j, const char *key, const struct nt_stab_sm *v, int n)
{
	nt_json_key(j, key);
	nt_json_begin_array(j);
	for (int k = 0; k < n; k++) {
		nt_json_begin_object(j);
		nt_json_kv_int(j, "sm", v[k].sm);
		nt_json_kv_int(j, "maps", v[k].maps);
		nt_json_kv_double(j, "worst", v[k].worst);
		nt_json_kv_int(j, "worst_map", v[k].worst_map + 1);
		nt_json_key(j, "phases");
		nt_json_begin_array(j);
		for (int p = 0; p < NT_STAB_N_PHASES; p++)
			if (v[k].phases & 1u << p)
				nt_json_str(j, nt_stab_phase_name(p));
		nt_json_end_array(j);
		nt_json_end_object(j);
	}
	nt_json_end_array(j);
}

static void json_load(struct nt_json *j, const struct stab_report *rp)
{
	const struct nt_loadgen_info *l = rp->load;
	const struct stab_load_total *t = &rp->load_total;
	double secs = t->gpu_seconds > 0 ? t->gpu_seconds : t->seconds;

	nt_json_key(j, "load");
	nt_json_begin_object(j);
	nt_json_kv_int(j, "blocks", l ? l->blocks : 0);
	nt_json_kv_int(j, "blocks_per_sm", l ? l->blocks_per_sm : 0);
	nt_json_kv_int(j, "threads", l ? l->threads : 0);
	nt_json_kv_int(j, "max_sm_threads", l ? l->max_sm_threads : 0);
	nt_json_kv_int(j, "buffer_bytes", l ? l->bytes : 0);
	nt_json_kv_double(j, "launch_s", l ? l->launch_s : NAN);
	nt_json_kv_int(j, "launches", t->launches);
	nt_json_kv_double(j, "seconds", t->seconds);
	nt_json_kv_double(j, "kernel_seconds", t->gpu_seconds);
	nt_json_kv_double(j, "bytes", t->bytes);
	nt_json_kv_double(j, "fmas", t->fmas);
	nt_json_kv_double(j, "tbytes_per_s", secs > 0 ? t->bytes / secs * 1e-12 : NAN);
	nt_json_kv_double(j, "tflops", secs > 0 ? 2 * t->fmas / secs * 1e-12 : NAN);
	nt_json_kv_int(j, "sms_min", t->sms_min);
	json_range(j, "clock_min_mhz", t->clock_min_mhz, "clock_max_mhz", t->clock_max_mhz);
	nt_json_kv_double(j, "power_max_w", t->power_max_w);
	nt_json_kv_double(j, "temp_max_c", t->temp_max_c);
	nt_json_end_object(j);
}

static void json_map(struct nt_json *j, const struct stab_report *rp, int i)
{
	const struct nt_stab_input *in = &rp->in[i];
	const struct nt_stab_row *w = rp->res ? &rp->res->row[i] : NULL;

	nt_json_begin_object(j);
	nt_json_kv_int(j, "index", i + 1);
	nt_json_kv_str(j, "phase", nt_stab_phase_name(in->phase));
	nt_json_kv_double(j, "t", in->t);
	nt_json_kv_double(j, "sm_clock_mhz", in->m->sm_clock_mhz);
	json_range(j, "sm_clock_min_mhz", in->clock_lo_mhz, "sm_clock_max_mhz", in->clock_hi_mhz);
	nt_json_kv_double(j, "load_clock_mhz", in->load_mhz);
	nt_json_kv_double(j, "temp_c", in->temp_c);
	nt_json_kv_double(j, "power_w", in->power_w);
	if (w) {
		nt_json_kv_double(j, "mean", w->mean);
		nt_json_kv_double(j, "noise_median", w->noise_median);
		nt_json_kv_double(j, "noise_max", w->noise_max);
		nt_json_kv_bool(j, "busy", w->busy);
		nt_json_kv_bool(j, "in_reference", rp->in[i].phase == NT_STAB_IDLE_BEFORE && !w->busy);
		nt_json_kv_double(j, "offset", w->offset);
		nt_json_kv_double(j, "scale", w->scale);
		nt_json_kv_double(j, "intercept", w->intercept);
		nt_json_kv_double(j, "r", w->r);
		nt_json_kv_double(j, "max_abs", w->max_abs);
		nt_json_kv_int(j, "max_sm", w->max_sm);
		nt_json_kv_int(j, "beyond", w->beyond);
		nt_json_kv_double(j, "max_affine", w->max_affine);
		nt_json_kv_int(j, "max_affine_sm", w->max_affine_sm);
		nt_json_kv_int(j, "beyond_affine", w->beyond_affine);
	}
	nt_json_key(j, "chain");
	nt_json_double_array(j, in->m->chain, in->m->n_sm);
	nt_json_key(j, "noise");
	if (in->m->noise)
		nt_json_double_array(j, in->m->noise, in->m->n_sm);
	else
		nt_json_null(j);
	nt_json_end_object(j);
}

static void json_phase(struct nt_json *j, const struct nt_stab_phase_sum *ph, int p)
{
	nt_json_begin_object(j);
	nt_json_kv_str(j, "phase", nt_stab_phase_name(p));
	nt_json_kv_int(j, "maps", ph->maps);
	nt_json_kv_int(j, "busy", ph->busy);
	nt_json_kv_int(j, "compared", ph->compared);
	nt_json_kv_double(j, "mean", ph->mean);
	json_range(j, "clock_min_mhz", ph->clock_min, "clock_max_mhz", ph->clock_max);
	json_range(j, "load_clock_min_mhz", ph->load_clock_min, "load_clock_max_mhz",
		   ph->load_clock_max);
	json_range(j, "temp_min_c", ph->temp_min, "temp_max_c", ph->temp_max);
	nt_json_kv_double(j, "power_max_w", ph->power_max);
	json_range(j, "offset_min", ph->offset_min, "offset_max", ph->offset_max);
	json_range(j, "scale_min", ph->scale_min, "scale_max", ph->scale_max);
	nt_json_kv_double(j, "max_abs", ph->max_abs);
	nt_json_kv_int(j, "max_sm", ph->max_sm);
	nt_json_kv_int(j, "beyond_max", ph->beyond_max);
	nt_json_kv_double(j, "r_min", ph->r_min);
	nt_json_end_object(j);
}

void stab_json(struct nt_json *j, const struct stab_report *rp)
{
	const struct nt_stab_plan *p = rp->plan;
	const struct nt_stab_result *r = rp->res;
	time_t t = (time_t)rp->started;
	char when[32] = "", text[512];
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	nt_json_begin_object(j);
	nt_json_kv_str(j, "uuid", rp->gpu->uuid);
	nt_json_kv_str(j, "name", rp->gpu->name);
	nt_json_kv_int(j, "device", rp->device);
	nt_json_kv_int(j, "sm_count", rp->gpu->sm_count);
	nt_json_kv_double(j, "minutes", rp->minutes);
	nt_json_kv_str(j, "started_at", when);
	nt_json_kv_double(j, "seconds", rp->seconds);
	nt_json_kv_str(j, "command", rp->command);
	nt_json_kv_str(j, "host", rp->host);
	nt_json_kv_str(j, "tool_version", nt_version);
	nt_json_key(j, "plan");
	nt_json_begin_object(j);
	nt_json_kv_double(j, "idle_before_s", p->before_s);
	nt_json_kv_double(j, "load_s", p->load_s);
	nt_json_kv_double(j, "idle_after_s", p->after_s);
	nt_json_kv_double(j, "load_every_s", p->load_every_s);
	nt_json_kv_int(j, "maps", p->n);
	nt_json_end_object(j);
	nt_json_key(j, "criteria");
	nt_json_begin_object(j);
	nt_json_kv_double(j, "factor", NT_STAB_FACTOR);
	nt_json_kv_double(j, "min_floor", NT_STAB_MIN_FLOOR);
	nt_json_kv_double(j, "busy_noise", NT_STAB_BUSY_NOISE);
	nt_json_kv_int(j, "min_repeats", NT_STAB_MIN_REPEATS);
	nt_json_end_object(j);
	json_load(j, rp);
	nt_json_kv_str(j, "sensors_missing", rp->sensors_missing);
	nt_json_key(j, "maps");
	nt_json_begin_array(j);
	for (int i = 0; i < rp->n; i++)
		json_map(j, rp, i);
	nt_json_end_array(j);
	nt_json_key(j, "phases");
	nt_json_begin_array(j);
	for (int ph = 0; r && ph < NT_STAB_N_PHASES; ph++)
		json_phase(j, &r->phase[ph], ph);
	nt_json_end_array(j);
	nt_json_kv_str(j, "analysis_error", r ? NULL : rp->analysis_error);
	nt_json_kv_str(j, "verdict", r ? nt_stab_verdict_name(r->verdict) : NULL);
	if (r)
		nt_stab_verdict_text(r, text, sizeof(text));
	nt_json_kv_str(j, "verdict_text", r ? text : NULL);
	nt_json_kv_int(j, "reference_maps", r ? r->ref_maps : 0);
	nt_json_kv_int(j, "compared", r ? r->compared : 0);
	nt_json_kv_int(j, "repeats", r ? r->repeats : 0);
	nt_json_kv_int(j, "moved_before_scale", r ? r->n_moved_offset : 0);
	json_sms(j, "moved", r ? r->moved : NULL, r ? r->n_moved : 0);
	json_sms(j, "isolated", r ? r->glitch : NULL, r ? r->n_glitch : 0);
	nt_json_end_object(j);
}
