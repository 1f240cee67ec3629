// SPDX-License-Identifier: MIT
/*
 * A verifier rejection of the -m sockmap program is told as such, with the
 * verifier's own reason. The program dnd ships passes the verifier, so the
 * test makes its sockmap a plain array before the load, through
 * relay_bpf_open_edit() (no option of dnd reaches it),
 * and checks the message relay_bpf_open() would give -m sockmap, which
 * then exits 2 (the same path as 30-relay-faults' missing privileges).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "check.h"
#include "relay/relay_bpf.h"

/* The sockmap made a plain array: the program's bpf_sk_redirect_map()
 * on it is refused by the verifier, the program itself untouched. */
static void array_for_sockmap(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "socks");

	if (m)
		bpf_map__set_type(m, BPF_MAP_TYPE_ARRAY);
}

static const char verifier_said[] =
	"the kernel's BPF verifier rejected the sockmap program (";

int main(void)
{
	struct relay_bpf *b = NULL;
	char msg[512] = "";
	int e;

	if (geteuid() != 0) {
		printf("# SKIP: loading a BPF program needs root\n");
		return DND_T_SKIP;
	}
	/* Does the real program load here at all (kernel, privileges)? */
	e = relay_bpf_open(2, &b, msg, sizeof(msg));
	relay_bpf_close(b);
	if (e) {
		printf("# SKIP: -m sockmap cannot run here: %s\n", msg);
		return DND_T_SKIP;
	}
	CHECK(!e, "the shipped program passes the verifier");

	b = NULL;
	msg[0] = '\0';
	e = relay_bpf_open_edit(2, array_for_sockmap, &b, msg, sizeof(msg));
	CHECK(e == -EINVAL && !b, "a rejected program: -EINVAL, no handle "
	      "(got %d)", e);
	CHECK(!strncmp(msg, verifier_said, sizeof(verifier_said) - 1),
	      "the message names the verifier: %s", msg);
	CHECK(strstr(msg, "cannot pass map_type 2 into func "
			  "bpf_sk_redirect_map") != NULL,
	      "and gives its reason");
	CHECK(strstr(msg, "; use -m splice") != NULL, "and the fix");
	relay_bpf_close(b);
	return CHECK_DONE();
}
