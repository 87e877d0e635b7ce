/* metrics_serve.h - `--serve ADDR:PORT`: the metrics text over HTTP at
 * /metrics, from a child process that holds no privilege.
 *
 * clockprof runs as root with ptrace and BPF over production processes;
 * an HTTP parser facing the network must not. So the server is a child
 * forked before any target is touched: it keeps only the listening
 * socket (bound by the parent, so a port below 1024 and a clear error
 * both come before the fork), the socket the parent sends it each new
 * text on and stderr; it runs as `nobody` (or --serve-user) with no
 * supplementary groups, no capabilities (none permitted, effective,
 * inheritable or ambient, an empty bounding set) and no_new_privs, and
 * ends when the parent does (parent-death signal, and end of file on its
 * socket). It answers GET (and HEAD) /metrics with the latest text, 404
 * elsewhere, with GNU libmicrohttpd, which only the child loads (dlopen:
 * clockprof's own start stays free of it and its ten libraries). */
#ifndef CP_METRICS_SERVE_H
#define CP_METRICS_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct cp_error;
struct cp_metrics_server;

/* ADDR:PORT as parsed: [v6]:PORT, v4:PORT or a host name:PORT (its
 * first address). */
struct cp_serve_address {
	struct sockaddr_storage sa;
	socklen_t len;
	bool loopback;	/* 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 */
	char shown[80]; /* "127.0.0.1:9464", for messages */
};

/* Fails with CP_EXIT_USAGE on a malformed or unresolvable ADDR:PORT. */
int cp_serve_address_parse(const char *spec, struct cp_serve_address *a, struct cp_error *err);

/* Binds a, forks the server child, which runs as user (its uid and gid,
 * looked up here) and says whether it stands; NULL with err
 * (CP_EXIT_USAGE: cannot listen, no such user, no libmicrohttpd;
 * CP_EXIT_PROFILE: the privileges could not be dropped). */
struct cp_metrics_server *cp_metrics_serve_start(const struct cp_serve_address *a, const char *user,
						 struct cp_error *err);

/* Gives the child a new text to serve; 0, or -1 when it is gone. */
int cp_metrics_serve_send(struct cp_metrics_server *s, const char *text, size_t len);

pid_t cp_metrics_serve_pid(const struct cp_metrics_server *s);

/* Closes its socket (the child then ends) and reaps it (NULL is fine). */
void cp_metrics_serve_stop(struct cp_metrics_server *s);

#endif
