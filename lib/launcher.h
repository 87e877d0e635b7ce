/* launcher.h - `clockprof run -- CMD`: start CMD held at its first
 * instruction, so the probes are in place before its first clock read.
 *
 * The child asks to be traced and execs; the kernel stops it right after
 * exec, when its new vDSO and executable are mapped (their addresses are
 * only known then). Once the probes are attached we detach and it runs
 * untraced. */
#ifndef CP_LAUNCHER_H
#define CP_LAUNCHER_H

#include <sys/types.h>

struct cp_error;

/* Starts argv[0] (searched in PATH) stopped after exec. A command that
 * cannot be executed fails with CP_EXIT_USAGE and the reason. */
int cp_launch_held(char *const argv[], pid_t *pid, struct cp_error *err);

/* Lets the held child run. */
int cp_launch_release(pid_t pid, struct cp_error *err);

/* Describes a wait status ("exit code 3", "killed by SIGKILL"). */
void cp_describe_exit(int status, char *buf, size_t size);

#endif
