/* launcher.h - `clockprof run -- CMD`: start CMD held at its first
 * instruction, so the probes are in place before its first clock read.
 *
 * The child asks to be traced and execs; the kernel stops it right after
 * exec, when its new vDSO and executable are mapped (their addresses are
 * only known then). Once the probes are attached we detach and it runs
 * untraced. While held it never outlives clockprof, even a SIGKILLed one
 * (PTRACE_O_EXITKILL; PR_SET_PDEATHSIG before the trace begins), so it is
 * never left stopped, orphaned, or with the entry breakpoint planted. */
#ifndef CP_LAUNCHER_H
#define CP_LAUNCHER_H

#include <sys/types.h>

struct cp_error;

/* Starts argv[0] (searched in PATH) stopped after exec. A command that
 * cannot be executed fails with CP_EXIT_USAGE and the reason. */
int cp_launch_held(char *const argv[], pid_t *pid, struct cp_error *err);

/* Runs the held child on to its program entry point and holds it there:
 * the dynamic loader has then mapped its libraries, so their clock
 * wrappers can be found, while main() has not started. Reads made before
 * (by library constructors) are still counted when the probes were
 * attached at the exec stop. */
int cp_launch_run_to_entry(pid_t pid, struct cp_error *err);

/* Lets the held child run. */
int cp_launch_release(pid_t pid, struct cp_error *err);

#endif
