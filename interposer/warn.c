/* Warnings, once per message site (warn.h). */
#include "warn.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_SITES 16

void nt_warn(const char *fmt, ...)
{
	static const char *seen[MAX_SITES];
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int nseen;
	int i, fresh = 0;
	va_list ap;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nseen && seen[i] != fmt; i++)
		;
	if (i == nseen && nseen < MAX_SITES) {
		seen[nseen++] = fmt;
		fresh = 1;
	}
	pthread_mutex_unlock(&lock);
	if (!fresh || getenv("NUCATRACE_QUIET"))
		return;
	va_start(ap, fmt);
	fputs("nucatrace: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
