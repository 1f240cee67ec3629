// SPDX-License-Identifier: MIT
/*
 * The one option parser: getopt_long driven by a command's tables. Values
 * are checked as they come and every problem is reported, so a benchmark
 * never runs with a setting other than the one asked for.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opt_help.h"
#include "cli/opt_parse.h"
#include "cli/opts.h"
#include "core/log.h"
#include "xfer/method.h"

#define OPT_CODE 256			/* getopt value of entry g: OPT_CODE + g */
#define OPT_VERSION (OPT_CODE + DND_OPT_MAX)

static const char *const role_names[] = {
	"send", "recv", "relay", "bench relay", "bench relay --sink",
	"bench relay --client", "serve",
};

/* "send", "bench relay --sink" ... joined with ", ". Returns buf. */
static const char *opt_role_names(unsigned int roles, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(role_names) / sizeof(role_names[0]); i++)
		if (roles & (1u << i) && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? ", " : "", role_names[i]);
	return buf;
}

static void *opt_field(const struct opt_state *st, int g)
{
	return (char *)st->obj + st->base[g] + st->def[g]->off;
}

static void opt_store(void *p, size_t width, uint64_t v)
{
	switch (width) {
	case 1:
		*(uint8_t *)p = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)p = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		break;
	default:
		DND_BUG_ON(width != 8);
		*(uint64_t *)p = v;
	}
}

/* A size or count within the entry's range; 0 or 1 (printed). */
static int opt_number(const char *opt, const char *arg,
		      const struct opt_def *d, enum opt_type t, uint64_t *v)
{
	bool size = t == DND_OPT_SIZE;
	int r = size ? opt_parse_size(arg, v) :
		       opt_parse_uint(arg, UINT64_MAX, v);
	int bad = 0;

	if (!r && !*v && (d->flags & DND_OPT_F_ZERO_OK))
		return 0;
	if (!r && d->hint && (*v < d->min || *v > d->max)) {
		log_err("%s '%s': %s", opt, arg, d->hint);
		*v = d->min;	/* as opt_num_arg() leaves it */
		return 1;
	}
	opt_num_arg(opt, arg, size, d->min, d->max, v, &bad);
	return bad;
}

/* "a, b or c" of the words. */
static const char *opt_words_list(const struct opt_word *w, char *buf,
				  size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; w[i].name && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					!i ? "" : w[i + 1].name ? ", " : " or ",
					w[i].name);
	return buf;
}

static const struct opt_word *opt_word_find(const struct opt_word *w,
					    const char *s)
{
	for (; w->name; w++)
		if (!strcmp(w->name, s))
			return w;
	return NULL;
}

static int opt_word(void *p, const struct opt_def *d, const char *opt,
		    const char *arg)
{
	const struct opt_word *w = opt_word_find(d->words, arg);
	char list[256];

	if (w) {
		opt_store(p, d->width, w->value);
		return 0;
	}
	if (d->hint)
		log_err("%s '%s': %s", opt, arg, d->hint);
	else
		log_err("%s '%s': use %s", opt, arg,
			opt_words_list(d->words, list, sizeof(list)));
	return 1;
}

/* The methods that can serve need (both directions: every method). */
static const char *opt_method_names(unsigned int need, char *buf, size_t len)
{
	char s[256], r[256];

	if (need == DND_ROLE_SEND || need == DND_ROLE_RECV)
		return method_names(need == DND_ROLE_SEND, buf, len);
	snprintf(buf, len, "send methods: %s; receive methods: %s",
		 method_names(true, s, sizeof(s)),
		 method_names(false, r, sizeof(r)));
	return buf;
}

/*
 * A method name. Alone (-m), only its existence is checked here: which way
 * it must go may depend on options not read yet (the 2006 program's -c).
 */
