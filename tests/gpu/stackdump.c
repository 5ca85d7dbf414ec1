/*
 * stackdump.so - for a GPU check that hangs, where no debugger is at
 * hand: LD_PRELOAD it beside libnucatrace.so, and `kill -USR2 PID` makes
 * every thread of the process write its stack to stderr (one write per
 * thread, tagged with its id; addresses as object+offset, to resolve with
 * addr2line on the same build).  A crash (SIGSEGV, SIGBUS, SIGILL, SIGABRT)
 * writes the crashing thread's stack, then takes its default course.  Only for tests: nothing here is safe to
 * leave in a program that must not be disturbed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void dump(int sig, siginfo_t *si, void *uc)
{
	static char buf[64][8192];
	void *pc[48];
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char *b = buf[tid % 64];
	int n, len;

	(void)uc;
	/* The first thread signalled from outside passes it on. */
	if (sig == SIGUSR2 && si->si_code == SI_USER) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			pid_t t = (pid_t)atoi(e->d_name);

			if (t > 0 && t != tid)
				syscall(SYS_tgkill, getpid(), t, sig);
		}
		if (d)
			closedir(d);
	}
	n = backtrace(pc, 48);
	len = snprintf(b, 8192, "== thread %d\n", (int)tid);
	for (int i = 0; i < n && len < 8000; i++) {
		Dl_info di;

		if (dladdr(pc[i], &di) && di.dli_fname)
			len += snprintf(b + len, 8192 - len, "  %s+0x%lx %s\n", di.dli_fname,
					(unsigned long)((char *)pc[i] - (char *)di.dli_fbase),
					di.dli_sname ? di.dli_sname : "");
		else
			len += snprintf(b + len, 8192 - len, "  %p\n", pc[i]);
	}
	if (write(2, b, (size_t)len) < 0)
		return;
	if (sig != SIGUSR2) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

__attribute__((constructor)) static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = dump;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
}
