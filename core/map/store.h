/*
 * store.h - the map store: every calibration ever made, in one SQLite file.
 *
 * `nucatrace calibrate` adds a map per GPU per run; nothing is ever
 * overwritten, so the history of a GPU stays queryable.  Readers ask for
 * one calibration by id, or for the latest of a GPU (by uuid).
 *
 * Lifecycle: nt_store_open() -> nt_store_add/_get/_latest/_list ... ->
 * nt_store_close().  One struct nt_store per thread.  Several processes
 * may write the same file: writers wait up to NT_STORE_BUSY_MS for each
 * other.
 *
 * The file is ours when PRAGMA application_id is NT_STORE_APP_ID
 * ('NTMP'); PRAGMA user_version is the schema version.  Opening a file
 * that is not SQLite, belongs to another application, or has a newer
 * schema fails with a message naming it, and leaves it untouched: it is
 * looked at read-only before it is opened for writing.  A store of an
 * older schema is read as it is (version 1: no map has a probe part)
 * and upgraded (the tables added since created, user_version set) only
 * by the first nt_store_add of a map that needs them, in that add's
 * transaction: an older nucatrace sharing the store (a job's preloaded
 * library) refuses a newer schema, so it is not raised for nothing.
 *
 * Schema (version 2; store_tables.def has the statements, each with the
 * version that added it; version 1 lacked probe and probe_value).  NAN
 * values are stored as NULL:
 *
 *   calib(id INTEGER PRIMARY KEY,
 *         uuid, name, sm_count, cc_major, cc_minor, l2_bytes, driver,
 *         cuda_version, clock_khz,                       -- struct nt_gpu
 *         chain_bytes, chain_loads, chain_reps, line_loads, line_reps,
 *         footprint_bytes, statistic,                    -- nt_map_params
 *         created_at (unix s), tool_version, host, command,
 *         sm_clock_mhz REAL,                             -- provenance
 *         n_sm, n_line, parts)   -- array sizes, enum nt_map_parts bits
 *   sm_value(calib_id, sm, chain REAL, noise REAL)       -- n_sm rows
 *   line_offset(calib_id, line, byte_offset)             -- n_line rows
 *   line_value(calib_id, sm, line, latency REAL, ft_first REAL,
 *              ft_repeat REAL)  -- n_sm * n_line rows when a line part
 *                                  is present, else none
 *   probe(calib_id, probe, threads, iters, blocks, body_native REAL,
 *         body_traced REAL)     -- n_probe rows (probe 0..n_probe-1)
 *                                  when parts has NT_MAP_PROBE, else none
 *   probe_value(calib_id, probe, sm, cost REAL)  -- n_probe * n_sm rows
 *   index calib_by_gpu ON calib(uuid, created_at)
 *
 * e.g. the chain map of the latest calibration of every GPU:
 *   SELECT c.uuid, v.sm, v.chain FROM calib c JOIN sm_value v
 *     ON v.calib_id = c.id WHERE c.id IN (SELECT max(id) FROM calib GROUP BY uuid);
 */
#ifndef NT_STORE_H
#define NT_STORE_H

#include "util/err.h"
#include "map/map.h"

#include <stddef.h>
#include <stdint.h>

#define NT_STORE_APP_ID 0x4E544D50	/* 'NTMP' */
#define NT_STORE_SCHEMA 2
#define NT_STORE_BUSY_MS 10000

struct nt_store;

/* One calibration, as nt_store_list() shows it. */
struct nt_store_entry {
	int64_t id;
	char uuid[NT_UUID_LEN];
	char name[96];
	int sm_count;
	int64_t created_at;
	unsigned parts;		/* enum nt_map_parts */
	int n_line;
	double sm_clock_mhz;	/* NAN when unknown */
	char host[64];
	char tool_version[24];
};

/* $NUCATRACE_STORE, else $XDG_DATA_HOME/nucatrace/maps.db, else
 * $HOME/.local/share/nucatrace/maps.db (empty variables count as unset).
 * Returns buf, or NULL when none is set or buf is too small. */
