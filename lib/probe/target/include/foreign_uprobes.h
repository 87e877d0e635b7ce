/* foreign_uprobes.h - other tools' uprobes on a file, as `bpftool perf
 * show` lists them: every process's perf-event file descriptors that
 * hold a BPF program on a uprobe or uretprobe (BPF_TASK_FD_QUERY).
 *
 * Why: a redirect displaces an instruction of the target's (redirect_plan
 * .h). A uprobe there is refused when its breakpoint shows in the
 * target's code; asking the kernel too names the tool that holds it, for
 * the warning, and finds one whose breakpoint is not in this process's
 * code yet. One placed later is the documented remaining risk. */
#ifndef CP_FOREIGN_UPROBES_H
#define CP_FOREIGN_UPROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Whether a process other than clockprof holds a uprobe on the file st
 * at a file offset in [lo, hi): 1, with who ("process PID (COMM)"), or 0.
 * What the kernel lists is read once a second at most. */
int cp_foreign_uprobe_in(const struct stat *st, uint64_t lo, uint64_t hi, char *who, size_t wholen);

#endif
