/* Warnings, once per message site (warn.h). */
#include "warn.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SITES 16

/* A site is its format, or for "%s" (many sites pass their message
 * whole) the message itself, so that one such warning does not silence
 * every later one. */
struct site {
	const char *fmt;
	char msg[160];
};

void nt_warn(const char *fmt, ...)
{
	static struct site seen[MAX_SITES];
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int nseen, quiet = -1;
	struct nt_stderr_guard g;
	char msg[1024] = "";
	int i, fresh = 0, whole = !strcmp(fmt, "%s");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&lock);
	if (quiet < 0)	/* the first warning comes from the program's thread */
		quiet = getenv("NUCATRACE_QUIET") != NULL;
	for (i = 0; i < nseen && (seen[i].fmt != fmt || (whole && strncmp(seen[i].msg, msg, sizeof(seen[i].msg) - 1)));
	     i++)
		;
	if (i == nseen && nseen < MAX_SITES) {
		seen[nseen].fmt = fmt;
		memcpy(seen[nseen].msg, msg, sizeof(seen[nseen].msg) - 1);	/* zero-filled: ends */
		nseen++;
		fresh = 1;
	}
	pthread_mutex_unlock(&lock);
	if (!fresh || quiet)
		return;
	nt_stderr_guard_begin(&g);
	fprintf(stderr, "nucatrace: warning: %s\n", msg);
	nt_stderr_guard_end(&g, 0);
}

static void ours(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGPIPE);
	sigaddset(s, SIGXFSZ);
}

void nt_stderr_guard_begin(struct nt_stderr_guard *g)
{
	sigset_t set, pending;

	ours(&set);
	pthread_sigmask(SIG_BLOCK, &set, &g->mask);
	g->pending_pipe = g->pending_fsz = 1;	/* unknown: leave them */
	if (!sigpending(&pending)) {
		g->pending_pipe = sigismember(&pending, SIGPIPE);
		g->pending_fsz = sigismember(&pending, SIGXFSZ);
	}
	g->error = ferror(stderr);
}

/* Take sig if it is pending now (raised by our writes). */
static void take(int sig)
{
	sigset_t set, pending;

	sigemptyset(&set);
	sigaddset(&set, sig);
	if (!sigpending(&pending) && sigismember(&pending, sig))
		sigtimedwait(&set, NULL, &(struct timespec){ 0, 0 });
}

void nt_stderr_guard_end(struct nt_stderr_guard *g, int files_failed)
{
	fflush(stderr);
	/* what our writes raised is taken, not delivered: it would end
	 * the program with another exit status */
	if (!g->pending_pipe && ferror(stderr) && !g->error)
		take(SIGPIPE);
	if (!g->pending_fsz && files_failed)
		take(SIGXFSZ);
	if (!g->error)
		clearerr(stderr);
	pthread_sigmask(SIG_SETMASK, &g->mask, NULL);
}
