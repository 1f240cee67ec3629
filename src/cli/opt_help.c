// SPDX-License-Identifier: MIT
/*
 * Help from the option tables: a command lists only the options of its
 * roles, grouped, each default read from the options struct the command
 * starts from, so the text cannot drift from what the parser does.
 */
#include <sys/utsname.h>
#include <stdio.h>
#include <string.h>

#include "cli/opt_help.h"
#include "cli/opts.h"
#include "core/version.h"
#include "xfer/method.h"

#define OPT_COLS 79		/* the last column text may use */
#define OPT_HELP_COL 26		/* where an option's words start */
#define OPT_TAGGED (DND_ROLE_SEND | DND_ROLE_RECV | DND_ROLE_SINK |	\
		    DND_ROLE_CLIENT)

void opt_wrap(FILE *f, int col, int indent, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, " \n");

		if (n && col > indent && col + 1 + (int)n > OPT_COLS) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (n && col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)n, p);
		col += (int)n;
		p += n;
		if (*p == '\n') {
			fputc('\n', f);
			col = 0;
			if (p[1] && p[1] != '\n') {
				fprintf(f, "%*s", indent, "");
				col = indent;
			}
		}
		if (*p)
			p++;
	}
	fputc('\n', f);
}

static uint64_t opt_load(const void *p, size_t width)
{
	switch (width) {
	case 1:
		return *(const uint8_t *)p;
	case 2:
		return *(const uint16_t *)p;
	case 4:
		return *(const uint32_t *)p;
	}
	return *(const uint64_t *)p;
}

/* One value of type t at p, for a default; "" when it has none. */
static void opt_fmt_value(const struct opt_def *d, enum opt_type t,
			  const void *p, char *buf, size_t len)
{
	const struct dnd_method *m;
	uint64_t v = t == DND_OPT_METHOD ? 0 : opt_load(p, d->width);

	buf[0] = '\0';
	if (t == DND_OPT_METHOD) {
		memcpy(&m, p, sizeof(m));
		snprintf(buf, len, "%s", m ? m->name : "");
	} else if (t == DND_OPT_SIZE && v) {
		opt_fmt_size(v, buf, (unsigned int)len);
	} else if (v) {
		snprintf(buf, len, "%llu", (unsigned long long)v);
	}
}

/* The words whose values make up the field's value (WORD, WORDS). */
static void opt_fmt_words(const struct opt_def *d, uint64_t v, char *buf,
			  size_t len)
{
	const struct opt_word *w;
	size_t off = 0;

	buf[0] = '\0';
	for (w = d->words; w->name && off < len; w++) {
		bool on = d->type == DND_OPT_WORD ? w->value == v :
			  w->value ? (v & w->value) == w->value : !v;

		if (on)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "," : "", w->name);
	}
}

/* The default shown for d: its words, or the value obj starts with. */
static const char *opt_default(const struct opt_def *d, const void *obj,
			       char *buf, size_t len)
{
	const char *p = (const char *)obj + d->off;
	unsigned int i, n;
	size_t off = 0;

	if (d->def)
		return d->def;
	buf[0] = '\0';
	switch (d->type) {
	case DND_OPT_SECONDS:
		if (*(const double *)p)
			snprintf(buf, len, "%g", *(const double *)p);
		break;
	case DND_OPT_STRING:
		snprintf(buf, len, "%s", *(const char *const *)p ?
			 *(const char *const *)p : "");
		break;
	case DND_OPT_WORD:
	case DND_OPT_WORDS:
		opt_fmt_words(d, opt_load(p, d->width), buf, len);
		break;
	case DND_OPT_LIST:
		n = *(const unsigned int *)((const char *)obj + d->count_off);
		for (i = 0; i < n && off + 1 < len; i++) {
			if (i)
				buf[off++] = ',';
			opt_fmt_value(d, d->elem, p + i * d->width, buf + off,
				      len - off);
			off += strlen(buf + off);
		}
		break;
	case DND_OPT_SIZE:
	case DND_OPT_COUNT:
	case DND_OPT_PORT:
	case DND_OPT_METHOD:
		opt_fmt_value(d, d->type, p, buf, len);
		break;
	default:
		break;
	}
	return buf[0] ? buf : NULL;
}

