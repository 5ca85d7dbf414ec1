/* Prototypes of every subcommand, from commands.def. */
#ifndef NT_COMMANDS_H
#define NT_COMMANDS_H

#define CMD(name, fn, summary) int fn(int argc, char **argv);
#include "commands.def"
#undef CMD

#endif
