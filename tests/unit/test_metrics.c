// SPDX-License-Identifier: MIT
/* /metrics: the exposition text's shape, and a live GET over loopback. */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/metrics.h"

/* One HTTP/1.0 GET of path on at ("127.0.0.1:PORT"); the reply in buf. */
static int get(const char *at, const char *path, char *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const char *colon = strrchr(at, ':');
	size_t got = 0;
	ssize_t n;
	int fd;

	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	dprintf(fd, "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	return 0;
}

int main(void)
{
	struct metrics_text t = { 0 };
	struct dnd_metrics *m;
	char at[64] = "", err[256] = "", reply[4096];
	int i;

	metrics_add(&t, "relay_bytes_total", "counter", "Bytes relayed.",
		    "dir=\"up\"", 123456789012.0);
	metrics_add(&t, "relay_bytes_total", "counter", NULL, "dir=\"down\"", 7);
	for (i = 0; i < 500; i++)	/* growth past the first buffers */
		metrics_add(&t, "relay_flows", "gauge", NULL, NULL, i);
	CHECK(t.buf && !t.oom && !strncmp(t.buf, "# HELP dnd_relay_bytes_total "
	      "Bytes relayed.\n# TYPE dnd_relay_bytes_total counter\n"
	      "dnd_relay_bytes_total{dir=\"up\"} 123456789012\n"
	      "dnd_relay_bytes_total{dir=\"down\"} 7\ndnd_relay_flows 0\n", 159),
	      "exposition text: %.160s", t.buf);
	m = metrics_start(NULL, 0, NULL, NULL, at, sizeof(at), err,
			  sizeof(err));
	CHECK(m && !strncmp(at, "127.0.0.1:", 10), "listening on %s %s", at,
	      err);
	if (!m)
		return CHECK_DONE();
	CHECK(get(at, "/metrics", reply, sizeof(reply)) == 0 &&
	      strstr(reply, "200 OK") && strstr(reply, "text/plain; version=0.0.4"),
	      "empty /metrics answers 200");
	metrics_publish(m, t.buf);
	CHECK(get(at, "/metrics", reply, sizeof(reply)) == 0 &&
	      strstr(reply, "dnd_relay_bytes_total{dir=\"up\"} 123456789012"),
	      "the published text is served");
	CHECK(get(at, "/other", reply, sizeof(reply)) == 0 &&
	      strstr(reply, "404"), "another path is 404");
	metrics_stop(m);
	metrics_text_free(&t);
	CHECK(get(at, "/metrics", reply, sizeof(reply)) == -1,
	      "stopped: nothing listens");
	return CHECK_DONE();
}
