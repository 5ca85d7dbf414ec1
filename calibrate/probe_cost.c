/* calibrate's probe-cost stage (probe_cost.h). */
#include "probe_cost.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/probecost.h"
#include "gpu/probecost.h"
#include "trace/trace.h"
#include "usage.h"
#include "util/clock.h"
#include "util/library.h"

#define BODIES "bodies.bin"
#define TRACE "probe-cost.sqlite"
#define STDERR "stderr.txt"

/* dir/name into path (dir is short: calib_probe_cost makes it so). */
static void in_dir(char *path, const char *dir, const char *name)
{
	if (snprintf(path, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		path[0] = '\0';
}

static void free_bodies(struct nt_probe_body **b, int n)
{
	for (int i = 0; i < n; i++)
		free(b[i]), b[i] = NULL;
}

int calib_probe_cost_child(struct nt_cuda *cu, int d, const char *path)
{
	struct nt_map_probe cfg[NT_MAP_MAX_PROBES];
	struct nt_probe_body *bodies[NT_MAP_MAX_PROBES] = { 0 };
	struct nt_err err;
	int n_sm, n, fd, ok = 1;
	CUdevice dev;
	FILE *f;

	if (cu->cuDeviceGet(&dev, d) || cu->cuDeviceGetAttribute(&n_sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
		return error("device %d: cannot read its SM count", d);
	n = nt_probe_cost_configs(cfg, n_sm);
	if (nt_probe_cost_run(cu, d, cfg, n, bodies, &err))
		return error("device %d: %s", d, err.msg);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "wb"))) {
		free_bodies(bodies, n);
		return error("cannot create '%s': %s", path, strerror(errno));
	}
	for (int i = 0; i < n; i++)
		ok &= fwrite(bodies[i], sizeof(*bodies[i]), cfg[i].blocks, f) == (size_t)cfg[i].blocks;
	ok &= !fclose(f);
	free_bodies(bodies, n);
	return ok ? 0 : error("cannot write '%s'", path);
}

/* The bodies the child wrote to dir/BODIES, sized by cfg. */
static int read_bodies(const char *dir, const struct nt_map_probe *cfg, int n, struct nt_probe_body **b)
{
	char path[PATH_MAX];
	FILE *f;
	int ok = 1;

	in_dir(path, dir, BODIES);
	if (!(f = fopen(path, "rb"))) {
		warning("probe cost not measured: the traced run left no '%s': %s", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n && ok; i++)
		ok = (b[i] = malloc((size_t)cfg[i].blocks * sizeof(*b[i]))) &&
		     fread(b[i], sizeof(*b[i]), cfg[i].blocks, f) == (size_t)cfg[i].blocks;
	ok &= fgetc(f) == EOF;
	fclose(f);
	if (!ok)
		warning("probe cost not measured: '%s' is not the %d configurations' body times", path, n);
	return ok ? 0 : -1;
}

/* The last lines of what the child said, for a warning. */
static void child_said(const char *dir)
{
	char path[PATH_MAX], buf[2048];
	size_t got;
	FILE *f;

	in_dir(path, dir, STDERR);
	if (!(f = fopen(path, "r")))
		return;
	if (fseek(f, -(long)(sizeof(buf) - 1), SEEK_END))
		rewind(f);
	got = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[got] = '\0';
	if (got)
		fprintf(stderr, "nucatrace: the traced run said:\n%s%s", buf, buf[got - 1] == '\n' ? "" : "\n");
}

/* How long the traced run may take: its GPU work is milliseconds, its
 * start and exit a few seconds. */
#define CHILD_LIMIT_S 120

/* What the traced run must not inherit: ours (set[] below), and the
 * interposer's settings that change what it records (a small
 * NUCATRACE_BUFFER_BLOCKS would drop blocks). */
static const char *const not_inherited[] = {
	"LD_PRELOAD=", "CUDA_INJECTION64_PATH=", "NUCATRACE_MODE=", "NUCATRACE_SAMPLE=",
	"NUCATRACE_OUTPUT_DIR=", "NUCATRACE_OUTPUT_PATTERN=", "NUCATRACE_STORE=", "NUCATRACE_BUFFER_BLOCKS=",
	"NUCATRACE_BUFFER_MAX=", "NUCATRACE_WAIT=", "NUCATRACE_EXIT_WAIT=", "NUCATRACE_GRAPH_TABLES=",
	"NUCATRACE_QUIET=",
};

/* The traced run's environment: this one's less not_inherited[], plus
 * set[].  A new NULL-ended array (of strings of environ and set), or
 * NULL. */
static char **child_env(char *const *set, int n_set)
{
	extern char **environ;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = calloc(n + (size_t)n_set + 1, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int keep = 1;

		for (size_t j = 0; j < sizeof(not_inherited) / sizeof(not_inherited[0]) && keep; j++)
			keep = strncmp(environ[i], not_inherited[j], strlen(not_inherited[j]));
		if (keep)
			env[k++] = environ[i];
	}
	for (int i = 0; i < n_set; i++)
		env[k++] = set[i];
	return env;
}

/* Wait for the traced run, at most CHILD_LIMIT_S: then it is killed.
 * Its exit status, or -1 after a warning. */
static int reap(pid_t pid)
{
	double end = nt_now_s() + CHILD_LIMIT_S;
	int status, killed = 0;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 || (r < 0 && errno == EINTR)) {
		if (!killed && nt_now_s() > end) {
			kill(pid, SIGKILL);
			killed = 1;
		}
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	if (r < 0) {
		warning("probe cost not measured: waiting for the traced run: %s", strerror(errno));
		kill(pid, SIGKILL);
		return -1;
	}
	if (killed) {
		warning("probe cost not measured: the traced run took more than %d s and was killed",
			CHILD_LIMIT_S);
		return -1;
	}
	return status;
}

/* This program again under libnucatrace.so, every launch traced; its
 * stdout and stderr to dir/STDERR. */
static int traced_run(const char *lib, const char *dir, int d)
{
	char exe[PATH_MAX], bodies[PATH_MAX], out[PATH_MAX], dev[16];
	char *set[6] = { NULL }, **env = NULL;
	char *argv[] = { "nucatrace", "calibrate", "--probe-cost-child", bodies, "--device", dev, NULL };
	const char *old = getenv("LD_PRELOAD");
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int status = -1, fd = -1, ok;
	pid_t pid;

	if (len <= 0) {
		warning("probe cost not measured: cannot find this program's path: %s", strerror(errno));
		return -1;
	}
	exe[len] = '\0';
	in_dir(bodies, dir, BODIES);
	in_dir(out, dir, STDERR);
	snprintf(dev, sizeof(dev), "%d", d);
	/* everything made here: after fork() the child only opens and execs */
	ok = asprintf(&set[0], "LD_PRELOAD=%s%s%s", old && *old ? old : "", old && *old ? ":" : "", lib) > 0 &&
	     asprintf(&set[1], "NUCATRACE_MODE=blocks") > 0 && asprintf(&set[2], "NUCATRACE_SAMPLE=all") > 0 &&
	     asprintf(&set[3], "NUCATRACE_OUTPUT_DIR=%s", dir) > 0 &&
	     asprintf(&set[4], "NUCATRACE_OUTPUT_PATTERN=%s", TRACE) > 0 &&
	     asprintf(&set[5], "NUCATRACE_STORE=%s/no-store.db", dir) > 0 && (env = child_env(set, 6));
	if (!ok) {
		warning("probe cost not measured: out of memory");
		goto out;
	}
	if ((fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		warning("probe cost not measured: cannot create '%s': %s", out, strerror(errno));
		goto out;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		warning("probe cost not measured: fork: %s", strerror(errno));
		goto out;
	}
	if (!pid) {
		if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execve(exe, argv, env);
		_exit(127);
	}
	status = reap(pid);
out:
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 6; i++)
		free(set[i]);
	free(env);
	if (status == -1)
		return -1;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (WIFEXITED(status))
		warning("probe cost not measured: the traced run exited with status %d", WEXITSTATUS(status));
	else
		warning("probe cost not measured: the traced run died of signal %d", WTERMSIG(status));
	child_said(dir);
	return -1;
}

static int join(const char *dir, const struct nt_map_probe *cfg, int n, struct nt_probe_body **traced,
		struct nt_probe_body **native, struct nt_map *m)
{
	char path[PATH_MAX];
	struct nt_trace *t;
	struct nt_err err;
	int ret;

	in_dir(path, dir, TRACE);
	if (nt_trace_open(path, &t, &err)) {
		warning("probe cost not measured: %s", err.msg);
		child_said(dir);
		return -1;
	}
	if ((ret = nt_probe_cost_join(t, cfg, n, traced, native, m, &err))) {
		warning("%s; the map is kept without it", err.msg);
		child_said(dir);
	}
	nt_trace_close(t);
	return ret;
}

/* The temporary folder and what the stage put there. */
static void remove_dir(const char *dir)
{
	static const char *const files[] = { BODIES, TRACE, TRACE "-wal", TRACE "-shm", TRACE "-journal",
					     STDERR };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		in_dir(path, dir, files[i]);
		unlink(path);
	}
	if (rmdir(dir))
		warning("cannot remove '%s': %s", dir, strerror(errno));
}

int calib_probe_cost(struct nt_cuda *cu, int d, struct nt_map *m, const char *keep)
{
	struct nt_map_probe cfg[NT_MAP_MAX_PROBES];
	struct nt_probe_body *native[NT_MAP_MAX_PROBES] = { 0 }, *traced[NT_MAP_MAX_PROBES] = { 0 };
	char lib[PATH_MAX], dir[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	struct nt_err err;
	int n = nt_probe_cost_configs(cfg, m->n_sm), ret = -1;

	if (nt_library_path(lib, sizeof(lib), &err)) {
		warning("probe cost not measured: %s", err.msg);
		return -1;
	}
	if (keep) {
		if (strlen(keep) > sizeof(dir) - 64) {
			warning("probe cost not measured: '%s': path too long", keep);
			return -1;
		}
		if (snprintf(dir, sizeof(dir), "%s", keep) < 0 || mkdir(dir, 0700)) {
			warning("probe cost not measured: cannot make '%s': %s", keep, strerror(errno));
			return -1;
		}
	} else if (snprintf(dir, sizeof(dir), "%s/nucatrace-probe-XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
			   (int)sizeof(dir) - 64 || !mkdtemp(dir)) {
		warning("probe cost not measured: cannot make a temporary folder: %s", strerror(errno));
		return -1;
	}
	nt_progress("calibrate: probe cost, untraced");
	if (nt_probe_cost_run(cu, d, cfg, n, native, &err)) {
		warning("probe cost not measured: %s", err.msg);
		goto out;
	}
	nt_progress("calibrate: probe cost, traced (a child under %s)", lib);
	if (!traced_run(lib, dir, d) && !read_bodies(dir, cfg, n, traced))
		ret = join(dir, cfg, n, traced, native, m);
out:
	nt_progress_done();
	free_bodies(native, n);
	free_bodies(traced, n);
	if (!keep)
		remove_dir(dir);
	return ret;
}
