/*
 * outfile.h - an output file that appears whole or not at all.
 *
 * nucatrace never overwrites a file and never leaves part of one behind.
 * An output is written under a temporary name in its own folder
 * (".<name>.<pid>-<n>.tmp", so that the rename stays on one file
 * system), and takes its name only when complete:
 *
 *	struct nt_outfile o;
 *
 *	if (nt_outfile_open(&o, path, err))	-1: path exists, no such folder ...
 *		return -1;
 *	... write to o.f ...
 *	if (nt_outfile_commit(&o, err))		-1: a write failed (disk full ...),
 *		return -1;			or path appeared meanwhile
 *
 * Open fails at once when path exists (the message ends "(nucatrace does
 * not overwrite files)"), so that a command can open its outputs before
 * its work and fail fast.  Commit flushes, syncs and closes the file and
 * renames it to path without replacing anything there (renameat2's
 * RENAME_NOREPLACE, else link(2)); on any failure the temporary is
 * removed and the message names path and the reason.  nt_outfile_abort()
 * removes an output not wanted after all.  Should the process exit
 * before either (die()), an atexit handler removes every temporary still
 * open; only a process killed by a signal leaves one behind.
 *
 * The file is made with mode 0666 less the umask, as fopen(3) would.
 * A struct nt_outfile stays where it is from open to commit or abort (the
 * list of open outputs points to it); one thread: the list is not
 * locked.
 */
#ifndef NT_OUTFILE_H
#define NT_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

#include "util/err.h"

struct nt_outfile {
	FILE *f;		/* write here */
	char *path;		/* the name it gets */
	char *tmp;		/* the name it has until then */
	int fd;
	int error;		/* errno of the first write that failed */
	struct nt_outfile *next;	/* open outputs, for the atexit handler */
};

int nt_outfile_open(struct nt_outfile *o, const char *path, struct nt_err *err);
int nt_outfile_commit(struct nt_outfile *o, struct nt_err *err);
/* Close and remove; nothing happens on an output not open (zeroed, or
 * already committed or aborted). */
void nt_outfile_abort(struct nt_outfile *o);

/* After the writer: commit o when it succeeded (failed = 0), else
 * remove it with "cannot write '<path>'" and the stream's error (a full
 * disk ...) when it had one. */
int nt_outfile_finish(struct nt_outfile *o, int failed, struct nt_err *err);

/* An output written in one go: open path, write(f, arg) (0, or -1 when
 * it failed), finish. */
int nt_outfile_write(const char *path, int (*write)(FILE *f, const void *arg), const void *arg,
		     struct nt_err *err);

/* Make folder dir and any parents it lacks (mode, less the umask); 0
 * when it exists as a folder afterwards, else -1 naming what is in the
 * way ("cannot create folder 'a/b': Permission denied", "'a' is not a
 * folder"). */
int nt_mkdir_p(const char *dir, mode_t mode, struct nt_err *err);

#endif
