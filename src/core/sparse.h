/* SPDX-License-Identifier: MIT */
/*
 * A file's data extents, found with SEEK_DATA and SEEK_HOLE (proto.h's
 * extents: what a sparse file sends; the rest are holes).
 */
#ifndef DND_SPARSE_H
#define DND_SPARSE_H

#include <sys/types.h>
#include <stdint.h>

#include "core/proto.h"

/*
 * The data extents of [start, start + len) of fd, offsets from start, in
 * a new array (*out, the caller frees it; NULL when *n is 0, all holes):
 * at most DND_EXTENTS_MAX, past which the smallest holes are counted as
 * data. A file system without SEEK_HOLE says one extent, all data. fd's
 * file position is kept. 0 or -errno.
 */
int sparse_scan(int fd, off_t start, uint64_t len, struct dnd_extent **out,
		uint32_t *n);

/* Bytes of the extents. */
uint64_t sparse_data(const struct dnd_extent *e, uint32_t n);

#endif
