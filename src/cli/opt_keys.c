// SPDX-License-Identifier: MIT
/* The options of a keyed end; see opt_keys.h. */
#include <stddef.h>

#include "cli/opt_keys.h"
#include "serve/key.h"

#define K struct dnd_keyfiles

const struct opt_def opt_keys[] = {
	{ .name = "key", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Keys (TLS 1.3)", .help = "a key file (mode 0600; at least "
	  "16 bytes; dnd serve --new-key makes one) both ends hold: the "
	  "connection is TLS 1.3 with it as the pre-shared key, so no one "
	  "on the path can read or change a byte", OPT_AT(K, key) },
	{ .name = "cert", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Keys (TLS 1.3)", .help = "this end's certificate chain "
	  "(PEM), for mutual TLS with --cert-key and --ca",
	  OPT_AT(K, cert) },
	{ .name = "cert-key", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Keys (TLS 1.3)", .help = "the private key of --cert "
	  "(PEM)", OPT_AT(K, cert_key) },
	{ .name = "ca", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Keys (TLS 1.3)", .help = "the peer's certificate must "
	  "chain to one of these (PEM) and be valid now", OPT_AT(K, ca) },
	{ .name = NULL },
};
