/* rseq_section.h - where the kernel would send a held thread that is
 * inside a restartable sequence's critical section (rseq(2)). */
#ifndef CP_RSEQ_SECTION_H
#define CP_RSEQ_SECTION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether thread tid, held in a ptrace stop at ip, is inside the critical
 * section its rseq area names; if so *abort_ip is the section's abort
 * handler, where the kernel sends a thread preempted there as it returns
 * to user space. A thread sent elsewhere (the stub) is seen out of the
 * section by the kernel, which then only clears the section, so the stub
 * must return to *abort_ip itself: returned into the section's middle,
 * the section committed as if it had never been interrupted. false: no
 * rseq registered (or a kernel before 5.13, which cannot say), no
 * section, ip outside it, or a section the kernel would refuse (then it
 * kills the thread whatever clockprof does). */
bool cp_rseq_abort_ip(pid_t tid, uint64_t ip, uint64_t *abort_ip);

#endif
