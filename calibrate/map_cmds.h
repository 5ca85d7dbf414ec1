/*
 * map_cmds.h - what the `nucatrace map` subcommands share.
 *
 * A map on the command line is a SPEC: a path to a map file (JSON or
 * CSV, as `map export` writes), a calibration id in the store, a GPU
 * UUID (its latest calibration), or "latest" (the newest of any GPU).
 */
#ifndef NT_MAP_CMDS_H
#define NT_MAP_CMDS_H

#include "map.h"

/* Load the map a SPEC names; dies with a clear message when it cannot.
 * store_path may be NULL (the default store). */
struct nt_map *map_load_spec(const char *spec, const char *store_path);

int map_fit(int argc, char **argv, const char *store_path);
int map_diff(int argc, char **argv, const char *store_path);

#endif
