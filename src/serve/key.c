// SPDX-License-Identifier: MIT
/* Key files for dnd serve: strict loading and exclusive, atomic creation. */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "serve/key.h"

void key_wipe(struct dnd_key *k)
{
	sodium_memzero(k, sizeof(*k));
}

/* A user as "name (uid N)", or "uid N" when it has no name; name (when
 * not NULL) gets what chown takes: the name, or the number. */
static void key_user(uid_t uid, char *out, size_t len, char *name,
		     size_t nlen)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	bool named = !getpwuid_r(uid, &pw, buf, sizeof(buf), &res) && res;

	if (named)
		snprintf(out, len, "%s (uid %u)", pw.pw_name, (unsigned int)uid);
	else
		snprintf(out, len, "uid %u", (unsigned int)uid);
	if (name)
		snprintf(name, nlen, "%s", named ? pw.pw_name : out + 4);
}

/*
 * A systemd credential (LoadCredential=): a file right in the directory
 * $CREDENTIALS_DIRECTORY names, which systemd mounts read-only for this
 * service alone; the file is root's, and an ACL lets the service's user
 * read it, so neither the owner nor the mode check can apply.
 */
static bool key_credential(const char *path)
{
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	size_t n = dir ? strlen(dir) : 0;

	return n > 1 && dir[0] == '/' && !strncmp(path, dir, n) &&
	       path[n] == '/' && path[n + 1] && !strchr(path + n + 1, '/');
}

/* Refuses a key file that is not regular, that another user owns, or that
 * others may read (but for a systemd credential). */
