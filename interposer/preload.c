/*
 * libnucatrace.so entry points.  The CUDA driver calls
 * InitializeInjection() from cuInit() in a process whose
 * CUDA_INJECTION64_PATH names this library; that is where tracing
 * starts, once.  Loaded by LD_PRELOAD, the constructor only points
 * CUDA_INJECTION64_PATH at this library (when nothing else is there) and
 * waits: processes that never initialise CUDA (the shell, tools and
 * helpers around a job) start no backend, which cost them 3-6 ms each
 * (docs/results/2026-12-01-gpu-suites.md).  When CUDA_INJECTION64_PATH
 * already names another library, another CUDA tool is attached: warn and
 * step aside.  When this library's own path cannot be found, start at
 * once, as a fallback.  Any failure warns once and leaves the program
 * alone: its results, output and exit code never change.
 *
 * Settings come from the environment (nucatrace run sets them): config.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/auxv.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "collector.h"
#include "config.h"
#include "trace/sampling.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct nt_backend *backend;
static pid_t started_in;	/* the process the backend started in */

static const char *get_env(const char *name)
{
	return getenv(name);
}

static void warn_setting(const char *msg)
{
	nt_warn("%s", msg);
}

/* Also in a child after fork(): the collector gave it a trace of its own. */
static void at_exit(void)
{
	static int done;
	int saved = errno;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
		return;
	/* Not in a fork child: it cannot use CUDA, and a flush of CUPTI's
	 * copied state could wait for a lock held at the fork. */
	if (backend && backend->stop && getpid() == started_in)
		backend->stop();
	nt_collector_stop();
	errno = saved;
}

/* Start one backend; 0, or -1 with the reason in *err. */
static int try_backend(const struct nt_backend *b, const struct nt_config *cfg, struct nt_err *err)
{
	if (nt_collector_start(cfg, b->name, err))
		return -1;
	if (b->start(cfg, err)) {
		nt_collector_stop();
		return -1;
	}
	backend = b;
	started_in = getpid();
	return 0;
}

static void init(void)
{
	struct nt_err err, err2;
	struct nt_config cfg;

	/* A set-user-ID or set-group-ID program: its caller's environment
	 * must not choose libraries to load or files to write. */
	if (getauxval(AT_SECURE))
		return;
	nt_config_read(&cfg, get_env, warn_setting);
	if (!strcmp(cfg.mode, "off"))
		return;
	{
		struct nt_sampling *sp;

		if (nt_sampling_parse(cfg.sampling, &sp, &err)) {
			nt_warn("%s; not tracing", err.msg);
			return;
		}
		nt_sampling_free(sp);
	}
	if (!strcmp(cfg.mode, "blocks") || !strcmp(cfg.mode, "kernels")) {
		if (try_backend(!strcmp(cfg.mode, "blocks") ? &nt_backend_blocks : &nt_backend_kernels,
				&cfg, &err)) {
			nt_warn("%s; not tracing", err.msg);
			return;
		}
	} else if (!strcmp(cfg.mode, "auto")) {
		/* blocks where the Compute Sanitizer is, else kernels; not
		 * beside another tool attached to the Sanitizer */
		if (try_backend(&nt_backend_blocks, &cfg, &err) && strstr(err.msg, NT_ANOTHER_TOOL)) {
			nt_warn("blocks mode: %s; not tracing", err.msg);
			return;
		}
		if (!backend && try_backend(&nt_backend_kernels, &cfg, &err2)) {
			nt_warn("blocks mode: %s; kernels mode: %s; not tracing", err.msg, err2.msg);
			return;
		}
		if (backend == &nt_backend_kernels)
			nt_warn("blocks mode: %s; recording kernels only (kernels mode)", err.msg);
	} else {
		nt_warn("NUCATRACE_MODE '%s' is not blocks, kernels, auto or off; not tracing",
			cfg.mode);
		return;
	}
	/* The early hook runs while the CUDA driver is still up; this one
	 * is the fallback for programs that never got that far. */
	nt_collector_exit_hook(at_exit);
	atexit(at_exit);
}

/* Does CUDA_INJECTION64_PATH's value name this library?  The same file,
 * or another copy of libnucatrace.so (an installed one beside a build):
 * the driver then loads that copy, which traces. */
static int names_us(const char *inj, const char *self)
{
	struct stat a, b;
	char copy[PATH_MAX];

	if (!stat(inj, &a) && !stat(self, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return 1;
	snprintf(copy, sizeof(copy), "%s", inj);
	return !strcmp(basename(copy), "libnucatrace.so");
}

/* errno is the program's: C promises it is 0 when main starts. */
__attribute__((constructor)) static void on_load(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH"), *mode = getenv("NUCATRACE_MODE");
	char self[PATH_MAX];
	int saved = errno;
	Dl_info info;

	if ((mode && !strcmp(mode, "off")) || getauxval(AT_SECURE))
		goto out;
	/* An absolute path: the program may change folders before cuInit. */
	if (!dladdr((void *)on_load, &info) || !info.dli_fname || !realpath(info.dli_fname, self)) {
		pthread_once(&once, init);	/* cannot name ourselves to the driver */
	} else if (!inj || !*inj) {
		if (setenv("CUDA_INJECTION64_PATH", self, 1))
			pthread_once(&once, init);
	} else if (!names_us(inj, self)) {
		nt_warn("another CUDA tool is attached (CUDA_INJECTION64_PATH=%s); not tracing", inj);
	}
out:
	errno = saved;
}

/* The CUDA driver calls this when CUDA_INJECTION64_PATH names us. */
__attribute__((visibility("default"))) int InitializeInjection(void);
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	int saved = errno;

	pthread_once(&once, init);
	errno = saved;
	return 1;
}
