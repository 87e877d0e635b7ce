/* serve_address.c - --serve's ADDR:PORT, and whether it is loopback:
 * anything else needs --serve-any, since the metrics name the target's
 * executable, functions and source files. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "metrics_serve.h"

static bool is_loopback(const struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* Splits "[v6]:PORT" or "host:PORT" into host and port (in buf); -1 when
 * the shape is wrong. */
static int split(const char *spec, char *buf, size_t size, char **host, char **port)
{
	char *colon;

	if (snprintf(buf, size, "%s", spec) >= (int)size)
		return -1;
	colon = strrchr(buf, ':');
	if (!colon || colon == buf || !colon[1])
		return -1;
	*colon = '\0';
	*port = colon + 1;
	*host = buf;
	if (buf[0] == '[') {
		if (colon[-1] != ']')
			return -1;
		colon[-1] = '\0';
		*host = buf + 1;
	} else if (strchr(buf, ':')) {
		return -1; /* a v6 address needs its brackets */
	}
	return **host ? 0 : -1;
}

int cp_serve_address_parse(const char *spec, struct cp_serve_address *a, struct cp_error *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res;
	char buf[300], *host, *port, *end, name[INET6_ADDRSTRLEN];
	long n;
	int rc;

	if (split(spec, buf, sizeof(buf), &host, &port))
		return cp_fail(err, CP_EXIT_USAGE,
			       "invalid --serve '%s': give ADDR:PORT "
			       "(127.0.0.1:9464, [::1]:9464)",
			       spec);
	n = strtol(port, &end, 10);
	if (*end || n < 1 || n > 65535)
		return cp_fail(err, CP_EXIT_USAGE, "invalid --serve port '%s': give 1 to 65535",
			       port);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return cp_fail(err, CP_EXIT_USAGE, "--serve: cannot resolve '%s': %s", host,
			       gai_strerror(rc));
	memset(a, 0, sizeof(*a));
	memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	a->loopback = is_loopback(&a->sa);
	if (a->sa.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&a->sa)->sin6_addr, name,
			  sizeof(name));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&a->sa)->sin_addr, name, sizeof(name));
	snprintf(a->shown, sizeof(a->shown), a->sa.ss_family == AF_INET6 ? "[%s]:%ld" : "%s:%ld",
		 name, n);
	return 0;
}
