// SPDX-License-Identifier: MIT
/* dnd serve's key files: modes and other owners refused, lengths
 * bounded, one newline dropped, --new-key's exclusive, atomic 0600
 * output, and what key_tls_cfg keeps of a key and where. */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "serve/key.h"

static void write_file(const char *path, const char *s, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd == -1 || write(fd, s, n) != (ssize_t)n)
		perror(path);
	fchmod(fd, mode);
	close(fd);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void test_key_load(const char *dir)
{
	char p[256], want[1200], why[1200];
	struct dnd_key k;

	snprintf(p, sizeof(p), "%s/k644", dir);
	write_file(p, "0123456789abcdefXYZ\n", 20, 0644);
	snprintf(want, sizeof(want), "key file %s has mode 0644: group or "
		 "others may access it; run chmod 600 %s", p, p);
	CHECK(key_load(p, &k, why, sizeof(why)) == -EPERM &&
	      !strcmp(why, want), "mode 0644 refused: %s", why);
	snprintf(p, sizeof(p), "%s/kshort", dir);
	write_file(p, "0123456789abcde\n", 16, 0600);
	CHECK(key_load(p, &k, why, sizeof(why)) == -EINVAL &&
	      strstr(why, "holds 15 bytes; a key needs at least 16"),
	      "a 15-byte key refused: %s", why);
	snprintf(p, sizeof(p), "%s/k16", dir);
	write_file(p, "0123456789abcdef\n", 17, 0600);
	CHECK(key_load(p, &k, why, sizeof(why)) == 0 && k.len == 16 &&
	      !memcmp(k.bytes, "0123456789abcdef", 16),
	      "16 bytes and a newline: the newline is not the key");
	write_file(p, "0123456789abcdef\n\n", 18, 0600);
	CHECK(key_load(p, &k, why, sizeof(why)) == 0 && k.len == 17 &&
	      k.bytes[16] == '\n', "only one trailing newline is dropped");
	CHECK(key_load(dir, &k, why, sizeof(why)) == -EINVAL,
	      "a directory is no key file: %s", why);
	snprintf(p, sizeof(p), "%s/fifo", dir);
	mkfifo(p, 0600);
	CHECK(key_load(p, &k, why, sizeof(why)) == -EINVAL,
	      "a FIFO is refused without blocking: %s", why);
	unlink(p);
}

/* Another user's key file is refused, naming both users and the fix;
 * only root can give a file away. */
static void test_key_owner(const char *dir)
{
	char p[256], want[1200], why[1200];
	struct dnd_key k;

	if (geteuid() != 0) {
		printf("# not root: the owner check is not tried\n");
		return;
	}
	snprintf(p, sizeof(p), "%s/kother", dir);
	write_file(p, "0123456789abcdefXYZ\n", 20, 0600);
	CHECK(chown(p, 65534, 65534) == 0, "chown to uid 65534");
	snprintf(want, sizeof(want), "key file %s is owned by ", p);
	CHECK(key_load(p, &k, why, sizeof(why)) == -EPERM &&
	      !strncmp(why, want, strlen(want)) &&
	      strstr(why, "(uid 65534), not by root (uid 0) who runs dnd; "
			  "run chown root ") && strstr(why, p + 1),
	      "another user's key file refused: %s", why);
	/* systemd's LoadCredential= copy: root's, 0440 with an ACL. */
	chmod(p, 0440);
	setenv("CREDENTIALS_DIRECTORY", dir, 1);
	CHECK(key_load(p, &k, why, sizeof(why)) == 0 && k.len == 19,
	      "a file right in $CREDENTIALS_DIRECTORY is systemd's: %s", why);
	setenv("CREDENTIALS_DIRECTORY", "/tmp", 1);
	CHECK(key_load(p, &k, why, sizeof(why)) == -EPERM,
	      "...not one beneath it: %s", why);
	unsetenv("CREDENTIALS_DIRECTORY");
}

/* The VmFlags of the mapping holding addr, from /proc/self/smaps. */
static void vm_flags(const void *addr, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	unsigned long lo, hi, a = (unsigned long)addr;
	char line[512];
	bool in = false;

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			snprintf(out, len, "%s", line + 8);
	}
	if (f)
		fclose(f);
}

/* key_tls_cfg keeps the derived PSK alone, in memory left out of core
 * dumps, and makes the process undumpable. */
