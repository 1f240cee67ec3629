// SPDX-License-Identifier: MIT
/* Strict size, number, seconds and HOST:PORT parsing. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "cli/opts.h"
#include "core/net.h"

int main(void)
{
	uint64_t v = 0;
	double d = 0;
	char buf[32], host[64], err[160];
	uint16_t port = 0;

	CHECK(opt_parse_size("65536", &v) == 0 && v == 65536, "plain");
	CHECK(opt_parse_size("64Ki", &v) == 0 && v == 65536, "Ki");
	CHECK(opt_parse_size("1Mi", &v) == 0 && v == 1048576, "Mi");
	CHECK(opt_parse_size("2Gi", &v) == 0 && v == 2147483648ULL, "Gi");
	CHECK(opt_parse_size("3k", &v) == 0 && v == 3000, "k");
	CHECK(opt_parse_size("4M", &v) == 0 && v == 4000000, "M");
	CHECK(opt_parse_size("5G", &v) == 0 && v == 5000000000ULL, "G");
	CHECK(opt_parse_size("0", &v) == 0 && v == 0, "zero");
	CHECK(opt_parse_size("64K", &v) == -EINVAL, "K alone is not a suffix");
	CHECK(opt_parse_size("64Kib", &v) == -EINVAL, "trailing garbage");
	CHECK(opt_parse_size("64 Ki", &v) == -EINVAL, "space");
	CHECK(opt_parse_size("-1", &v) == -EINVAL, "negative");
	CHECK(opt_parse_size("+1", &v) == -EINVAL, "plus sign");
	CHECK(opt_parse_size("", &v) == -EINVAL, "empty");
	CHECK(opt_parse_size("0x10", &v) == -EINVAL, "hex");
	CHECK(opt_parse_size("18446744073709551615", &v) == 0 &&
	      v == UINT64_MAX, "max");
	CHECK(opt_parse_size("18446744073709551616", &v) == -ERANGE,
	      "overflow in digits");
	CHECK(opt_parse_size("17179869184Gi", &v) == -ERANGE,
	      "overflow in suffix");
	CHECK(opt_parse_uint("65535", 65535, &v) == 0 && v == 65535, "uint max");
	CHECK(opt_parse_uint("65536", 65535, &v) == -ERANGE, "uint over max");
	CHECK(opt_parse_uint("12x", 65535, &v) == -EINVAL, "uint garbage");
	CHECK(opt_parse_seconds("2", &d) == 0 && d == 2, "seconds");
	CHECK(opt_parse_seconds("0.5", &d) == 0 && d == 0.5, "fraction");
	CHECK(opt_parse_seconds("1.", &d) == -EINVAL, "dangling dot");
	CHECK(opt_parse_seconds("-1", &d) == -EINVAL, "negative seconds");
	CHECK(!strcmp(opt_fmt_size(65536, buf, sizeof(buf)), "64Ki"), "fmt Ki");
	CHECK(!strcmp(opt_fmt_size(1000, buf, sizeof(buf)), "1000"), "fmt plain");
	CHECK(net_split_hostport("127.0.0.1:80", false, host, sizeof(host),
				 &port, err, sizeof(err)) == 0 &&
	      port == 80 && !strcmp(host, "127.0.0.1"), "HOST:PORT");
	CHECK(net_split_hostport("[::1]:13931", false, host, sizeof(host),
				 &port, err, sizeof(err)) == 0 &&
	      port == 13931 && !strcmp(host, "::1"), "[V6]:PORT");
	CHECK(net_split_hostport("8080", true, host, sizeof(host), &port, err,
				 sizeof(err)) == 0 && port == 8080 && !host[0],
	      "PORT alone");
	/* fuzz_opts: strtoul() took blanks and a sign after them. */
	CHECK(net_split_hostport("h: 80", false, host, sizeof(host), &port,
				 err, sizeof(err)) == -EINVAL, "blank port");
	CHECK(net_split_hostport("\v4", true, host, sizeof(host), &port, err,
				 sizeof(err)) == -EINVAL, "\\v before the port");
	CHECK(net_split_hostport(" +80", true, host, sizeof(host), &port, err,
				 sizeof(err)) == -EINVAL, "blank and sign");
	return CHECK_DONE();
}
