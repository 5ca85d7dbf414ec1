/*
 * infile.h - opening an input that is a file.
 *
 * A path given to nucatrace may name a FIFO (open(2) would wait for a
 * writer forever), a device (/dev/zero never ends) or a folder.  Every
 * reader of maps, traces and stores takes only regular files: it opens
 * them with nt_infile_open(), which never blocks and refuses anything
 * else, or, when SQLite opens the file by its name, asks
 * nt_infile_check() first.
 */
#ifndef NT_INFILE_H
#define NT_INFILE_H

#include <stdio.h>

#include "util/err.h"

/* fopen(path, "r") of a regular file: NULL with "cannot open <what>
 * '<path>': <why>" (what: "trace", "map store" ...; NULL: none) when it
 * is missing, unreadable or not a regular file ("it is a FIFO"). */
FILE *nt_infile_open(const char *path, const char *what, struct nt_err *err);

/* The same checks without opening: 0 when path is a regular file. */
int nt_infile_check(const char *path, const char *what, struct nt_err *err);

#endif
