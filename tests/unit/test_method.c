// SPDX-License-Identifier: MIT
/* The registry: unique names, a direction each, teardown always set. */
#include <string.h>

#include "check.h"
#include "xfer/method.h"

int main(void)
{
	const struct dnd_method *const *a, *const *b;
	char why[256], names[128];
	int n = 0;

	for (a = method_all(); *a; a++, n++) {
		CHECK((*a)->name && (*a)->name[0], "method %d has a name", n);
		CHECK((*a)->send || (*a)->recv, "%s has a direction", (*a)->name);
		CHECK((*a)->setup && (*a)->teardown, "%s has setup and teardown",
		      (*a)->name);
		CHECK(!(*a)->send == !(*a)->send_help, "%s documents send",
		      (*a)->name);
		CHECK(!(*a)->recv == !(*a)->recv_help, "%s documents recv",
		      (*a)->name);
		CHECK(method_find((*a)->name) == *a, "%s is found", (*a)->name);
		for (b = a + 1; *b; b++)
			CHECK(strcmp((*a)->name, (*b)->name), "%s unique",
			      (*a)->name);
		if (method_probe(*a, why, sizeof(why)))
			CHECK(why[0], "%s says why it is unusable", (*a)->name);
	}
	CHECK(n >= 6, "the 2006 program's five methods and null are registered");
	CHECK(method_find("nope") == NULL, "unknown name");
	CHECK(!method_find("sendfile")->recv, "sendfile cannot receive");
	CHECK(!strcmp(method_names(true, names, sizeof(names)),
		      "rw, mmap, sendfile, splice, vmsplice, zerocopy"
#ifdef DND_HAVE_LIBURING
		      ", uring, uring-splice"
#endif
		      ), "send names: %s", names);
	return CHECK_DONE();
}
