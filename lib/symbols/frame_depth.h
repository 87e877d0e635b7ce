/* frame_depth.h - unwind rules for code that has no CFI.
 *
 * A static musl executable carries no .eh_frame for the C library's
 * functions (musl is built without unwind tables), so the clock wrappers
 * there (gettimeofday, time, clock, ftime, timespec_get calling
 * clock_gettime) cannot be stepped out of by CFI. Such small, compiled
 * wrappers keep a fixed frame, so the stack depth at each call can be read
 * from the code itself: pushes, pops, and rsp moved by an immediate. */
#ifndef CP_FRAME_DEPTH_H
#define CP_FRAME_DEPTH_H

#include <stddef.h>
#include <stdint.h>

#include "clockreads.h"

/* Calls emit(arg, ret, rule) for every call and syscall in code[0, size),
 * ret being the offset of its return address, with the rule that steps out
 * of the function from there. Code after a ret or an unconditional jump is
 * taken to run at the deepest frame seen so far (the compiler's cold
 * blocks follow the epilogue). Returns -1, having emitted nothing, when rsp
 * moves in another way (a frame whose size is not in the code) or the code
 * does not decode. */
int cp_frame_depth_rules(const uint8_t *code, size_t size,
			 void (*emit)(void *arg, size_t ret, const struct cp_unwind_rule *r),
			 void *arg);

#endif
