/*
 * For the injection libraries of the GPU tests (subcost.c, graphlog.c):
 * load the Compute Sanitizer ($NUCATRACE_SANITIZER_LIB, else the
 * toolkit's libsanitizer-public.so) and subscribe cb, nothing enabled yet.
 */
#ifndef NT_TEST_SUBSCRIBE_H
#define NT_TEST_SUBSCRIBE_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "interposer/blocks/sanitizer_abi.h"

typedef nt_san_result (*subscribe_fn)(nt_san_subscriber *, nt_san_callback, void *);
typedef nt_san_result (*domain_fn)(uint32_t, nt_san_subscriber, nt_san_domain);
typedef nt_san_result (*callback_fn)(uint32_t, nt_san_subscriber, nt_san_domain, uint32_t);

struct test_san {
	nt_san_subscriber sub;
	domain_fn domain;	/* sanitizerEnableDomain */
	callback_fn callback;	/* sanitizerEnableCallback */
};

/* 0, or -1 with the reason on stderr, prefixed by tool. */
static int test_subscribe(const char *tool, nt_san_callback cb, struct test_san *s)
{
	const char *lib = getenv("NUCATRACE_SANITIZER_LIB");
	subscribe_fn subscribe;
	void *h = dlopen(lib ? lib : "/usr/local/cuda/compute-sanitizer/libsanitizer-public.so",
			 RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "%s: %s\n", tool, dlerror());
		return -1;
	}
	subscribe = (subscribe_fn)dlsym(h, "sanitizerSubscribe");
	s->domain = (domain_fn)dlsym(h, "sanitizerEnableDomain");
	s->callback = (callback_fn)dlsym(h, "sanitizerEnableCallback");
	if (!subscribe || !s->domain || !s->callback || subscribe(&s->sub, cb, NULL)) {
		fprintf(stderr, "%s: cannot subscribe\n", tool);
		return -1;
	}
	return 0;
}

#endif
