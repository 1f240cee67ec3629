// SPDX-License-Identifier: MIT
/*
 * dnd: disk -> network -> disk transfers and the numbers that explain them.
 * main() only picks a subcommand; everything else lives in cmd_*.c.
 */
#include <stdio.h>
#include <string.h>

#include "relay/bench_relay.h"
#include "cli/cmd_bench.h"
#include "cli/cmd_filebench.h"
#include "cli/cmd_probe.h"
#include "cli/cmd_relay.h"
#include "cli/cmd_xfer.h"

struct dnd_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct dnd_cmd cmds[] = {
	{ "send", cmd_send, "send a file to 'dnd recv'" },
	{ "recv", cmd_recv, "receive one file from 'dnd send'" },
	{ "bench", cmd_bench, "every method pair, beside memcpy, pipe, iperf3" },
	{ "filebench", cmd_filebench, "every way to put data into a file" },
	{ "probe", cmd_probe, "what this kernel can do; seed 004's checks" },
	{ "relay", cmd_relay, "forward TCP flows with splice (seed 004)" },
	{ NULL, NULL, NULL },
};

static void dnd_help(void)
{
	const struct dnd_cmd *c;

	printf("usage: dnd COMMAND [options]   (or the seed's form: "
	       "dnd [-c host] [options] FILE)\n\n");
	for (c = cmds; c->name; c++)
		printf("  %-8s %s\n", c->name, c->help);
	printf("\n'dnd COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
	const struct dnd_cmd *c;

	if (argc > 1 && !strcmp(argv[1], "help")) {
		dnd_help();
		return 0;
	}
	/* `bench relay` lives in bench_relay.c, the rest of bench in cmd_bench.c. */
	if (argc > 2 && !strcmp(argv[1], "bench") && !strcmp(argv[2], "relay"))
		return cmd_bench_relay(argc - 2, argv + 2);
	for (c = cmds; argc > 1 && c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	return cmd_seed(argc, argv);
}
