/* vdso_plan.h - where and how a vDSO image is patched, worked out from the
 * image alone (no process is touched): for each clock entry, the one
 * instruction that a jump to the code that counts replaces (in the
 * counter table's code pages, made here too, which runs it relocated and
 * jumps back), the thunk that runs it for that code's rarer exits, and
 * the bytes written into the image's unused space. The same plan, made
 * from clockprof's own pristine vDSO, tells a target's leftover patch of
 * an earlier run from anyone else's change.
 *
 * Why one instruction: a site is switched by one atomic store of the
 * aligned 8 bytes that hold its jump (vdso_area.S), and a thread can only
 * stand before or after an instruction, never inside it, so no thread has
 * to be stopped while the site changes. An instruction of 5 bytes or more
 * takes a near jump to the count; a shorter one (2 bytes or more) a short
 * jump to a springboard in the alignment padding between two functions,
 * which jumps on. Relocation is Zydis's (decoder and encoder). */
#ifndef CP_VDSO_PLAN_H
#define CP_VDSO_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "clockreads.h"
#include "vdso_count.h"

struct cp_vdso_site {
	int entry;   /* CP_ENTRY_* */
	uint64_t at; /* the replaced instruction (offsets in the image) */
	unsigned len;
	unsigned jump_len;    /* 5: near jump to the count's path; 2: short jump */
	uint64_t springboard; /* jump_len 2: the 5-byte jump to the path */
	uint64_t thunk;	      /* the instruction relocated, a jump back */
	unsigned depth;	      /* bytes pushed before the site */
	uint64_t qword;	      /* the aligned 8 bytes switched */
	uint64_t original, patched;
	/* The same switched toward the other variant of the paths (--anatomy
	 * or not: vdso_count.h), which an earlier clockprof's leftover may
	 * carry: its word, and its springboard's jump (jump_len 2). */
	uint64_t other_patched;
	uint8_t other_board[5];
};

struct cp_vdso_plan {
	uint64_t base; /* the image's address in the target */
	size_t size;
	uint64_t area; /* header + stub, then the thunks */
	uint64_t code_end;
	struct cp_vdso_site site[CP_ENTRY_MAX];
	int nsites;
	uint8_t *bytes; /* the image with everything written but the sites */
	uint64_t table; /* the counter table's address in the target */
	struct cp_vdso_count_way way[CP_ENTRY_MAX]; /* each path's ways back from the count */
	uint8_t *count;				    /* the code for the table's code pages
					 * (vdso_count.h: CP_VDSO_COUNT_SIZE bytes) */
};

/* Plans the patch of image (size bytes, mapped at base) for a counter
 * table at table: the sites jump to its code pages, and their code is
 * made too. Returns 0, or -1 with why ("clock_gettime: no instruction of
 * 2 bytes or more before its first branch"...). */
int cp_vdso_plan_make(const uint8_t *image, size_t size, uint64_t base, uint64_t table,
		      struct cp_vdso_plan *plan, char *why, size_t whylen);
void cp_vdso_plan_free(struct cp_vdso_plan *plan);

/* --anatomy: every plan made from now on in this process jumps its
 * entries to the anatomy's variant of the paths (vdso_count.h), not the
 * plain ones. Set once, before the first plan (the mechanism's
 * configure). */
void cp_vdso_plan_set_anatomy(bool on);

/* The next run [*from, *to) at or after *from of bytes the target's image
 * lacks and that are written as code (thunks, stub, springboards): never
 * a site's word, which only the stub changes, in one atomic store (a
 * write through /proc/PID/mem is not one), even where a leftover patch
 * left it switched; never the area's header data. 0 when there is none. */
int cp_vdso_plan_next_code(const struct cp_vdso_plan *plan, const uint8_t *target, uint64_t *from,
			   uint64_t *to);

enum cp_vdso_state {
	CP_VDSO_PRISTINE, /* as the kernel made it */
	CP_VDSO_OURS,	  /* an earlier clockprof's area (sites either way) */
	CP_VDSO_FOREIGN,  /* changed by someone else */
};

/* What a target's image is, against the plan made from the pristine
 * image of the same kernel; for FOREIGN, the first byte that differs. */
enum cp_vdso_state cp_vdso_plan_classify(const struct cp_vdso_plan *plan, const uint8_t *pristine,
					 const uint8_t *target, uint64_t *differs_at);

#endif
