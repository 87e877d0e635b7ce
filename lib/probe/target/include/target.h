/* target.h - what we learn about the target process from /proc before and
 * while profiling it: identity (for run.json and for noticing a reused pid),
 * its executable and libraries (read through /proc/PID/root, so a target in
 * a container resolves in its own mount namespace) and where
 * its vDSO is mapped. */
#ifndef CP_TARGET_H
#define CP_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

struct cp_error;

/* The command line kept: whole arguments up to 64 KiB in all. */
#define CP_CMDLINE_KEEP 65536

struct cp_target {
	pid_t pid;
	char comm[64];
	char exe[PATH_MAX];	  /* as the target sees it */
	char exec_path[PATH_MAX]; /* the path it was started by (AT_EXECFN):
				   * a symlink to exe, a script exe runs;
				   * "" when unknown */
	char exe_access[64];	  /* a path we can open and uprobe: /proc/PID/exe */
	char build_id[130];
	char **argv; /* command line, NULL-terminated */
	int argc;
	int argc_total;		       /* arguments it had: more than argc when cut */
	bool cmdline_rewritten;	       /* a title written over it: its padding dropped */
	unsigned long long start_time; /* clock ticks after boot: pid identity */
	uint64_t vdso_start, vdso_end;
};

/* Fails with CP_EXIT_PROFILE for no such process, a kernel thread, or a
 * process that exited. Everything but the build-id (cp_target_identify). */
int cp_target_inspect(pid_t pid, struct cp_target *t, struct cp_error *err);
/* The executable's build-id, for run.json only: read while the probes are
 * loaded (1-2 ms with libelf here), not before. */
void cp_target_identify(struct cp_target *t);
void cp_target_release(struct cp_target *t);
/* argv from buf[0..n) of /proc/PID/cmdline (buf has room for one byte
 * more): whole when that was the whole file, argc_total the arguments the
 * whole file holds. A title's padding (empty arguments at its end) is
 * dropped, and cmdline_rewritten set. */
void cp_target_cmdline_parse(struct cp_target *t, char *buf, size_t n, bool whole, int argc_total);

/* Resolves FILE of a func:FILE:SYMBOL spec to a path we can open: an
 * absolute FILE through /proc/PID/root, a FILE with a '/' (./server) from
 * PID's working directory, else the mapped module whose base name is FILE
 * or starts with FILE followed by '.' or '-' ("libc" finds libc.so.6).
 * shown receives the path as the target sees it. */
int cp_target_resolve_file(pid_t pid, const char *file, char *path, size_t size, char *shown,
			   size_t shown_size, struct cp_error *err);

#endif