static const char *opt_metavar(const struct opt_def *d)
{
	static const char *const names[] = {
		[DND_OPT_SIZE] = "SIZE", [DND_OPT_COUNT] = "N",
		[DND_OPT_PORT] = "PORT", [DND_OPT_SECONDS] = "SEC",
		[DND_OPT_STRING] = "STRING", [DND_OPT_HOSTPORT] = "HOST:PORT",
		[DND_OPT_WORD] = "WORD", [DND_OPT_WORDS] = "LIST",
		[DND_OPT_METHOD] = "NAME", [DND_OPT_LIST] = "LIST",
		[DND_OPT_CALL] = "VALUE",
	};

	return d->metavar ? d->metavar : names[d->type];
}

/* "  -b, --buffer SIZE" into buf; returns its length. */
static int opt_left(const struct opt_def *d, char *buf, size_t len)
{
	bool opt = d->flags & DND_OPT_F_OPTARG;
	const struct opt_word *w;
	char mv[64];
	size_t off = 0;

	snprintf(mv, sizeof(mv), "%s", opt_metavar(d));
	/* one word of a few: "end|stream" */
	for (w = d->words; !d->metavar && d->type == DND_OPT_WORD && w->name &&
	     off < sizeof(mv); w++)
		off += (size_t)snprintf(mv + off, sizeof(mv) - off, "%s%s",
					off ? "|" : "", w->name);

	if (d->type == DND_OPT_FLAG)
		return snprintf(buf, len, "  %c%c%s--%s", d->letter ? '-' : ' ',
				d->letter ? d->letter : ' ',
				d->letter ? ", " : "  ", d->name);
	return snprintf(buf, len, "  %c%c%s--%s%s%s%s", d->letter ? '-' : ' ',
			d->letter ? d->letter : ' ', d->letter ? ", " : "  ",
			d->name, opt ? "[=" : " ", mv, opt ? "]" : "");
}

/* "[recv only] " when d is for some of c's roles, not all. */
static const char *opt_tag(const struct opt_cmd *c, const struct opt_def *d,
			   char *buf, size_t len)
{
	static const char *const tags[] = { "send", "recv", "relay", "bench",
					    "--sink", "--client" };
	unsigned int mine = d->roles & (c->roles ? c->roles : ~0u);
	size_t i, off = 1;

	snprintf(buf, len, "[");
	if (!d->roles || !c->roles || !(c->roles & ~d->roles) ||
	    (mine & ~OPT_TAGGED)) {
		buf[0] = '\0';
		return buf;
	}
	for (i = 0; i < sizeof(tags) / sizeof(tags[0]) && off < len; i++)
		if (mine & (1u << i))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off > 1 ? " and " : "", tags[i]);
	if (off < len)
		snprintf(buf + off, len - off, " only] ");
	return buf;
}

#define OPT_SUB_COL 6		/* where the lines under an option start */

/* "name  text" under an option, the text wrapped past the names. */
static void opt_subline(FILE *f, int wid, const char *name, const char *text)
{
	fprintf(f, "%*s%-*s  ", OPT_SUB_COL, "", wid, name);
	opt_wrap(f, OPT_SUB_COL + wid + 2, OPT_SUB_COL + wid + 4, text);
}

/* The methods for -m, of the directions c has, one line each. */
static void opt_methods(FILE *f, const struct opt_cmd *c)
{
	const struct dnd_method *const *m;
	unsigned int roles = c->roles & (DND_ROLE_SEND | DND_ROLE_RECV);
	bool both = roles == (DND_ROLE_SEND | DND_ROLE_RECV);
	char line[300];
	int wid = 0;

	for (m = method_all(); *m; m++)
		wid = (int)strlen((*m)->name) > wid ? (int)strlen((*m)->name) :
						      wid;
	for (m = method_all(); *m; m++) {
		const char *s = roles & DND_ROLE_SEND ? (*m)->send_help : NULL;
		const char *r = roles & DND_ROLE_RECV ? (*m)->recv_help : NULL;

		if (s) {
			snprintf(line, sizeof(line), "%s%s", both ? "send: " :
				 "", s);
			opt_subline(f, wid, (*m)->name, line);
		}
		if (r) {
			snprintf(line, sizeof(line), "%s%s", both ? "recv: " :
				 "", r);
			opt_subline(f, wid, (*m)->name, line);
		}
	}
}