static int opt_method(const struct opt_state *st, const struct opt_def *d,
		      const char *opt, const char *arg, bool in_list,
		      const struct dnd_method **out)
{
	unsigned int need = d->need ? d->need :
			    st->cmd->roles & (DND_ROLE_SEND | DND_ROLE_RECV);
	const struct dnd_method *m = method_find(arg);
	char names[512];

	*out = m;
	if (m && (!in_list || ((need != DND_ROLE_SEND || m->send) &&
			       (need != DND_ROLE_RECV || m->recv))))
		return 0;
	opt_method_names(need, names, sizeof(names));
	if (in_list)
		log_err("%s: '%s' is not a %smethod; choose from %s", opt, arg,
			need == DND_ROLE_SEND ? "send " :
			need == DND_ROLE_RECV ? "receive " : "", names);
	else if (need == DND_ROLE_SEND || need == DND_ROLE_RECV)
		log_err("unknown method '%s'; %s methods: %s", arg,
			need == DND_ROLE_SEND ? "send" : "receive", names);
	else
		log_err("unknown method '%s'; %s", arg, names);
	return 1;
}

/* One element of a list into slot i of the array at p. */
static int opt_elem(const struct opt_state *st, const struct opt_def *d,
		    const char *opt, const char *tok, void *p, unsigned int i)
{
	char *slot = (char *)p + (size_t)i * d->width;
	const struct dnd_method *m;
	uint64_t v = 0;
	int bad;

	if (d->elem == DND_OPT_METHOD) {
		bad = opt_method(st, d, opt, tok, true, &m);
		memcpy(slot, &m, sizeof(m));
		return bad;
	}
	bad = opt_number(opt, tok, d, d->elem, &v);
	opt_store(slot, d->width, v);
	return bad;
}

/* A comma list (LIST or WORDS); each use replaces the last. */
static int opt_list(const struct opt_state *st, int g, const char *opt,
		    const char *arg)
{
	const struct opt_def *d = st->def[g];
	char *copy = strdup(arg), *tok, *save = NULL, list[256];
	unsigned int *n = (unsigned int *)((char *)st->obj + st->base[g] +
					   d->count_off);
	const struct opt_word *w;
	uint64_t bits = 0;
	int bad = 0;

	if (!copy) {
		log_err("out of memory");
		return 1;
	}
	if (d->type == DND_OPT_LIST)
		*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (d->type == DND_OPT_WORDS) {
			w = opt_word_find(d->words, tok);
			if (w)
				bits |= w->value;
			else
				log_err("%s: unknown %s '%s'; use %s", opt,
					d->noun ? d->noun : "value", tok,
					opt_words_list(d->words, list,
						       sizeof(list)));
			bad += !w;
		} else if (*n == d->max_items) {
			log_err("%s: at most %u values", opt, d->max_items);
			bad++;
			break;
		} else {
			bad += opt_elem(st, d, opt, tok, opt_field(st, g), (*n)++);
		}
	}
	free(copy);
	if (d->type == DND_OPT_WORDS)
		opt_store(opt_field(st, g), d->width, bits);
	else if (!*n && !bad) {
		log_err("%s needs at least one value", opt);
		bad++;
	}
	return bad;
}