const char *nt_store_default_path(char *buf, size_t len);

/* Open the store at path.  create = 1 makes it (and missing parent
 * directories, mode 0700) when missing; create = 0 fails on a missing
 * file.  An empty file (0 bytes, or an SQLite database holding nothing)
 * is made a store when create = 1 and refused, untouched, when create =
 * 0.  0 and *out set, or -1. */
int nt_store_open(const char *path, int create, struct nt_store **out, struct nt_err *err);

/* nt_store_open() of path, or of nt_store_default_path() when path is
 * NULL: what every front end does with its --store option (the CLI) or
 * $NUCATRACE_STORE (the interposer).  -1 with "no store path: ..." when
 * path is NULL and no default is set, else as nt_store_open().  The path
 * used is nt_store_path(*out). */
int nt_store_open_default(const char *path, int create, struct nt_store **out, struct nt_err *err);
void nt_store_close(struct nt_store *s);

/* Calibrations that would race (the ranks of one job each starting
 * `nucatrace run` on one machine, each finding a GPU without a map) take
 * turns: an exclusive flock(2) on "<store>.calibrating".  wait = 0 fails
 * at once when another process holds it.  A descriptor for
 * nt_store_unlock(), or -1 with err set. */
int nt_store_lock(const struct nt_store *s, int wait, struct nt_err *err);
void nt_store_unlock(int fd);
const char *nt_store_path(const struct nt_store *s);

/* Add map as a new calibration, in one transaction; its id in *id (may
 * be NULL).  The map must satisfy map.h's invariants. */
int nt_store_add(struct nt_store *s, const struct nt_map *m, int64_t *id, struct nt_err *err);

/* The same, unless the store already holds m (nt_store_find_same): then
 * 1 with that calibration's id in *id, m not added.  The check and the
 * insert are one transaction: of several processes adding one map at
 * once, one adds it.  0 when added, -1 on error. */
int nt_store_add_new(struct nt_store *s, const struct nt_map *m, int64_t *id, struct nt_err *err);

/* Read calibration id back: a new map, identical to the one added, for
 * the caller to nt_map_free().  A calibration edited behind nucatrace's
 * back (a row missing, sm_count != n_sm, values beyond map.h's limits) is
 * "damaged": -1 with a message naming the store, the id and the fault. */
int nt_store_get(struct nt_store *s, int64_t id, struct nt_map **out, struct nt_err *err);

/* The most recent calibration (latest created_at, then highest id) of
 * the GPU uuid, or of any GPU when uuid is NULL.  -1 when there is none. */
int nt_store_latest(struct nt_store *s, const char *uuid, struct nt_map **out, struct nt_err *err);

/* The stored GPU UUID that prefix names: prefix itself when a GPU of that
 * UUID is stored, else the one stored UUID that starts with it
 * ("GPU-af5e0b1a").  Copied to uuid; -1 when none does, or when several
 * do (the message lists them). */
int nt_store_resolve_uuid(struct nt_store *s, const char *prefix, char *uuid, size_t len,
			  struct nt_err *err);

/* Whether the store already holds m: a calibration of the same GPU
 * (uuid), created_at and host that has every part m has (a copy that
 * went through CSV, without the probe part, does not hold a JSON map's
 * probe part).  1 with its id in *id, 0, or -1 on a store error. */
int nt_store_find_same(struct nt_store *s, const struct nt_map *m, int64_t *id, struct nt_err *err);

/* Call cb for each calibration, oldest id first.  A nonzero return from
 * cb stops the walk and is returned; else 0, or -1 on a store error. */
int nt_store_list(struct nt_store *s, int (*cb)(const struct nt_store_entry *e, void *arg),
		  void *arg, struct nt_err *err);

/* Number of calibrations, of GPU uuid or of all when uuid is NULL. */
int nt_store_count(struct nt_store *s, const char *uuid, int64_t *n, struct nt_err *err);

#endif
