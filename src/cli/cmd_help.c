// SPDX-License-Identifier: MIT
/*
 * The words around the commands: the list, `dnd help CMD` (the command's
 * own --help, so the two cannot differ), `dnd version`, and a mistyped
 * command, which is never taken for a file to receive into.
 */
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_help.h"
#include "cli/opt_help.h"
#include "cli/opt_parse.h"
#include "core/log.h"

/* The 2006 dnd program's command line, as its usage text had it. */
#define DND2006_USAGE "dnd [-b bsz] [-c host] [-h] [-l sz] [-m method] " \
		      "[-o|-t] [-p port] [-w wsz] FILE"


/* Does name (one or two words) match the words at argv? */
static int cmd_words(const char *name, int argc, char **argv)
{
	const char *sp = strchr(name, ' ');

	if (!sp)
		return argc >= 1 && !strcmp(argv[0], name) ? 1 : 0;
	if (argc < 2 || strncmp(argv[0], name, (size_t)(sp - name)) ||
	    argv[0][sp - name] || strcmp(argv[1], sp + 1))
		return 0;
	return 2;
}

const struct dnd_cmd *cmd_find(const struct dnd_cmd *cmds, int argc,
			       char **argv, int *words)
{
	const struct dnd_cmd *c, *best = NULL;
	int n;

	*words = 0;
	for (c = cmds; c->name; c++) {
		n = cmd_words(c->name, argc, argv);
		if (n > *words) {
			*words = n;
			best = c;
		}
	}
	return best;
}

void cmd_list(const struct dnd_cmd *cmds, FILE *f)
{
	const struct dnd_cmd *c;

	fprintf(f, "usage: dnd COMMAND [options]\n\nCommands:\n");
	for (c = cmds; c->name; c++)
		fprintf(f, "  %-13s %s\n", c->name, c->help);
	fprintf(f, "\n");
	opt_wrap(f, 0, 0, "'dnd COMMAND --help' describes each. Without a "
		 "command, dnd takes the 2006 dnd program's command line:");
	fprintf(f, "    " DND2006_USAGE "\n");
	opt_wrap(f, 0, 0, "with -c HOST it sends FILE, otherwise it receives "
		 "into FILE ('dnd --help' lists its options after this list).");
}

/* Edit distance with adjacent swaps counted as one (optimal alignment). */
static size_t cmd_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t d[33][33];

	if (la > 32 || lb > 32)
		return 99;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/* The command (its first word) word is one or two slips away from. */
static const char *cmd_suggest(const struct dnd_cmd *cmds, const char *word,
			       char *buf, size_t len)
{
	const struct dnd_cmd *c;

	for (c = cmds; c->name; c++) {
		size_t n = strcspn(c->name, " ");

		snprintf(buf, len, "%.*s", (int)n, c->name);
		if (cmd_distance(word, buf) <= (n <= 5 ? 1u : 2u))
			return buf;
	}
	return NULL;
}

bool cmd_typo(const struct dnd_cmd *cmds, const char *word)
{
	struct stat st;
	char near[32];

	if (word[0] == '-' || strpbrk(word, "/.") || !stat(word, &st) ||
	    !cmd_suggest(cmds, word, near, sizeof(near)))
		return false;
	log_err("unknown command '%s'; did you mean '%s'?", word, near);
	log_err("to receive into a file named '%s', use: dnd recv %s", word,
		word);
	return true;
}

int cmd_help(const struct dnd_cmd *cmds, int argc, char **argv)
{
	const struct dnd_cmd *c;
	char near[32], *hv[3];
	int words;

	if (argc == 1 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cmd_list(cmds, stdout);
		return 0;
	}
	c = cmd_find(cmds, argc - 1, argv + 1, &words);
	if (c && words == argc - 1) {
		hv[0] = argv[words];
		hv[1] = "--help";
		hv[2] = NULL;
		return c->run(2, hv);
	}
	if (c)
		log_err("help takes one command; got '%s' too",
			argv[1 + words]);
	else if (cmd_suggest(cmds, argv[1], near, sizeof(near)))
		log_err("unknown command '%s'; did you mean '%s'?", argv[1],
			near);
	else
		log_err("unknown command '%s'; 'dnd help' lists them", argv[1]);
	return 2;
}

static const struct opt_def version_table[] = {
	{ .name = NULL },
};

static const struct opt_part version_parts[] = {
	{ version_table, 0 },
	{ NULL, 0 },
};

static void version_check(struct opt_state *st, void *obj)
{
	if (st->nargs) {
		log_err("version takes no argument ('%s')", st->args[0]);
		st->bad++;
	}
}

static const struct opt_cmd version_cmd = {
	.name = "version",
	.usage = "dnd version (or dnd --version, dnd COMMAND --version)",
	.about = "Prints dnd's version, the running kernel's release and the "
		 "optional features built in.",
	.parts = version_parts,
	.check = version_check,
};

int cmd_version(int argc, char **argv)
{
	struct opt_state st;
	int r = opt_parse(&version_cmd, NULL, argc, argv, &st);

	if (r >= 0)
		return r;
	opt_version(stdout);
	return 0;
}
