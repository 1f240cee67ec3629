// SPDX-License-Identifier: MIT
/* A killed session's temporary file, removed by the parent; see litter.h. */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "serve/litter.h"

int litter_note(struct serve_litter *r, const char *name, size_t name_len,
		int fd, const char *tmp)
{
	const char *base = strrchr(tmp, '/');
	struct stat st;

	base = base ? base + 1 : tmp;
	if (name_len >= sizeof(r->name) || strlen(base) >= sizeof(r->tmp) ||
	    !*base)
		return -ENAMETOOLONG;
	if (fstat(fd, &st))
		return -errno;
	__atomic_store_n(&r->set, 0, __ATOMIC_SEQ_CST);
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->name_len = name_len;
	memcpy(r->name, name, name_len);
	r->name[name_len] = '\0';
	strcpy(r->tmp, base);
	__atomic_store_n(&r->set, 1, __ATOMIC_SEQ_CST);
	return 0;
}

void litter_clear(struct serve_litter *r)
{
	__atomic_store_n(&r->set, 0, __ATOMIC_SEQ_CST);
}

int litter_sweep(const struct dnd_confine *dir, struct serve_litter *r)
{
	struct dnd_confined t;
	struct stat st;
	char why[320];
	size_t tl;
	int n = 0;

	if (!__atomic_exchange_n(&r->set, 0, __ATOMIC_SEQ_CST))
		return 0;
	if (r->name_len >= sizeof(r->name) || confine_resolve(dir, r->name,
		r->name_len, &t, why, sizeof(why)))
		return 0;	/* the parent directory is gone or moved */
	/* One component, no slash: it cannot leave t.dirfd. */
	tl = strnlen(r->tmp, sizeof(r->tmp));
	if (tl == sizeof(r->tmp) || memchr(r->tmp, '/', tl))
		n = -EINVAL;
	else if (fstatat(t.dirfd, r->tmp, &st, AT_SYMLINK_NOFOLLOW))
		n = errno == ENOENT ? 0 : -errno;
	else if (S_ISREG(st.st_mode) && st.st_dev == r->dev &&
		 st.st_ino == r->ino)
		n = unlinkat(t.dirfd, r->tmp, 0) ? -errno : 1;
	close(t.dirfd);
	return n;
}
