#include "util/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangler)(const char *, char *, size_t *, int *);

static demangler fn;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The program's own libstdc++ first (a Python process loads it
 * privately, so RTLD_DEFAULT may not see it), then one of our own. */
static void find(void)
{
	void *h;

	*(void **)&fn = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (fn)
		return;
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&fn = dlsym(h, "__cxa_demangle");
}

char *nt_demangle(const char *mangled)
{
	int status = -1;
	char *out;

	if (!mangled || strncmp(mangled, "_Z", 2))
		return NULL;
	pthread_once(&once, find);
	if (!fn)
		return NULL;
	out = fn(mangled, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
}
