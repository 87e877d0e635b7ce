/* patch_execs.h - a followed process that exec()s another program is
 * counted in its new image too, from that image's first instruction:
 * the session's program holds it there (a SIGSTOP from the exec
 * tracepoint, cp_session_hold_execs), and this patches the new image as
 * `run` patches a launched command, before letting it go. Its new table
 * is its own: it joins the members (patch_members.h), and its old
 * image's reads, summed at the exec, stay in its sums. No process is
 * stopped at a fork. */
#ifndef CP_PATCH_EXECS_H
#define CP_PATCH_EXECS_H

struct cp_mech;
struct cp_patch_members;

/* Each process held since the last call patched (joining ms) or, where it
 * cannot be, let go uncounted from its exec (each such said with
 * cp_mech_warn); let go either way. b: the request boundary (NULL: none);
 * one closed in the target is closed in a new image that maps its file
 * too (cp_patch_boundary_exec), or that image's requests are said not
 * counted. */
struct cp_patch_boundary;
void cp_patch_execs_follow(struct cp_mech *m, struct cp_patch_members *ms,
			   const struct cp_patch_boundary *b);

#endif
