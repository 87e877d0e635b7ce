/* uprobe_multi.h - many uprobes in one file as one BPF link (Linux 6.6+).
 *
 * Removing a uprobe waits for an RCU grace period (~0.1 s on the VMs this
 * runs on), and uprobes made through perf events are removed one after the
 * other under a global mutex: a handful of them cost most of a short
 * window's wall time. A uprobe_multi link places every offset of one file
 * with one syscall and removes them all with one grace period; links closed
 * together share it. libbpf 1.1 (Debian 12) has no API for it, so the link
 * is made with the bpf() syscall directly. Kernels without it keep the
 * per-offset uprobes (lib/probe/session/session_attach.c). */
#ifndef CP_UPROBE_MULTI_H
#define CP_UPROBE_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The attach type the programs must be loaded with (enum bpf_attach_type's
 * BPF_TRACE_UPROBE_MULTI, newer than the kernel headers of Debian 12). */
#define CP_BPF_TRACE_UPROBE_MULTI 48

/* Whether this kernel makes uprobe_multi links (asked once, by whichever
 * thread asks first; a small test program is loaded).
 * CLOCKPROF_UPROBE_MULTI=0 in the environment says no, so the per-offset
 * fallback can be tested on kernels that have it. */
bool cp_uprobe_multi_supported(void);

/* A program that does nothing, loaded for uprobe_multi links: its fd, or
 * -1 with errno set. */
int cp_uprobe_multi_noop_prog(void);

/* A uprobe link (a uprobe_multi one, or a perf-event uprobe's for one
 * offset: registrar.h) with what it probes: the file, the offsets and in
 * whose code, so that once it is removed its breakpoints can be seen to
 * have left that code (uprobe_removal.h). */
struct cp_uprobe_link {
	int fd; /* -1: none */
	pid_t pid;
	char *path;	   /* malloc'd, as given to the kernel */
	uint64_t *offsets; /* malloc'd, n of them */
	size_t n;
};

/* The uprobe_multi link itself (the bpf() system call alone): pid 0 is
 * every process. Its fd, or -1 with errno set. */
int cp_uprobe_multi_link_create(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
				const uint64_t *cookies, size_t n);

/* *l made to remember the link fd made by the registrar (registrar.h)
 * with what it probes: pid's code is the one checked at removal. 0, or -1 with errno set (fd
 * then closed, l->fd -1). */
int cp_uprobe_link_adopt(struct cp_uprobe_link *l, int fd, pid_t pid, const char *path,
			 const uint64_t *offsets, size_t n);

/* Forgets what *l remembers (its fd is not closed) and marks it empty. */
void cp_uprobe_link_forget(struct cp_uprobe_link *l);

/* Closes fds[0..n), each from a thread of its own so that the grace periods
 * their removal waits for overlap (falls back to closing them in turn).
 * wait: returns when all are closed; else returns at once and the threads
 * finish on their own (the process's exit waits for them: a thread in
 * close() ends only when its close does). */
void cp_close_together(const int *fds, size_t n, bool wait);

#endif
