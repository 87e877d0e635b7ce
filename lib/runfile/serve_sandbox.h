/* serve_sandbox.h - the --serve child's privileges, dropped for good
 * before it parses a byte from the network (metrics_serve.h says why). */
#ifndef CP_SERVE_SANDBOX_H
#define CP_SERVE_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

/* Becomes uid:gid with no supplementary groups, an empty capability
 * bounding set, no capabilities in any set (ambient included) and
 * no_new_privs, then checks that it holds: 0, or -1 with why filled. */
int cp_serve_sandbox(uid_t uid, gid_t gid, char *why, size_t size);

#endif