/* The words of WORD/WORDS, or the methods for -m, one line each. */
static void opt_sublines(FILE *f, const struct opt_cmd *c,
			 const struct opt_def *d)
{
	const struct opt_word *w;
	int wid = 0;

	if (d->type == DND_OPT_METHOD)
		opt_methods(f, c);
	if (d->type != DND_OPT_WORD && d->type != DND_OPT_WORDS)
		return;
	for (w = d->words; w->name; w++)
		wid = (int)strlen(w->name) > wid ? (int)strlen(w->name) : wid;
	for (w = d->words; w->name; w++)
		if (w->help)
			opt_subline(f, wid, w->name, w->help);
}

static void opt_entry(FILE *f, const struct opt_cmd *c,
		      const struct opt_def *d, const void *obj)
{
	char left[96], def[160], tag[64], text[1024];
	const char *dv = opt_default(d, obj, def, sizeof(def));
	size_t hl = strlen(d->help);
	bool colon = hl && d->help[hl - 1] == ':';
	int n = opt_left(d, left, sizeof(left));

	fputs(left, f);
	if (n >= OPT_HELP_COL - 1) {
		fputc('\n', f);
		n = 0;
	}
	fprintf(f, "%*s", OPT_HELP_COL - n, "");
	/* "how the bytes move (default rw):" */
	snprintf(text, sizeof(text), "%s%.*s%s%s%s%s%s%s",
		 opt_tag(c, d, tag, sizeof(tag)), (int)(hl - colon), d->help,
		 dv ? " (default " : "", dv ? dv : "", dv ? ")" : "",
		 d->alias ? "; --" : "", d->alias ? d->alias : "",
		 d->alias ? " is the same" : "");
	if (colon)
		strncat(text, ":", sizeof(text) - strlen(text) - 1);
	opt_wrap(f, OPT_HELP_COL, OPT_HELP_COL, text);
	opt_sublines(f, c, d);
}

static bool opt_for_cmd(const struct opt_cmd *c, const struct opt_def *d)
{
	return !d->roles || !c->roles || (d->roles & c->roles);
}

/* True when group g was listed by an entry before d. */
static bool opt_group_seen(const struct opt_cmd *c, const struct opt_def *d)
{
	const struct opt_part *p;
	const struct opt_def *e;

	for (p = c->parts; p->defs; p++)
		for (e = p->defs; e->name; e++) {
			if (e == d)
				return false;
			if (opt_for_cmd(c, e) && !strcmp(e->group, d->group))
				return true;
		}
	return false;
}

static void opt_group(FILE *f, const struct opt_cmd *c, const char *group,
		      const void *obj)
{
	const struct opt_part *p;
	const struct opt_def *d;

	fprintf(f, "\n%s:\n", group);
	for (p = c->parts; p->defs; p++)
		for (d = p->defs; d->name; d++)
			if (opt_for_cmd(c, d) && !strcmp(d->group, group))
				opt_entry(f, c, d, (const char *)obj + p->base);
}

void opt_help(const struct opt_cmd *c, const void *obj, FILE *f)
{
	const struct opt_part *p;
	const struct opt_def *d;

	fprintf(f, "usage: %s\n\n", c->usage);
	opt_wrap(f, 0, 0, c->about);
	for (p = c->parts; p->defs; p++)
		for (d = p->defs; d->name; d++)
			if (opt_for_cmd(c, d) && !opt_group_seen(c, d))
				opt_group(f, c, d->group, obj);
	fprintf(f, "\nHelp:\n  -h, --help%*sthis text\n  -V, --version%*s"
		"dnd's version, the kernel and the features built in\n",
		OPT_HELP_COL - 12, "", OPT_HELP_COL - 15, "");
	if (c->help_more)
		c->help_more(f);
	if (c->notes) {
		fputc('\n', f);
		opt_wrap(f, 0, 0, c->notes);
	}
}

void opt_version(FILE *f)
{
	struct utsname u;
	const char *feat = dnd_features();

	fprintf(f, "dnd %s\nkernel %s\nfeatures: %s\n", dnd_version(),
		uname(&u) == 0 ? u.release : "unknown",
		feat[0] ? feat : "none (built without liburing)");
}
