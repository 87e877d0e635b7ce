/* registrar.h - every uprobe placed by a child of clockprof's own, so
 * that no kill of clockprof's can cut a placement short.
 *
 * The kernel places a uprobe from the task that asks for it, writing the
 * breakpoint into the target through remote get_user_pages(), which fails
 * (-EINTR) once that task has a SIGKILL pending. A placement cut so is
 * rolled back in the same dying task, whose writes fail the same way: the
 * kernel logs "failed to unregister, leaking uprobe" and the breakpoints
 * stay in the target's code for good (kernel/events/uprobes.c,
 * uprobe_register() and uprobe_unregister_nosync(); seen beside busy
 * loops, 1 of 30 kills during start-up). A link closed at exit is removed
 * cleanly: the kill is no longer pending then.
 *
 * So the links are made by the registrar, a child forked as the attach
 * starts, in a process group of its own with every signal blocked: only
 * a SIGKILL aimed at it stops it. It holds nothing but its socket, a
 * pidfd of clockprof and the warm-up's pipe: each request brings the
 * program's fd along (SCM_RIGHTS); the registrar
 * makes the link, hands its fd back and closes its own copies, so that
 * clockprof's fd is the link's only reference and removing the probes is
 * as before. When clockprof dies, the registrar finishes the placement in
 * flight, closes the link unless clockprof may still take it, and exits:
 * the kernel then removes the breakpoints cleanly. The warm-up's uprobe
 * (warmup.h) is placed by a child of the registrar's, in its own code,
 * again every few ms until cp_registrar_warm_stop() or a second. */
#ifndef CP_REGISTRAR_H
#define CP_REGISTRAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Offsets in one request (one file's): far more than a file's clock points. */
#define CP_REGISTRAR_MAX_OFFSETS 4096

/* Starts this process's registrar (if it has none). 0, or -1 with errno
 * set: uprobes are then placed by clockprof itself, as they are when it
 * is not started (unit tests), or killed. */
int cp_registrar_start(void);

/* Places uprobes running prog_fd at offsets[0..n) of the file at path,
 * each with its cookie (cookies may be NULL), for process pid only, or
 * every process that runs the file when every_process. multi: one
 * uprobe_multi link (prog_fd loaded with CP_BPF_TRACE_UPROBE_MULTI); else
 * n must be 1 and the link is a perf-event uprobe's. The link's fd, or -1
 * with errno set. Any thread; requests are served one at a time. */
int cp_registrar_place(int prog_fd, pid_t pid, bool every_process, bool multi, const char *path,
		       const uint64_t *offsets, const uint64_t *cookies, size_t n);

/* Ends the warm-up's placements (warmup.h); no answer is awaited. */
void cp_registrar_warm_stop(void);

/* Ends the registrar (it holds no link of clockprof's) and waits for it. */
void cp_registrar_stop(void);

#endif
