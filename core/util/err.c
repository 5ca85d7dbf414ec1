#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>

int nt_err_set(struct nt_err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}