/* Checks and stores the value of entry g; returns the problems printed. */
static int opt_value(const struct opt_state *st, int g, const char *opt,
		     const char *arg)
{
	const struct opt_def *d = st->def[g];
	void *p = opt_field(st, g);
	struct opt_addr *a = p;
	const struct dnd_method *m;
	uint64_t v = 0;
	int bad = 0;

	switch (d->type) {
	case DND_OPT_FLAG:
		*(bool *)p = !(d->flags & DND_OPT_F_NEG);
		return 0;
	case DND_OPT_SIZE:
	case DND_OPT_COUNT:
		bad = opt_number(opt, arg, d, d->type, &v);
		opt_store(p, d->width, v);
		return bad;
	case DND_OPT_PORT:
		if (!opt_parse_uint(arg, 65535, &v) && v) {
			opt_store(p, d->width, v);
			return 0;
		}
		log_err("%s '%s': a port is a number from 1 to 65535", opt, arg);
		return 1;
	case DND_OPT_SECONDS:
		opt_seconds_arg(opt, arg, p, &bad);
		if (!bad && (d->flags & DND_OPT_F_POSITIVE) && *(double *)p <= 0) {
			log_err("%s '%s': give seconds above 0, e.g. 30", opt, arg);
			bad++;
		}
		return bad;
	case DND_OPT_STRING:
		*(const char **)p = arg;
		return 0;
	case DND_OPT_HOSTPORT:
		opt_hostport_arg(opt, arg, d->flags & DND_OPT_F_ANYHOST,
				 d->flags & DND_OPT_F_ZERO_OK, a->host,
				 sizeof(a->host), &a->port, &bad);
		return bad;
	case DND_OPT_WORD:
		return opt_word(p, d, opt, arg);
	case DND_OPT_METHOD:
		bad = opt_method(st, d, opt, arg, false, &m);
		*(const struct dnd_method **)p = m;
		return bad;
	case DND_OPT_LIST:
	case DND_OPT_WORDS:
		return opt_list(st, g, opt, arg);
	case DND_OPT_CALL:
		return d->set((char *)st->obj + st->base[g], d, opt, arg);
	}
	DND_BUG_ON(1);
	return 1;
}

static bool opt_for(const struct opt_def *d, unsigned int roles)
{
	return !d->roles || (d->roles & roles);
}

/* Reports entry g, given for a role it is not for: role, or (while
 * parsing) any of the command's. */
static void opt_misuse(struct opt_state *st, int g, unsigned int role)
{
	const struct opt_def *d = st->def[g];
	char is[128], as[128];

	if (d->misuse)
		log_err("%s", d->misuse);
	else
		log_err("unknown option '%s' for %s; it is for %s",
			st->given[g], role == st->cmd->roles && st->cmd->name[0] ?
			st->cmd->name : opt_role_names(role, as, sizeof(as)),
			opt_role_names(d->roles, is, sizeof(is)));
	st->bad++;
}

/* Flattens the command's parts into st. */
static void opt_collect(const struct opt_cmd *c, void *obj,
			struct opt_state *st)
{
	const struct opt_part *p;
	const struct opt_def *d;

	memset(st, 0, sizeof(*st));
	st->cmd = c;
	st->obj = obj;
	for (p = c->parts; p->defs; p++)
		for (d = p->defs; d->name; d++) {
			DND_BUG_ON(st->n == DND_OPT_MAX);
			/* a table that could not print its help, or whose
			 * range does not fit its field */
			DND_BUG_ON(!d->group || !d->help || d->letter == 'h');
			DND_BUG_ON(d->width && d->width < 8 &&
				   d->max >> (8 * d->width));
			st->def[st->n] = d;
			st->base[st->n++] = p->base;
		}
}

static int opt_has_arg(const struct opt_def *d)
{
	if (d->type == DND_OPT_FLAG)
		return no_argument;
	return d->flags & DND_OPT_F_OPTARG ? optional_argument :
					     required_argument;
}

