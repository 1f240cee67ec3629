// SPDX-License-Identifier: MIT
/*
 * xxh3_twin: a file with a 1 KiB block that has a twin of the same XXH3-64,
 * to show what an unkeyed hash cannot catch (issue 21).
 *
 *   xxh3_twin SIZE OFFSET FILE TWIN
 *
 * writes FILE (SIZE random bytes, a crafted block at OFFSET) and TWIN (the
 * other 1024 bytes that may stand at OFFSET), then checks with the library's
 * XXH3_64bits that FILE with the block swapped hashes the same; exit 0 when
 * it does, 1 when not, 2 on a usage error.
 *
 * Why it works. For inputs over 240 bytes XXH3-64 walks 1 KiB blocks of 16
 * stripes of 64 bytes. Stripe s adds lane i's 64-bit word d (key k = the
 * default secret's word at byte s*8 + i*8) to two accumulators:
 *     acc[i ^ 1] += d;   acc[i] += lo32(d ^ k) * hi32(d ^ k);
 * and the accumulators are scrambled only between blocks. Pick lane i in
 * stripes s1 and s2 with lo32(d) == lo32(k): both products are 0 whatever
 * the high halves. Moving d1 up by 2^32 and d2 down by 2^32 keeps the low
 * halves (so the products stay 0) and the sum d1 + d2 (so acc[i ^ 1] keeps
 * its value): every accumulator ends the block as before. No secret is
 * needed: XXH3 has none, only a public constant.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#define BLOCK	1024	/* 16 stripes of 64 bytes with the default secret */
#define STRIPE	64
#define LANE	3	/* any of the 8 lanes */
#define S1	2	/* two different stripes of the block */
#define S2	11

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static int parse_size(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static int write_all(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return close(fd);
}

static int fill_random(unsigned char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = getrandom(buf + done, len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* The crafted block in place at blk, and its twin in twin. */
static void craft(unsigned char *blk, unsigned char *twin,
		  const unsigned char *secret)
{
	unsigned char *w1 = blk + S1 * STRIPE + LANE * 8;
	unsigned char *w2 = blk + S2 * STRIPE + LANE * 8;
	uint64_t k1 = le64(secret + S1 * 8 + LANE * 8);
	uint64_t k2 = le64(secret + S2 * 8 + LANE * 8);
	uint64_t d1 = (le64(w1) & ~0xffffffffULL) | (k1 & 0xffffffffULL);
	uint64_t d2 = (le64(w2) & ~0xffffffffULL) | (k2 & 0xffffffffULL);

	put_le64(w1, d1);
	put_le64(w2, d2);
	memcpy(twin, blk, BLOCK);
	put_le64(twin + (w1 - blk), d1 + (1ULL << 32));
	put_le64(twin + (w2 - blk), d2 - (1ULL << 32));
}

int main(int argc, char **argv)
{
	unsigned char secret[XXH3_SECRET_DEFAULT_SIZE], twin[BLOCK];
	unsigned long long size, off;
	unsigned char *buf;
	XXH64_hash_t h0, h1;

	if (argc != 5 || parse_size(argv[1], &size) ||
	    parse_size(argv[2], &off)) {
		fprintf(stderr, "usage: xxh3_twin SIZE OFFSET FILE TWIN\n");
		return 2;
	}
	/* A full block, not the last one (whose last stripe the final
	 * accumulation reads again with another part of the secret). */
	if (off % BLOCK || size < off + BLOCK + STRIPE || size > (1ULL << 30)) {
		fprintf(stderr, "xxh3_twin: OFFSET must be a multiple of %d "
			"with OFFSET + %d <= SIZE <= 1 GiB\n", BLOCK,
			BLOCK + STRIPE);
		return 2;
	}
	buf = malloc(size);
	if (!buf || fill_random(buf, size)) {
		perror("xxh3_twin");
		return 1;
	}
	/* The default secret is what a zero seed derives (seed 0 adds and
	 * subtracts nothing), so the library's own bytes are used. */
	XXH3_generateSecret_fromSeed(secret, 0);
	craft(buf + off, twin, secret);

	h0 = XXH3_64bits(buf, size);
	if (write_all(argv[3], buf, size) || write_all(argv[4], twin, BLOCK)) {
		perror("xxh3_twin: write");
		return 1;
	}
	memcpy(buf + off, twin, BLOCK);
	h1 = XXH3_64bits(buf, size);
	free(buf);
	printf("xxh3 %016llx original, %016llx twin at %llu\n",
	       (unsigned long long)h0, (unsigned long long)h1, off);
	if (h0 != h1) {
		fprintf(stderr, "xxh3_twin: the twin block changed the hash\n");
		return 1;
	}
	return 0;
}
