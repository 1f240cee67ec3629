// SPDX-License-Identifier: MIT
/* A file's data extents (sparse.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sparse.h"

static int sparse_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Past the cap, the k smallest holes become data: the threshold is the
 * k-th smallest hole; those below it go, then those equal to it, in
 * order, until k are gone. Deterministic, so a second scan of an
 * unchanged file gives the same list. 0 or -ENOMEM. */
static int sparse_cap(struct dnd_extent *e, uint32_t *n)
{
	uint32_t holes = *n - 1, k = *n - DND_EXTENTS_MAX, i, w = 0, eq;
	uint64_t *sz = malloc(sizeof(*sz) * holes), t;

	if (!sz)
		return -ENOMEM;
	for (i = 0; i < holes; i++)
		sz[i] = e[i + 1].off - (e[i].off + e[i].len);
	qsort(sz, holes, sizeof(*sz), sparse_cmp);
	t = sz[k - 1];
	for (i = 0, eq = 0; i < k; i++)
		eq += sz[i] == t;
	free(sz);
	for (i = 1; i < *n; i++) {
		uint64_t gap = e[i].off - (e[w].off + e[w].len);

		if (gap < t || (gap == t && eq && eq--)) {
			e[w].len = e[i].off + e[i].len - e[w].off;
			continue;
		}
		e[++w] = e[i];
	}
	*n = w + 1;
	return 0;
}

static int sparse_walk(int fd, off_t start, uint64_t len,
		       struct dnd_extent **out, uint32_t *n)
{
	off_t end = start + (off_t)len, at = start, data, hole;
	struct dnd_extent *e = NULL, *grown;
	size_t cap = 0;

	*n = 0;
	while (at < end) {
		data = lseek(fd, at, SEEK_DATA);
		if (data == -1 && errno == ENXIO)
			break;	/* holes to the end */
		if (data == -1 && (errno == EINVAL || errno == EOPNOTSUPP) &&
		    at == start) {
			data = start;	/* no SEEK_DATA: all data */
			hole = end;
		} else if (data == -1) {
			free(e);
			return -errno;
		} else {
			if (data >= end)
				break;
			hole = lseek(fd, data, SEEK_HOLE);
			if (hole == -1) {
				free(e);
				return -errno;
			}
		}
		if (hole > end)
			hole = end;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(e, cap * sizeof(*e));
			if (!grown) {
				free(e);
				return -ENOMEM;
			}
			e = grown;
		}
		e[*n].off = (uint64_t)(data - start);
		e[*n].len = (uint64_t)(hole - data);
		(*n)++;
		at = hole;
	}
	*out = e;
	return 0;
}

int sparse_scan(int fd, off_t start, uint64_t len, struct dnd_extent **out,
		uint32_t *n)
{
	off_t pos = lseek(fd, 0, SEEK_CUR);
	int r;

	*out = NULL;
	*n = 0;
	if (pos == -1)
		return -errno;
	r = sparse_walk(fd, start, len, out, n);
	if (!r && *n > DND_EXTENTS_MAX)
		r = sparse_cap(*out, n);
	if (lseek(fd, pos, SEEK_SET) == -1 && !r)
		r = -errno;
	if (r) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return r;
}

uint64_t sparse_data(const struct dnd_extent *e, uint32_t n)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		sum += e[i].len;
	return sum;
}