static int key_check_stat(int fd, const char *path, char *why, size_t len)
{
	char owner[300], me[300], name[256];
	struct stat st;

	if (fstat(fd, &st) == -1) {
		snprintf(why, len, "key file %s: fstat: %s", path,
			 strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, len, "key file %s is not a regular file", path);
		return -EINVAL;
	}
	if (key_credential(path))
		return 0;
	if (st.st_uid != geteuid()) {
		key_user(st.st_uid, owner, sizeof(owner), NULL, 0);
		key_user(geteuid(), me, sizeof(me), name, sizeof(name));
		snprintf(why, len, "key file %s is owned by %s, not by %s who "
			 "runs dnd; run chown %s %s", path, owner, me, name,
			 path);
		return -EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(why, len, "key file %s has mode %04o: group or others "
			 "may access it; run chmod 600 %s", path,
			 (unsigned int)(st.st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

/* Reads at most cap bytes (to EOF) into buf; returns the count or -errno. */
static ssize_t key_read_all(int fd, uint8_t *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	while (got < cap) {
		n = read(fd, buf + got, cap - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Checks the secret's length once the trailing newline is dropped. */
static int key_check_len(struct dnd_key *k, size_t n, const char *path,
			 char *why, size_t len)
{
	if (n > DND_KEY_MAX) {
		snprintf(why, len, "key file %s is longer than %d bytes",
			 path, DND_KEY_MAX);
		return -EINVAL;
	}
	if (n && k->bytes[n - 1] == '\n')
		n--;
	if (n < DND_KEY_MIN) {
		snprintf(why, len, "key file %s holds %zu bytes; a key needs at "
			 "least %d (make one with dnd serve --new-key FILE)",
			 path, n, DND_KEY_MIN);
		return -EINVAL;
	}
	k->len = n;
	return 0;
}

int key_load(const char *path, struct dnd_key *k, char *why, size_t len)
{
	uint8_t extra[2];
	ssize_t n, more;
	int fd, err;

	key_wipe(k);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		err = -errno;
		snprintf(why, len, "key file %s: %s", path, strerror(errno));
		return err;
	}
	err = key_check_stat(fd, path, why, len);
	if (err)
		goto out;
	/* One byte past the limit tells "too long" from "exactly full". */
	n = key_read_all(fd, k->bytes, DND_KEY_MAX);
	more = n < 0 ? 0 : key_read_all(fd, extra, 1);
	if (n < 0 || more < 0) {
		err = n < 0 ? (int)n : (int)more;
		snprintf(why, len, "key file %s: read: %s", path,
			 strerror(-err));
		goto out;
	}
	err = key_check_len(k, (size_t)(n + more), path, why, len);
	sodium_memzero(extra, sizeof(extra));
out:
	close(fd);
	if (err)
		key_wipe(k);
	return err;
}

/* Writes the hex key to fd and syncs it; 0 or -errno. */
static int key_write_hex(int fd)
{
	uint8_t raw[DND_KEY_NEW_LEN];
	char hex[2 * DND_KEY_NEW_LEN + 2];
	size_t n = 2 * DND_KEY_NEW_LEN + 1, off = 0;
	ssize_t w;
	int err = 0;

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(hex, sizeof(hex), raw, sizeof(raw));
	hex[2 * DND_KEY_NEW_LEN] = '\n';
	while (off < n && !err) {
		w = write(fd, hex + off, n - off);
		if (w == -1 && errno != EINTR)
			err = -errno;
		else if (w > 0)
			off += (size_t)w;
	}
	if (!err && fsync(fd) == -1)
		err = -errno;
	sodium_memzero(raw, sizeof(raw));
	sodium_memzero(hex, sizeof(hex));
	return err;
}

/* The directory holding path: "." for a bare name, "/" at the root. */
static void key_dir(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path + (slash == path)),
			 path);
}

/* fsyncs the directory holding path, so the new link survives a crash. */
static void key_sync_dir(const char *path)
{
	char dir[4096];
	int fd;

	key_dir(path, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return;
	fsync(fd);
	close(fd);
}

/*
 * Makes the directory holding path when it alone is missing, as install -d
 * makes its last one: mode 0700, a key's home (so that --new-key
 * /etc/dnd/key works on a fresh machine). A deeper missing path is the
 * user's to make: -ENOENT, and why says how.
 */
static int key_make_dir(const char *path, bool *made, char *why, size_t len)
{
	char dir[4096], up[4096];
	struct stat st;

	*made = false;
	key_dir(path, dir, sizeof(dir));
	if (stat(dir, &st) == 0 || errno != ENOENT)
		return 0;	/* there, or a failure mkostemp will name */
	if (mkdir(dir, 0700) == 0) {
		if (chmod(dir, 0700) == 0) {	/* past any umask */
			*made = true;
			return 0;
		}
		snprintf(why, len, "cannot chmod 700 %s: %s", dir,
			 strerror(errno));
		rmdir(dir);
		return -EPERM;
	}
	if (errno == ENOENT) {
		key_dir(dir, up, sizeof(up));
		snprintf(why, len, "cannot create key file %s: %s does not "
			 "exist, nor does %s (dnd makes only the last "
			 "directory); run mkdir -p %s first", path, dir, up, up);
		return -ENOENT;
	}
	snprintf(why, len, "cannot create directory %s for the key: %s", dir,
		 strerror(errno));
	return -errno;
}

int key_new(const char *path, bool *made_dir, char *why, size_t len)
{
	char tmp[4096], dir[4096];
	struct stat st;
	int fd, err;

	*made_dir = false;
	if (sodium_init() < 0) {
		snprintf(why, len, "libsodium failed to initialise");
		return -EIO;
	}
	if (lstat(path, &st) == 0) {
		snprintf(why, len, "%s exists; refusing to overwrite a key file "
			 "(remove it first or choose another name)", path);
		return -EEXIST;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		snprintf(why, len, "key file name is too long");
		return -ENAMETOOLONG;
	}
	err = key_make_dir(path, made_dir, why, len);
	if (err)
		return err;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd == -1) {
		err = -errno;
		snprintf(why, len, "cannot create key file %s: %s", path,
			 strerror(errno));
		goto out;
	}
	/* mkostemp's 0600 is masked by the umask; the key must be 0600. */
	err = fchmod(fd, 0600) == -1 ? -errno : key_write_hex(fd);
	if (close(fd) == -1 && !err)
		err = -errno;
	if (err)
		snprintf(why, len, "cannot write key file %s: %s", path,
			 strerror(-err));
	/* link() refuses an existing path atomically, unlike rename(). */
	if (!err && link(tmp, path) == -1) {
		err = -errno;
		if (err == -EEXIST)
			snprintf(why, len, "%s exists; refusing to overwrite a "
				 "key file (remove it first or choose another "
				 "name)", path);
		else
			snprintf(why, len, "cannot create %s: %s", path,
				 strerror(errno));
	}
	unlink(tmp);
out:
	if (!err) {
		key_sync_dir(path);
	} else if (*made_dir) {
		key_dir(path, dir, sizeof(dir));
		rmdir(dir);
		*made_dir = false;
	}
	return err;
}

bool key_files_given(const struct dnd_keyfiles *f)
{
	return f->key || f->cert || f->cert_key || f->ca;
}

/* The key file into memory of its own, wiped but for the derived PSK. */
static int key_psk(const char *path, struct dnd_key **out, char *why,
		   size_t len)
{
	struct dnd_key *k;
	int r;

	*out = NULL;
	if (sodium_init() < 0 || !(k = sodium_malloc(sizeof(*k)))) {
		snprintf(why, len, "no memory for the key");
		return -ENOMEM;
	}
	r = key_load(path, k, why, len);
	if (!r && tls_psk_derive(k->bytes, k->len, k->psk)) {
		snprintf(why, len, "cannot derive the TLS key from %s "
			 "(HKDF-SHA256 in OpenSSL)", path);
		r = -EPROTO;
	}
	sodium_memzero(k->bytes, sizeof(k->bytes));
	k->len = 0;
	if (r) {
		key_free(k);
		return r;
	}
	sodium_mprotect_readonly(k);
	*out = k;
	return 0;
}

int key_tls_cfg(const struct dnd_keyfiles *f, struct dnd_key **k,
		struct dnd_tls_cfg *cfg, char *why, size_t len)
{
	int n = !!f->cert + !!f->cert_key + !!f->ca, r;

	memset(cfg, 0, sizeof(*cfg));
	*k = NULL;
	if (n && n < 3) {
		snprintf(why, len, "certificates need --cert FILE, --cert-key "
			 "FILE and --ca FILE together; %s is missing",
			 !f->cert ? "--cert" : !f->cert_key ? "--cert-key" :
			 "--ca");
		return -EINVAL;
	}
	/* Before any secret is read: a core dump or a debugger of the same
	 * user would see it. */
	if (key_files_given(f))
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (f->key) {
		r = key_psk(f->key, k, why, len);
		if (r)
			return r;
		cfg->psk = (*k)->psk;
	}
	cfg->cert = f->cert;
	cfg->cert_key = f->cert_key;
	cfg->ca = f->ca;
	return 0;
}

void key_free(struct dnd_key *k)
{
	if (k)
		sodium_free(k);	/* zeroes it first */
}