static void test_key_tls_cfg(const char *dir)
{
	static const uint8_t zero[DND_KEY_MAX];
	char p[256], why[1200], flags[512];
	struct dnd_keyfiles f = { .key = p };
	uint8_t want[DND_TLS_PSK_LEN];
	struct dnd_tls_cfg cfg;
	struct dnd_key *k;

	snprintf(p, sizeof(p), "%s/kcfg", dir);
	write_file(p, "0123456789abcdefXYZ\n", 20, 0600);
	CHECK(prctl(PR_GET_DUMPABLE) == 1, "dumpable before a key is read");
	CHECK(key_tls_cfg(&f, &k, &cfg, why, sizeof(why)) == 0 && k,
	      "key_tls_cfg: %s", why);
	CHECK(tls_psk_derive((const uint8_t *)"0123456789abcdefXYZ", 19,
			     want) == 0 && cfg.psk == k->psk &&
	      !memcmp(k->psk, want, sizeof(want)),
	      "cfg.psk is the HKDF of the key file's bytes");
	CHECK(k->len == 0 && !memcmp(k->bytes, zero, sizeof(zero)),
	      "the key file's bytes are wiped");
	CHECK(prctl(PR_GET_DUMPABLE) == 0, "undumpable once a key is read");
	vm_flags(k, flags, sizeof(flags));
	CHECK(strstr(flags, " dd"), "the key's page is left out of core dumps "
	      "(VmFlags:%s)", flags);
	key_free(k);
	f.key = NULL;
	CHECK(key_tls_cfg(&f, &k, &cfg, why, sizeof(why)) == 0 && !k &&
	      !cfg.psk, "no --key: no key, no PSK");
}

static void test_key_new(const char *dir)
{
	char p[400], buf[300], buf2[128], why[1024];
	struct dnd_key k;
	struct stat st;
	mode_t um;
	bool made;
	int fd, i, hex = 0;
	ssize_t n;

	/* Only the last directory is made: a deeper missing one is named. */
	snprintf(p, sizeof(p), "%s/no/new/key", dir);
	CHECK(key_new(p, &made, why, sizeof(why)) == -ENOENT && !made &&
	      strstr(why, "/no/new does not exist, nor does ") &&
	      strstr(why, "(dnd makes only the last directory); run mkdir -p ")
	      && strstr(why, "/no first"), "a deeper missing path: %s", why);
	snprintf(buf, sizeof(buf), "%s/no", dir);
	CHECK(stat(buf, &st) == -1 && errno == ENOENT, "nothing made for it");
	/* "new" is missing: made, 0700 whatever the umask. */
	snprintf(buf, sizeof(buf), "%s/new", dir);
	snprintf(p, sizeof(p), "%s/key", buf);
	um = umask(0277);	/* the key must be 0600 whatever the umask */
	CHECK(key_new(p, &made, why, sizeof(why)) == 0 && made,
	      "--new-key makes its missing directory: %s", why);
	umask(um);
	CHECK(stat(buf, &st) == 0 && (st.st_mode & 07777) == 0700,
	      "the new directory is 0700 (%o)", (unsigned int)(st.st_mode & 07777));
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	for (i = 0; i < 64 && n == 65; i++)
		hex += !!strchr("0123456789abcdef", buf[i]) && buf[i];
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600,
	      "mode 0600 (%o)", (unsigned int)(st.st_mode & 07777));
	CHECK(n == 65 && hex == 64 && buf[64] == '\n',
	      "64 hex characters and a newline");
	CHECK(key_load(p, &k, why, sizeof(why)) == 0 && k.len == 64,
	      "the new key loads: %s", why);
	CHECK(key_new(p, &made, why, sizeof(why)) == -EEXIST && !made &&
	      strstr(why, "refusing to overwrite"), "refuses to overwrite: %s",
	      why);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	CHECK(read(fd, buf2, sizeof(buf2)) == 65 && !memcmp(buf, buf2, 65),
	      "the old key is unchanged");
	close(fd);
	strcpy(buf, p);
	*strrchr(buf, '/') = '\0';
	CHECK(count_entries(buf) == 1, "no temporary is left behind");
	unlink(p);
	rmdir(buf);
}

int main(void)
{
	char dir[] = "/tmp/dnd-test-key.XXXXXX", cmd[128];

	if (!mkdtemp(dir))
		return DND_T_FAIL;
	test_key_load(dir);
	test_key_owner(dir);
	test_key_new(dir);
	test_key_tls_cfg(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return CHECK_DONE();
}
