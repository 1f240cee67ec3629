/* SPDX-License-Identifier: MIT */
/* Incompressible filler bytes for scratch files (bench sources, dnd serve's
 * scratch pull ends): a splitmix64 stream from a random seed. */
#ifndef DND_RANDFILL_H
#define DND_RANDFILL_H

#include <stdint.h>

/*
 * Writes len pseudo-random bytes to fd at its offset, stopping early with
 * -EINTR once io_stop_signal is set. Returns 0 or -errno.
 */
int randfill_fd(int fd, uint64_t len);

#endif
