/* nucatrace: the command-line front end.  One table of subcommands
 * (commands.def); each lives in its own file as cmd_<name>(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "usage.h"
#include "util/version.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
#define CMD(name, fn, summary) { #name, fn, summary },
#include "commands.def"
#undef CMD
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void list_commands(FILE *f)
{
	fprintf(f, "usage: nucatrace <command> [options]\n\n"
		   "How much time CUDA kernels lose to thread blocks on slow SMs.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'nucatrace <command> --help' shows a command's options.\n");
}

int cmd_version(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("nucatrace %s\n", nt_version);
	return 0;
}

int cmd_help(int argc, char **argv)
{
	const struct command *c;
	char *sub[] = { NULL, "--help", NULL };

	if (argc < 2) {
		list_commands(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	if (!c || c->fn == cmd_help || c->fn == cmd_version) {
		if (!c)
			return error("'%s' is not a nucatrace command; see 'nucatrace help'", argv[1]);
		printf("usage: nucatrace %s\n\n%s\n", c->name, c->summary);
		return 0;
	}
	sub[0] = (char *)c->name;
	return c->fn(2, sub);
}

/* What git's run_builtin() does after a command that succeeded: output
 * that did not reach a file or terminal (disk full, EIO) is a failure,
 * not a silent success.  A closed pipe is the reader's choice, so pipes
 * and sockets are left alone; a failed command has said why already. */
static int check_stdout(int ret)
{
	struct stat st;

	if (ret || fstat(fileno(stdout), &st) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		return ret;
	if (fflush(stdout))
		die("write failure on standard output: %s", strerror(errno));
	if (ferror(stdout))
		die("unknown write failure on standard output");
	if (fclose(stdout))
		die("close failed on standard output: %s", strerror(errno));
	return ret;
}

int main(int argc, char **argv)
{
	const struct command *c;
	int ret;

	if (argc < 2) {
		list_commands(stderr);
		return NT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return check_stdout(cmd_help(1, argv + 1));
	if (!strcmp(argv[1], "--version"))
		return check_stdout(cmd_version(1, argv + 1));
	c = find_command(argv[1]);
	if (!c) {
		error("'%s' is not a nucatrace command; see 'nucatrace help'", argv[1]);
		return NT_EXIT_USAGE;
	}
	ret = c->fn(argc - 1, argv + 1);
	return check_stdout(ret < 0 ? 1 : ret);
}
