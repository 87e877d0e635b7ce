/* redirect_plan.h - a function of the target redirected, with no trap, to
 * code clockprof runs inside it, worked out from the function's code alone
 * (no process is touched): the one instruction a jump replaces, and the
 * trampoline that calls that code and then runs the instruction,
 * relocated (code_relocate.h), and jumps back. Two kinds:
 * - a `func:` request boundary, which calls the close
 *   (boundary_close.S): a request ends and the next begins there;
 * - the C library's syscall(), which calls the count of a clock read
 *   through it (syscall_count.S) with the syscall's number, its first
 *   argument and syscall()'s return address (the call site).
 *
 * The rules, each for a reason:
 * - never the function's first instruction. A uprobe another tool places
 *   at the entry (bpftrace's uprobe:, uretprobe:) single-steps the file's
 *   first instruction and resumes after it: after a jump written over it
 *   that is inside the jump (measured: the target crashed 6 of 6 times).
 *   Left alone, the entry's uprobe runs it and runs on into the jump.
 * - one instruction in the function's straight-line start (every call
 *   passes it once), replaced by a jump that lies in one aligned 8-byte
 *   word: the stub switches it with one atomic store, and a thread stands
 *   before or after it, never inside, so none is stopped. An instruction
 *   of 5 bytes or more takes a near jump to the trampoline; one of 2 to 4
 *   (a test before the first branch) a short jump to a springboard, a
 *   near jump in the alignment padding next to the function.
 * - no branch of the function lands on or inside it (a loop back to it
 *   would close a request at each turn).
 * - the flags are dead there (the called code changes them): written
 *   again before any instruction reads them.
 * - its bytes are the file's: someone else has not written there.
 * - syscall(): the number and first argument are still in registers
 *   there (followed through the moves before it), and nothing but pushes
 *   and a frame's subtraction (musl's: sub rsp, 0x58 first) has moved the
 *   stack pointer: the call site is then found that far up.
 * - Go: after the stack check (cmp against g's stack guard, then a jump
 *   to morestack, which calls the function again from its entry: before
 *   it, a request would close twice when the stack grows). And the
 *   replaced instruction touches no memory but the stack: Go turns a
 *   fault in its own code into a panic (its nil checks are loads), and a
 *   fault in the trampoline, not Go's code, would kill the program. The
 *   close keeps every register (Go's g in r14, X15 zero), and finds the
 *   goroutine as the read's count does (g, at fs:-8); the stack it takes
 *   (216 bytes) is within the 800 a Go function may use past its check
 *   (a function with no check shares them with the nosplit frames above
 *   it, which Go's linker counts without the close: docs/boundaries.md, Go).
 * The trampoline goes into the unused end of the function's executable
 * segment in the same mapping (redirect_place.h). */
#ifndef CP_REDIRECT_PLAN_H
#define CP_REDIRECT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_REDIRECT_TRAMP_SIZE 64

enum cp_redirect_kind {
	CP_REDIRECT_BOUNDARY, /* calls the request's close */
	CP_REDIRECT_SYSCALL,  /* calls syscall()'s count */
	/* The close too, on one of the two paths past the function's first
	 * conditional branch, where nothing before that branch can take the
	 * jump (glibc's syscall wrappers: a compare of
	 * __libc_single_threaded, then the branch): the path it falls
	 * through to, and the one it takes. Both are redirected, or neither:
	 * every call passes one of the two. A path must start with that
	 * branch alone (nothing else lands before its site, nothing falls
	 * into the taken one). */
	CP_REDIRECT_BOUNDARY_UNTAKEN,
	CP_REDIRECT_BOUNDARY_TAKEN,
};

/* The alignment padding next to the function, where a springboard may
 * go: [pad[i][0], pad[i][1]) in the target, never run (between two
 * functions), its bytes the file's. Empty ranges: none. */
struct cp_redirect_room {
	uint64_t pad[2][2];
};

struct cp_redirect_plan {
	uint64_t func; /* the function's address in the target */
	uint64_t at;   /* the instruction the jump replaces */
	unsigned len;
	unsigned jump_len;    /* 5: to the trampoline; 2: to the springboard */
	uint64_t springboard; /* jump_len 2: its near jump to the trampoline */
	uint8_t springboard_code[5];
	uint64_t qword; /* the aligned 8 bytes switched */
	uint64_t original, patched;
	uint64_t tramp;			      /* the trampoline's address */
	uint8_t code[CP_REDIRECT_TRAMP_SIZE]; /* its bytes */
};

/* The function as a plan sees it. */
struct cp_redirect_fn {
	const uint8_t *file; /* its bytes in the file */
	const uint8_t *live; /* and in the target now */
	size_t size;
	size_t tail;			     /* bytes past size in both (at most 8:
					 * the rest of the aligned word of a
					 * jump near its end) */
	uint64_t func;			     /* its address in the target */
	const struct cp_redirect_room *room; /* where a springboard may go
						 * (NULL: nowhere) */
	bool go;			     /* Go's ABI (below) */
};

/* How a plan's why begins when the function's straight-line start has no
 * instruction for the jump: then (and only then) the paths past its first
 * branch may have (CP_REDIRECT_BOUNDARY_UNTAKEN, _TAKEN). */
#define CP_REDIRECT_NO_ROOM \
	"no instruction after its first and before its first branch can take a jump"

/* Plans the redirect of the function fn with its trampoline at tramp,
 * calling the code at call. 0, or -1 with why ("no instruction after its
 * first ..."). */
int cp_redirect_plan_make(enum cp_redirect_kind kind, const struct cp_redirect_fn *fn,
			  uint64_t tramp, uint64_t call, struct cp_redirect_plan *plan, char *why,
			  size_t whylen);

/* The jump's 8 bytes with the replaced instruction's bytes put back
 * (restore): the rest of the word as it is now (live), where another
 * tool's uprobe may have come and gone. */
uint64_t cp_redirect_plan_unpatched(const struct cp_redirect_plan *plan, uint64_t live);

#endif
