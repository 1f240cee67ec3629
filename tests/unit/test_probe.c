// SPDX-License-Identifier: MIT
/* The feature table, name lookup, and that a full probe leaks no fd. */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "check.h"
#include "xfer/method.h"
#include "probe/probe.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int main(void)
{
	const struct probe_feature *f, *g;
	struct probe_result r;
	struct probe_kernel k;
	struct probe_uring u;
	char why[320], names[1024];
	int before, after, dup, n = 0;

	for (f = probe_features(); f->name; f++, n++) {
		CHECK(f->check && f->what, "%s has check and text", f->name);
		CHECK(strlen(f->what) <= 50, "%s: what fits 50 columns",
		      f->name);
		CHECK(probe_feature_find(f->name) == f, "%s is found", f->name);
		for (dup = 0, g = f + 1; g->name; g++)
			dup += !strcmp(f->name, g->name);
		CHECK(!dup, "%s is unique", f->name);
		CHECK(strstr(probe_names(names, sizeof(names)), f->name),
		      "%s is listed", f->name);
	}
	CHECK(n >= 15, "%d features", n);
	CHECK(probe_feature("no-such", why, sizeof(why)) == -ENOENT &&
	      strstr(why, "no-such"), "unknown name: %s", why);
	CHECK(probe_feature("rw", why, sizeof(why)) == 0, "method rw: %s",
	      why);
	CHECK(probe_feature("rw", NULL, 0) == 0, "why may be NULL");

	probe_kernel(&k);
	CHECK(k.release[0] && k.page_size > 0, "kernel %s, page %ld",
	      k.release, k.page_size);
	CHECK(k.pipe_default > 0 && k.pipe_largest >= k.pipe_default,
	      "pipe %lld, largest %lld", k.pipe_default, k.pipe_largest);
	probe_uring(&u);
	CHECK(u.nops == DND_PROBE_URING_OPS && !strcmp(u.op[6].name, "SPLICE"),
	      "io_uring opcodes listed: %s", u.why);
	CHECK(u.err || u.built, "a usable io_uring was built in");

	before = count_fds();
	for (f = probe_features(); f->name; f++) {
		int e = probe_run(f, &r);

		CHECK(e <= 0 && e != -ENOENT && r.why[0], "%s: %s: %s", f->name,
		      e ? "no" : "yes", r.why);
	}
	after = count_fds();
	CHECK(before == after, "no fd leaked (%d before, %d after)", before,
	      after);
	return CHECK_DONE();
}
