/* The Compute Sanitizer library, loaded at run time (san.h). */
#include "san.h"

#include "gpu/cudrv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nt_san nt_san = { .lock = PTHREAD_MUTEX_INITIALIZER };

const char *nt_san_error(nt_san_result r)
{
	static _Thread_local char buf[32];
	const char *s = NULL;

	if (nt_san.sanitizerGetResultString && !nt_san.sanitizerGetResultString(r, &s) && s)
		return s;
	snprintf(buf, sizeof(buf), "sanitizer error %d", (int)r);
	return buf;
}

/* $NUCATRACE_SANITIZER_LIB, else the toolkit's usual places. */
static void *load_library(char *tried, size_t len)
{
	static const char *const dirs[] = { "$CUDA_HOME", "$CUDA_PATH", "/usr/local/cuda", "/opt/cuda" };
	const char *env = getenv("NUCATRACE_SANITIZER_LIB");
	char path[4096];
	size_t used = 0;
	void *h;

	if (env && *env) {
		snprintf(tried, len, "%s", env);
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	}
	tried[0] = '\0';
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		const char *dir = dirs[i][0] == '$' ? getenv(dirs[i] + 1) : dirs[i];

		if (!dir || !*dir)
			continue;
		snprintf(path, sizeof(path), "%s/compute-sanitizer/libsanitizer-public.so", dir);
		if (strstr(tried, path))
			continue;
		if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
		if (used < len)
			used += snprintf(tried + used, len - used, "%s%s", used ? ", " : "", path);
	}
	return NULL;
}

int nt_san_load(struct nt_err *err)
{
	char tried[1024];

	nt_san.lib = load_library(tried, sizeof(tried));
	if (!nt_san.lib)
		return nt_err_set(err, "no Compute Sanitizer library (tried %s)", tried);
#define NT_SAN(name, params)                                                          \
	*(void **)&nt_san.name = dlsym(nt_san.lib, #name);                            \
	if (!nt_san.name)                                                             \
		return nt_err_set(err, "the Compute Sanitizer library lacks %s", #name);
#include "sanitizer.def"
#undef NT_SAN
	return 0;
}

static struct nt_cuda cu;
static int cu_bound;

/* At start (inside cuInit): bound, not initialised again; never from a
 * launch callback, where another thread could wait on it. */
void nt_san_bind_cuda(void)
{
	cu_bound = nt_cuda_bind(&cu, NULL) == 0;
}

const struct nt_cuda *nt_san_cuda(void)
{
	return cu_bound ? &cu : NULL;
}

int nt_san_relax(CUstreamCaptureMode *saved)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;

	if (!cu_bound || cu.cuThreadExchangeStreamCaptureMode(&m))
		return 0;
	*saved = m;
	return 1;
}

void nt_san_unrelax(CUstreamCaptureMode saved)
{
	cu.cuThreadExchangeStreamCaptureMode(&saved);
}
