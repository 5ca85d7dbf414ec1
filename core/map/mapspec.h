/*
 * mapspec.h - a map as a command line names it: a map file of either
 * format, or a SPEC.
 *
 * A SPEC is a map file (JSON or CSV, as `map export` writes them; a SPEC
 * is a file only when it holds a '/' or ends in .json or .csv, so that a
 * file called "latest" or "1" in the current folder cannot shadow the
 * store), a calibration id in the store, a GPU UUID or a unique start of
 * one such as "GPU-af5e0b1a" (that GPU's latest calibration), or "latest"
 * (the newest calibration of any GPU).  Every command that takes a map
 * (map show/fit/diff/export, fingerprint, localize, report --map) reads
 * it through nt_map_load_spec(); nothing here prints or exits.
 */
#ifndef NT_MAPSPEC_H
#define NT_MAPSPEC_H

#include "util/err.h"
#include "map/map.h"

/* The map spec names (NULL: "latest"), from the file or from the store
 * at store_path (NULL: the default store, store.h): a new map for the
 * caller to nt_map_free().  -1 with a message naming the SPEC, the file
 * or the store when there is no such map, or the SPEC is empty. */
int nt_map_load_spec(const char *spec, const char *store_path, struct nt_map **out, struct nt_err *err);

/* The map in the file at path, JSON when its first non-blank byte is
 * '{', else CSV (mapio.h). */
int nt_map_read_file(const char *path, struct nt_map **out, struct nt_err *err);

#endif
