/*
 * mapio.h - one map in a file, for sharing: JSON and CSV.
 *
 * `nucatrace map export` writes a stored map with these and `map import`
 * reads one back into a store.  Both formats carry every field of the
 * map and every part but the probe cost, which only JSON (and the store)
 * carries, and doubles are written with the fewest digits that read back
 * exactly, so map -> file -> map gives the same map (NAN cells included;
 * the JSON form cannot spell infinities and writes them, like NAN, as
 * null).  Readers validate everything, the limits of map.h included
 * (SMs, lines, latencies, created_at), and fail with a message naming the
 * file and the offending key (JSON) or line (CSV); they never print.
 *
 * JSON (mapio_json.c), one object:
 *   {"format": "nucatrace-map", "version": 1,
 *    "gpu": {"uuid", "name", "sm_count", "cc": "9.0", "l2_bytes", "driver",
 *            "cuda_version", "clock_khz"},
 *    "params": {"chain_bytes", "chain_loads", "chain_reps", "line_loads",
 *               "line_reps", "footprint_bytes", "statistic"},
 *    "created_at": "2025-11-30T00:10:00Z", "created_at_unix": 1764461400,
 *    "tool_version", "host", "command", "sm_clock_mhz": number or null,
 *    "chain": [n_sm numbers or null],
 *    "noise": [n_sm] (optional),
 *    "lines": {"offset": [n_line integers],
 *              "latency": [n_sm rows of n_line] (optional)} (optional),
 *    "first_touch": {"first": [[...]], "repeat": [[...]]} (optional),
 *    "probe": [{"threads", "iters", "blocks", "body_native": number or
 *               null, "body_traced": number or null, "cost": [n_sm
 *               numbers or null]}, ...] (optional, 1..NT_MAP_MAX_PROBES
 *               objects, every key required)}
 * gpu.sm_count must equal the length of "chain"; "lines" with "offset"
 * is required by "latency" and "first_touch".  Unknown keys are ignored:
 * an optional key added later (as "probe" was) keeps the version, and a
 * nucatrace that predates it reads the file without that part.  The
 * reader uses SQLite's JSON functions on an in-memory database.
 *
 * CSV (mapio_csv.c): `# key=value` header lines (format=nucatrace-map-csv,
 * version=1, every scalar field of mapfields.def by its key, n_sm,
 * n_line, parts=noise,lines,first_touch; "\\", newline and CR in values
 * are written \\, \n, \r), then the header `part,sm,line,value` and one
 * row per value: part is chain|noise (line empty), offset (sm empty,
 * value in bytes), line|first|repeat (the line matrix, the first-touch
 * matrices).  An empty value is NAN.  The probe part is left out: a map
 * written as CSV reads back without it.
 */
#ifndef NT_MAPIO_H
#define NT_MAPIO_H

#include "util/err.h"
#include "map/map.h"

#include <stdio.h>

#define NT_MAP_FORMAT "nucatrace-map"
#define NT_MAP_FORMAT_VERSION 1

/* 0, or -1 when m breaks map.h's invariants or writing failed. */
int nt_map_write_json(FILE *f, const struct nt_map *m, int pretty);
int nt_map_write_csv(FILE *f, const struct nt_map *m);

/* Read the map in path: a new map for the caller to nt_map_free(). */
int nt_map_read_json(const char *path, struct nt_map **out, struct nt_err *err);
int nt_map_read_csv(const char *path, struct nt_map **out, struct nt_err *err);

/* nt_map_read_json() of a JSON text in memory (a trace keeps its maps
 * so); messages name it as name_for_errors. */
int nt_map_read_json_text(const char *text, const char *name_for_errors, struct nt_map **out,
			  struct nt_err *err);

#endif
