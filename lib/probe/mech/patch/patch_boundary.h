/* patch_boundary.h - the patch mechanism's side of a `func:` request
 * boundary closed inside the target (redirect_plan.h): whether it can be
 * (else it stays the session's uprobe, and why), the boundary and the C
 * library's syscall() redirected with the vDSO's entries, the requests
 * read back with the counts (or as the BPF program summed them at an
 * exit), the forks' too, and their reads by call site. patch.c calls
 * these at its steps; it keeps one struct cp_patch_boundary. */
#ifndef CP_PATCH_BOUNDARY_H
#define CP_PATCH_BOUNDARY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "clockreads.h"
#include "patch_sites.h"

struct cp_clock_points;
struct cp_error;
struct cp_mech;
struct cp_session_config;
struct cp_vdso_patch;

struct cp_patch_boundary {
	bool in_target;			       /* the requests are closed in the target */
	bool wrapped;			       /* ... at a syscall's C library functions:
					 * not where the kernel found a syscall
					 * that did not come through them */
	const struct cp_uprobe_point *pending; /* those functions, for a
					 * launched command: redirected as its
					 * dynamic linker maps them */
	int npending;
	bool started;				 /* the window has started */
	bool syscall_alone;			 /* nothing but the target counts: its
					 * syscall() is redirected with no
					 * boundary too (a followed exec's or a
					 * member's image has no redirect: the
					 * session's uprobe counts them all) */
	bool syscall_counted;			 /* syscall() redirected: the request
					 * blocks hold its reads, even once
					 * the requests are no longer closed
					 * in the target */
	bool at_exec;				 /* a func: boundary in a program the
					 * launched command has yet to exec
					 * (`run -- env prog`): closed in each
					 * image that an exec followed maps it
					 * in, none in the target's own */
	const struct cp_uprobe_point *func;	 /* a func: boundary's function */
	struct stat file;			 /* the boundary's file */
	struct cp_patch_sites forks_in_requests; /* the running forks' reads
						 * inside their requests, by site */
};

struct cp_uprobe_point;

/* The function f of process pid redirected to the close in patch p: at
 * its straight-line start, or else on both paths past its first branch
 * (redirect_plan.h). 0; 1 it cannot be, -1 it could not be added (why). */
int cp_patch_boundary_redirect(struct cp_vdso_patch *p, pid_t pid, const struct cp_uprobe_point *f,
			       char *why, size_t whylen);
/* Before the session opens: cfg->boundary_in_target when the boundary
 * can be closed in the target (then the session places no uprobe). */
void cp_patch_boundary_configure(struct cp_session_config *cfg);
/* Once the patch is prepared, before its sites are switched: the
 * boundary redirected (or why not, in cp_mech_warn). */
int cp_patch_boundary_open(struct cp_patch_boundary *b, struct cp_mech *m, struct cp_vdso_patch *p,
			   const struct cp_session_config *cfg, struct cp_error *err);
/* A file the target maps: a launched command's C library takes its
 * syscall: boundary's wrappers; its syscall() redirected too, when the
 * boundary is or the target counts alone, before the window starts
 * (launched: switched as the command is let go; else at start). True
 * when it is: its uprobe is not placed. */
bool cp_patch_boundary_syscall(struct cp_patch_boundary *b, struct cp_mech *m,
			       struct cp_vdso_patch *p, const char *path,
			       const struct cp_clock_points *pts);
/* The window starts (its redirects were switched with the vDSO's sites,
 * cp_vdso_patch_switch, or are as a launched command is let go). A
 * launched command's wrappers that never came (their file not mapped):
 * the boundary is sys_enter's. */
void cp_patch_boundary_start(struct cp_patch_boundary *b, struct cp_mech *m);
/* A followed process held at its exec, its new image prepared in p (not
 * yet armed): a func: boundary closed in the target is redirected there
 * too when that image maps its file, so that its requests are closed in
 * its own table (read as a fork's are). 0: done or nothing to do; -1
 * with why: it maps the file but cannot be redirected (its requests are
 * not counted). */
int cp_patch_boundary_exec(const struct cp_patch_boundary *b, struct cp_vdso_patch *p, pid_t pid,
			   char *why, size_t whylen);

/* The requests read now, before the counts: true when read. A syscall:
 * boundary's that a syscall not through its wrappers made the session's
 * (cp_session_wrapper_check) is no longer in_target, and none are. */
bool cp_patch_boundary_read(struct cp_patch_boundary *b, struct cp_mech *m,
			    struct cp_vdso_patch *p);
/* ... or, the target gone, as the program summed them at its exit. */
void cp_patch_boundary_settle(struct cp_patch_boundary *b, struct cp_mech *m,
			      struct cp_vdso_patch *p);
/* The requests as last read (or settled) added to t; now_read, exited:
 * how they were had, for the warning when neither. */
void cp_patch_boundary_add(const struct cp_patch_boundary *b, struct cp_mech *m,
			   const struct cp_vdso_patch *p, bool now_read, bool exited, bool hres,
			   struct cp_totals *t);
/* Where the forks' requests go (NULL: the boundary is the session's). */
struct cp_patch_sites *cp_patch_boundary_forks(struct cp_patch_boundary *b);
/* Whether syscall() is redirected, its reads counted in the request
 * blocks (the target's, its forks'). */
bool cp_patch_boundary_counts_syscalls(const struct cp_patch_boundary *b);
/* The reads at a call site inside the requests closed in the target and
 * its forks (0 when the boundary is the session's, which credits them). */
uint64_t cp_patch_boundary_in_requests_at(const struct cp_patch_boundary *b,
					  const struct cp_vdso_patch *p, uint64_t key);
void cp_patch_boundary_free(struct cp_patch_boundary *b);

#endif
