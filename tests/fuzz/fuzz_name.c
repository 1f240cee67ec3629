// SPDX-License-Identifier: MIT
/* libFuzzer: client names through the pure checks and then openat2 beneath
 * a fixed scratch DIR (symlinks out and up, a FIFO, subdirectories). Any
 * fd that lands outside DIR, or a message with raw control bytes, aborts. */
#include <sys/stat.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/esc.h"
#include "serve/confine.h"

static char dir[] = "/tmp/dnd-fuzz-name.XXXXXX";
static char real[PATH_MAX];
static struct dnd_confine conf = { -1, NULL };

/* The scratch tree: its paths relative to dir, created in this order. */
static const char *const dirs[] = { "sub", "sub/deep", "sub2" };
static const char *const files[] = { "f", "sub/g", "sub/deep/h" };
static const char *const links[][2] = {
	{ "etc", "/etc" }, { "up", ".." }, { "sub/back", "../f" },
	{ "sub/root", "/" }, { "self", "/proc/self/root" },
};

static void path_of(const char *rel, char *p)
{
	snprintf(p, PATH_MAX, "%s/%s", dir, rel);
}

static void scratch_remove(void)
{
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		path_of(links[i][0], p), unlink(p);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		path_of(files[i], p), unlink(p);
	path_of("fifo", p);
	unlink(p);
	for (i = sizeof(dirs) / sizeof(dirs[0]); i-- > 0;)
		path_of(dirs[i], p), rmdir(p);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char p[PATH_MAX], why[1024];
	size_t i;

	if (!mkdtemp(dir) || !realpath(dir, real))
		abort();
	atexit(scratch_remove);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		path_of(dirs[i], p), mkdir(p, 0700);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		path_of(files[i], p), fclose(fopen(p, "w"));
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		path_of(links[i][0], p), symlink(links[i][1], p);
	path_of("fifo", p);
	mkfifo(p, 0600);
	if (confine_open(&conf, dir, why, sizeof(why))) {
		fprintf(stderr, "fuzz_name: %s\n", why);
		abort();
	}
	return 0;
}

/* Aborts unless fd is DIR or beneath it. */
static void beneath(int fd)
{
	char link[64], p[PATH_MAX + 1];
	size_t n = strlen(real);
	ssize_t r;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	r = readlink(link, p, sizeof(p) - 1);
	if (r < 0)
		abort();
	p[r] = '\0';
	if (strncmp(p, real, n) || (p[n] && p[n] != '/'))
		abort();
}

/* Aborts when a message could inject bytes into a log or a terminal. */
/* A message is printable ASCII or well-formed UTF-8 (a name is shown as
 * it is, escaped by esc_text), with no C0, DEL or C1 control. */
static void printable(const char *why)
{
	const unsigned char *p = (const unsigned char *)why;
	size_t n = strlen(why), k;

	while (n) {
		k = *p < 0x80 ? 1 : esc_utf8_len(p, n);
		if (!k || (k == 1 && (*p < 0x20 || *p > 0x7e)) ||
		    (p[0] == 0xc2 && p[1] < 0xa0))
			abort();
		p += k;
		n -= k;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	char *name = malloc(size ? size : 1), why[1024];
	struct dnd_confined t;
	struct stat st;
	int fd, rc;

	if (!name)
		abort();
	memcpy(name, d, size);	/* exact size, no NUL: ASan sees overreads */
	why[0] = '\0';
	rc = confine_check_name(name, size, why, sizeof(why));
	printable(why);
	if (!rc && (!size || memchr(name, 0, size) || name[0] == '/' ||
		    size >= PATH_MAX))
		abort();
	if (!confine_resolve(&conf, name, size, &t, why, sizeof(why))) {
		beneath(t.dirfd);
		if (rc || strchr(t.base, '/') || !t.base[0])
			abort();
		close(t.dirfd);
	}
	printable(why);
	if (!confine_open_read(&conf, name, size, &fd, why, sizeof(why))) {
		beneath(fd);
		if (fstat(fd, &st) || !S_ISREG(st.st_mode))
			abort();
		close(fd);
	}
	printable(why);
	free(name);
	return 0;
}
