/*
 * map_cmds.h - what the `nucatrace map` subcommands share (and the other
 * calibrate/ commands that take a map on the command line).
 *
 * A map on the command line is a SPEC (core/map/mapspec.h says what one
 * can be).
 */
#ifndef NT_MAP_CMDS_H
#define NT_MAP_CMDS_H

#include "map/map.h"

/* nt_map_load_spec(), dying with its message when it fails. */
struct nt_map *map_load_spec(const char *spec, const char *store_path);

/* Options every map subcommand takes, at the end of its option table;
 * its optstring starts with ':' and it sets opterr = 0. */
#define MAP_COMMON_OPTIONS \
	{ "help", no_argument, NULL, 'h' }, { "store", required_argument, NULL, 'S' }

/* The getopt_long() results a subcommand does not handle itself: --help
 * prints sub_usage (and what a SPEC is) and returns 1, for the caller to
 * return 0; --store sets *store_path and returns 0; anything else is a
 * usage error naming the option (cmd is "map show" ...). */
int map_common_option(int o, const char *sub_usage, const char *cmd, char **argv,
		      const char **store_path);

/* m as pretty JSON in a new file at path (never over an existing one);
 * 0, or -1 after error() has said why. */
int map_write_new_json(const char *path, const struct nt_map *m);

int map_fit(int argc, char **argv, const char *store_path);
int map_diff(int argc, char **argv, const char *store_path);

#endif
