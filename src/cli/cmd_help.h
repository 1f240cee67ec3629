/* SPDX-License-Identifier: MIT */
/* `dnd help [COMMAND]`, `dnd version`, and what dnd says to a word it does
 * not know, over the command table of dnd.c. */
#ifndef DND_CMD_HELP_H
#define DND_CMD_HELP_H

#include <stdbool.h>
#include <stdio.h>

struct dnd_cmd {
	const char *name;	/* one word, or two: "bench relay" */
	/* Returns the exit code; argv[0] is the name's last word. */
	int (*run)(int argc, char **argv);
	const char *help;	/* one line for 'dnd help' */
};

/*
 * The command whose words start argv (argc words), or NULL; *words gets
 * how many words its name has. cmds ends with a NULL name.
 */
const struct dnd_cmd *cmd_find(const struct dnd_cmd *cmds, int argc,
			       char **argv, int *words);

/* Prints the list of commands and the 2006 program's form to f. */
void cmd_list(const struct dnd_cmd *cmds, FILE *f);

/*
 * `dnd help` (argv[0] "help"): the list on stdout, or with COMMAND exactly
 * what `dnd COMMAND --help` prints. Returns the exit code: 0, or 2 for an
 * unknown command.
 */
int cmd_help(const struct dnd_cmd *cmds, int argc, char **argv);

/* `dnd version`: the version, the kernel and the features built in. */
int cmd_version(int argc, char **argv);

/*
 * True (with the message printed: the command it looks like, and how to
 * receive into a file of that name) when word is not a command but close
 * to one, has no '/' or '.', and names no existing file.
 */
bool cmd_typo(const struct dnd_cmd *cmds, const char *word);

#endif