/* getopt_long's long table and short string for st's entries. */
static void opt_getopt_tables(const struct opt_state *st, struct option *lo,
			      char *shorts)
{
	int g, k = 0, s = 0;

	shorts[s++] = ':';
	shorts[s++] = 'h';
	shorts[s++] = 'V';
	for (g = 0; g < st->n; g++) {
		const struct opt_def *d = st->def[g];
		int has = opt_has_arg(d);

		lo[k++] = (struct option){ d->name, has, NULL, OPT_CODE + g };
		if (d->alias)
			lo[k++] = (struct option){ d->alias, has, NULL,
						   OPT_CODE + g };
		if (!d->letter)
			continue;
		shorts[s++] = d->letter;
		if (has != no_argument)
			shorts[s++] = ':';
		if (has == optional_argument)
			shorts[s++] = ':';
	}
	lo[k++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[k++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	lo[k] = (struct option){ NULL, 0, NULL, 0 };
	shorts[s] = '\0';
}

/* The entry of getopt's answer c, with its spelling in st; -1: none. */
static int opt_which(struct opt_state *st, const struct option *lo, int c,
		     int li)
{
	int g;

	for (g = 0; c < OPT_CODE && g < st->n; g++)
		if (st->def[g]->letter == c)
			break;
	if (c >= OPT_CODE)
		g = c - OPT_CODE;
	if (g >= st->n)
		return -1;
	if (li >= 0)
		snprintf(st->given[g], sizeof(st->given[g]), "--%s",
			 lo[li].name);
	else
		snprintf(st->given[g], sizeof(st->given[g]), "-%c", c);
	return g;
}

/* getopt's unknown option or missing value. */
static void opt_getopt_error(struct opt_state *st, int c, char **argv)
{
	if (c == ':')
		log_err("%s needs a value", argv[optind - 1]);
	else if (optopt)
		log_err("unknown option '-%c'", optopt);
	else
		log_err("unknown option '%s'", argv[optind - 1]);
	st->bad++;
}

int opt_parse(const struct opt_cmd *c, void *obj, int argc, char **argv,
	      struct opt_state *st)
{
	struct option lo[2 * DND_OPT_MAX + 3];
	char shorts[3 * DND_OPT_MAX + 4];	/* ":hV", 3 per entry, NUL */
	int opt, li, g;

	opt_collect(c, obj, st);
	opt_getopt_tables(st, lo, shorts);
	optind = 0;		/* GNU: start over, as for a new argv */
	opterr = 0;
	while (li = -1, (opt = getopt_long(argc, argv, shorts, lo, &li)) != -1) {
		if (opt == 'h' || opt == 'V' || opt == OPT_VERSION) {
			if (opt == 'h')
				opt_help(c, obj, stdout);
			else
				opt_version(stdout);
			return 0;
		}
		g = opt == ':' || opt == '?' ? -1 : opt_which(st, lo, opt, li);
		if (g < 0) {
			opt_getopt_error(st, opt, argv);
			continue;
		}
		if (!opt_for(st->def[g], c->roles)) {
			opt_misuse(st, g, c->roles);
			continue;
		}
		if (!optarg && (st->def[g]->flags & DND_OPT_F_OPTARG))
			optarg = (char *)st->def[g]->implied;
		st->bad += opt_value(st, g, st->given[g], optarg);
	}
	st->args = argv + optind;
	st->nargs = argc - optind;
	if (c->check)
		c->check(st, obj);
	if (!st->bad)
		return -1;
	log_err("see 'dnd %s%s--help'", c->name, c->name[0] ? " " : "");
	return 2;
}

int opt_set_rate(void *obj, const struct opt_def *d, const char *opt,
		 const char *arg)
{
	uint64_t *v = (void *)((char *)obj + d->off);

	if (!opt_parse_rate(arg, false, v))
		return 0;
	log_err("%s '%s': not a rate; give bytes per second as a size (200M "
		"is 200 MB/s, 1Gi) or a tc rate (1gbit, 500mbit, 1gbps)", opt,
		arg);
	return 1;
}

bool opt_given(const struct opt_state *st, const char *name)
{
	int g;

	for (g = 0; g < st->n; g++)
		if (!strcmp(st->def[g]->name, name))
			return st->given[g][0] != '\0';
	DND_BUG_ON(1);		/* a name that is in no table */
	return false;
}

int opt_check_role(struct opt_state *st, unsigned int role)
{
	int g, before = st->bad;

	/* those not for the command at all were refused while parsing */
	for (g = 0; g < st->n; g++)
		if (st->given[g][0] && !opt_for(st->def[g], role) &&
		    opt_for(st->def[g], st->cmd->roles))
			opt_misuse(st, g, role);
	return st->bad - before;
}
