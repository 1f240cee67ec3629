// SPDX-License-Identifier: MIT
/*
 * dnd: disk -> network -> disk transfers and the numbers that explain them.
 * main() only picks a subcommand from the table; the rest is in src/cli/.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_bench.h"
#include "cli/cmd_bench_relay.h"
#include "cli/cmd_filebench.h"
#include "cli/cmd_help.h"
#include "cli/cmd_probe.h"
#include "cli/cmd_relay.h"
#include "cli/cmd_serve.h"
#include "cli/cmd_xfer.h"

static int dnd_help(int argc, char **argv);

static const struct dnd_cmd cmds[] = {
	{ "send", cmd_send, "send a file to 'dnd recv'" },
	{ "recv", cmd_recv, "receive one file from 'dnd send'" },
	{ "bench", cmd_bench, "every method pair, beside memcpy, a pipe and "
	  "iperf3" },
	{ "bench relay", cmd_bench_relay, "the relay against a direct "
	  "connection, under many flows" },
	{ "filebench", cmd_filebench, "every way to put data into a file, "
	  "timed like fio" },
	{ "probe", cmd_probe, "what this kernel can do, checked live" },
	{ "serve", cmd_serve, "a lasting, authenticated server: pushes land "
	  "beneath DIR, pulls read from it" },
	{ "relay", cmd_relay, "forward TCP connections with splice, "
	  "HAProxy-style" },
	{ "help", dnd_help, "this list; 'dnd help COMMAND' is 'dnd COMMAND "
	  "--help'" },
	{ "version", cmd_version, "dnd's version, the kernel and the features "
	  "built in" },
	{ NULL, NULL, NULL },
};

static int dnd_help(int argc, char **argv)
{
	return cmd_help(cmds, argc, argv);
}

int main(int argc, char **argv)
{
	const struct dnd_cmd *c;
	int words;

	if (argc < 2) {
		cmd_list(cmds, stderr);
		return 2;
	}
	/* dnd --help: the commands first, then the 2006 form's options. */
	if (argc == 2 && (!strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		cmd_list(cmds, stdout);
		printf("\n");
		fflush(stdout);
	}
	c = cmd_find(cmds, argc - 1, argv + 1, &words);
	if (c)
		return c->run(argc - words, argv + words);
	if (cmd_typo(cmds, argv[1]))
		return 2;
	return cmd_dnd2006(argc, argv);
}
