/* SPDX-License-Identifier: MIT */
/*
 * The option layer: each command declares its options as a table, and one
 * parser fills the command's own options struct from it (no globals).
 */
#ifndef DND_OPT_PARSE_H
#define DND_OPT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Who an option is for. A table entry with roles 0 is for every role. */
enum opt_role {
	DND_ROLE_SEND = 1 << 0,		/* dnd send; 2006 form with -c */
	DND_ROLE_RECV = 1 << 1,		/* dnd recv; 2006 form without */
	DND_ROLE_RELAY = 1 << 2,	/* dnd relay */
	DND_ROLE_BENCH = 1 << 3,	/* dnd bench relay: the measured runs */
	DND_ROLE_SINK = 1 << 4,		/* dnd bench relay --sink */
	DND_ROLE_CLIENT = 1 << 5,	/* dnd bench relay --client */
	DND_ROLE_SERVE = 1 << 6,	/* dnd serve */
};

enum opt_type {
	DND_OPT_FLAG = 1,	/* no value: true (false with NEG) into a bool */
	DND_OPT_SIZE,		/* 64Ki, 1M: an unsigned field of .width bytes */
	DND_OPT_COUNT,		/* plain digits: the same */
	DND_OPT_PORT,		/* 1 to 65535: a uint16_t */
	DND_OPT_SECONDS,	/* "30", "0.5": a double */
	DND_OPT_STRING,		/* kept as given: a const char * into argv */
	DND_OPT_HOSTPORT,	/* [HOST:]PORT or [V6]:PORT: a struct opt_addr */
	DND_OPT_WORD,		/* one of .words: its value, unsigned field */
	DND_OPT_WORDS,		/* comma list of .words: their values OR'd */
	DND_OPT_METHOD,		/* a method name: a const struct dnd_method * */
	DND_OPT_LIST,		/* comma list of .elem (SIZE, COUNT, METHOD) */
	DND_OPT_CALL,		/* .set decides */
};

/* .flags */
#define DND_OPT_F_NEG		(1u << 0)	/* FLAG stores false */
#define DND_OPT_F_ZERO_OK	(1u << 1)	/* 0 is allowed below .min;
						   HOSTPORT: port 0 (any) */
#define DND_OPT_F_OPTARG	(1u << 2)	/* --opt[=VALUE]; bare: .implied */
#define DND_OPT_F_ANYHOST	(1u << 3)	/* HOSTPORT: HOST may be left out */
#define DND_OPT_F_POSITIVE	(1u << 4)	/* SECONDS: above 0 */

#define DND_OPT_MAX 64		/* entries per command, all parts together */

struct opt_addr {
	char host[256];		/* "" when left out */
	uint16_t port;
};

struct opt_word {
	const char *name;
	uint64_t value;
	const char *help;	/* a line in --help, or NULL */
};

struct opt_def {
	const char *name;	/* long name without "--"; NULL ends a table */
	const char *alias;	/* an older spelling that still works, or NULL */
	char letter;		/* short name, 0: none */
	enum opt_type type;
	enum opt_type elem;	/* LIST: the type of each element */
	unsigned int roles;	/* DND_ROLE_* it is for; 0: all */
	const char *group;	/* the --help heading it is listed under */
	const char *metavar;	/* the value in --help; NULL: from the type */
	const char *help;	/* plain words, wrapped by the help printer */
	const char *def;	/* the default in words; NULL: the field's value */
	uint64_t min, max;	/* SIZE, COUNT and their lists */
	unsigned int flags;	/* DND_OPT_F_* */
	const char *implied;	/* OPTARG: the value when none is given */
	const char *hint;	/* replaces "too small/large" or "use a or b" */
	const char *misuse;	/* said when given for a role it is not for */
	const char *noun;	/* WORDS: what one word is ("flag"); "value" */
	const struct opt_word *words;	/* WORD, WORDS: ends with a NULL name */
	unsigned int need;	/* METHOD: DND_ROLE_SEND/RECV it must serve */
	/* CALL: takes one value (obj: the table's struct, opt: the spelling
	 * used); returns the count of problems it printed. */
	int (*set)(void *obj, const struct opt_def *d, const char *opt,
		   const char *arg);
	size_t off, width;	/* the field (LIST: the array, element width) */
	size_t count_off;	/* LIST: an unsigned int counting the elements */
	unsigned int max_items;	/* LIST: the array's length */
};

/* A field of struct T, for an entry: where it is and how wide. */
#define OPT_AT(T, f) .off = offsetof(T, f), .width = sizeof(((T *)0)->f)
/* A list: the array f and its unsigned int count n. */
#define OPT_ARRAY(T, f, n)                                                     \
	.off = offsetof(T, f), .width = sizeof(((T *)0)->f[0]),                \
	.count_off = offsetof(T, n),                                           \
	.max_items = sizeof(((T *)0)->f) / sizeof(((T *)0)->f[0])

/* Every --pipe-size: 0 keeps the kernel's size, else one page to 1 GiB. */
#define DND_OPT_PIPE_RANGE                                                     \
	.min = 4096, .max = 1u << 30, .flags = DND_OPT_F_ZERO_OK,              \
	.hint = "a pipe holds at least one page (4Ki) and at most 1Gi; 0 "     \
		"keeps the kernel's size"

struct opt_state;

/* One table and where its struct sits inside the command's options. */
struct opt_part {
	const struct opt_def *defs;	/* NULL ends the list of parts */
	size_t base;
};

struct opt_cmd {
	const char *name;	/* "send", "bench relay"; "": 2006 form */
	const char *usage;	/* the synopsis after "usage: " */
	const char *about;	/* what it does, in plain words */
	const char *notes;	/* after the options: units, exit codes */
	const struct opt_part *parts;
	unsigned int roles;	/* the roles it has: parsed and listed */
	void (*help_more)(FILE *f);	/* more help (names it accepts), or NULL */
	/* After parsing: the checks between options (and the role, the words
	 * that are not options); each problem printed and added to st->bad.
	 * It may also derive settings in obj. NULL: none. */
	void (*check)(struct opt_state *st, void *obj);
};

/* What a parse found, for the command's own checks. */
struct opt_state {
	const struct opt_cmd *cmd;
	void *obj;
	int bad;		/* problems reported so far */
	int nargs;		/* the words that are not options */
	char **args;
	int n;			/* entries over all parts */
	const struct opt_def *def[DND_OPT_MAX];
	size_t base[DND_OPT_MAX];
	char given[DND_OPT_MAX][32];	/* the spelling used; "": not given */
};

/*
 * Parses argv (argv[0] is the command's name) into obj, which the caller
 * has filled with the defaults, then runs c->check. Every bad value is
 * reported and parsing goes on; an option of a role the command does not
 * have is refused with its .misuse text. Returns -1 to run the command, 0
 * after printing --help or --version, or 2 (the usage exit code) after the
 * problems and a pointer to --help.
 */
int opt_parse(const struct opt_cmd *c, void *obj, int argc, char **argv,
	      struct opt_state *st);

/* A DND_OPT_CALL setter for a --rate RATE: opt_parse_rate() (a size per
 * second or a tc rate) into the uint64_t field at d->off, bytes/s. */
int opt_set_rate(void *obj, const struct opt_def *d, const char *opt,
		 const char *arg);

/* True when the option with this long name was given. */
bool opt_given(const struct opt_state *st, const char *name);

/*
 * Once the role is known (the 2006 program's form: -c; bench relay: --sink or
 * --client), refuses every given option that is not for it. Returns the
 * count of problems, also added to st->bad.
 */
int opt_check_role(struct opt_state *st, unsigned int role);

#endif
