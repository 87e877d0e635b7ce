/* clockreads.h - the layout shared by probes/clockreads.bpf.c and lib/:
 * what the BPF side counts and how user space reads it. Every counter here
 * is exact (one increment per event, never a sample). */
#ifndef CP_CLOCKREADS_H
#define CP_CLOCKREADS_H

#ifndef __bpf__
#include <linux/types.h> /* BPF programs get __u64 from vmlinux.h */
#endif

#include "patch_layout.h"

/* How a read entered: the vDSO entry point, or the matching syscall. */
enum cp_entry {
	CP_ENTRY_CLOCK_GETTIME,
	CP_ENTRY_GETTIMEOFDAY,
	CP_ENTRY_TIME,
	CP_ENTRY_MAX,
};

/* Which path served it: the vDSO alone, or a syscall (made directly, or by
 * the vDSO falling back for a clock it cannot serve). */
enum cp_path {
	CP_PATH_VDSO,
	CP_PATH_SYSCALL,
	CP_PATH_MAX,
};

/* Clock ids 0..CP_CLOCK_OTHER-1 are counted by id (CLOCK_REALTIME = 0 ...
 * CLOCK_TAI = 11); dynamic clocks (negative ids: per-process/thread CPU
 * clocks, PTP fds) and anything larger land in CP_CLOCK_OTHER. */
#define CP_CLOCK_OTHER 12
#define CP_CLOCK_SLOTS 13

/* The uprobe mechanism (lib/probe/points/clock_points.h): each probed place carries a
 * BPF cookie saying what kind of read it is. */
#define CP_CLOCK_FROM_ARG (-1) /* clock id in the first argument (rdi) */

/* Where the read's return address is at the probed instruction. */
enum cp_site_mode {
	/* A function's first instruction or a PLT stub: at the top of the
	 * stack (the caller's `call` pushed it). */
	CP_SITE_STACK_TOP = 0,
	/* An indirect `call` inside a function that keeps a frame pointer
	 * and may have switched stacks (Go's time.now on g0): the function's
	 * own return address is at rbp + 8. */
	CP_SITE_FRAME = 1,
};

/* cookie = entry | site << 8 | (clock + 1) << 16 (clock + 1 = 0: from rdi) */
#define CP_COOKIE(entry, site, clock) \
	((__u64)(entry) | (__u64)(site) << 8 | (__u64)((clock) + 1) << 16)
#define CP_COOKIE_ENTRY(c) ((int)(0xff & (c)))
#define CP_COOKIE_SITE(c) ((int)(((c) >> 8) & 0xff))
#define CP_COOKIE_CLOCK(c) ((int)(((c) >> 16) & 0xffff) - 1)
/* The entry of the C library's syscall() function: which read, if any,
 * follows from its arguments. It shares its file's link and program with
 * the clock points (one link fewer to remove at the end, one program fewer
 * to load). */
#define CP_ENTRY_SYSCALL_FUNC 0xff
/* The C library's execve and execveat (the same link): with the vDSO
 * patch, the target's counters are summed there, before the exec takes
 * them away with the old image. */
#define CP_ENTRY_EXEC_FUNC 0xfe

/* --probe FILE:SYMBOL extra entry points, counted apart from clock reads. */
#define CP_MAX_PROBES 8

/* Reads-per-request histogram: exact up to CP_HIST_SLOTS-2 reads, the last
 * slot holds requests with more (their exact maximum is kept too). */
#define CP_HIST_SLOTS 512

/* Which path the vDSO takes for a clock, by its own rule (the kernel's
 * linux/lib/vdso/gettimeofday.c): coarse clocks never fall back; high-resolution and raw
 * clocks fall back when the clocksource cannot be read from user space
 * (hres false); every other clock (CPU-time clocks, alarm clocks, dynamic
 * clocks) is a clock_gettime syscall made from inside the vDSO. Inferring
 * it saves a syscall hook that would slow the whole host. The BPF program
 * and the vDSO patch's reader (user space) both apply it. */
static inline __attribute__((always_inline)) int cp_vdso_clock_path(long long clock_id, int hres)
{
	switch (clock_id) {
	case 5: /* CLOCK_REALTIME_COARSE */
	case 6: /* CLOCK_MONOTONIC_COARSE */ return CP_PATH_VDSO;
	case 0: /* CLOCK_REALTIME */
	case 1: /* CLOCK_MONOTONIC */
	case 4: /* CLOCK_MONOTONIC_RAW */
	case 7: /* CLOCK_BOOTTIME */
	case 11: /* CLOCK_TAI */ return hres ? CP_PATH_VDSO : CP_PATH_SYSCALL;
	default: return CP_PATH_SYSCALL;
	}
}

/* The path of a read through a vDSO entry: clock_gettime's by its clock
 * id; gettimeofday reads the high-resolution clock; time the coarse one,
 * always in user space. */
static inline __attribute__((always_inline)) int cp_vdso_entry_path(int entry, long long clock_id,
								    int hres)
{
	if (entry == CP_ENTRY_CLOCK_GETTIME)
		return cp_vdso_clock_path(clock_id, hres);
	if (entry == CP_ENTRY_GETTIMEOFDAY)
		return hres ? CP_PATH_VDSO : CP_PATH_SYSCALL;
	return CP_PATH_VDSO;
}

/* One set of counts. */
struct cp_read_counts {
	__u64 reads;
	__u64 by_entry[CP_ENTRY_MAX];
	__u64 by_path[CP_PATH_MAX];
	__u64 by_clock[CP_CLOCK_SLOTS];
	__u64 probe_calls[CP_MAX_PROBES];
};

/* Adds n to a counter. In the BPF program the add is atomic, per-CPU
 * counters too: a program on a uprobe runs with migration disabled, not
 * preemption, so on a preemptible kernel another thread's read may run the
 * program on the same CPU between this one's load and store, and one of the
 * two adds would be lost. User space adds up its own copies. */
#ifdef __bpf__
#define cp_add(counter, n) ((void)__sync_fetch_and_add((counter), (n)))
#else
#define cp_add(counter, n) ((void)(*(counter) += (n)))
#endif

/* Adds b[0..n) to a[0..n), skipping zeros: most of a request's fields
 * are, and each add is atomic in the program. Inlined, n is a constant
 * and the verifier sees a bounded loop. */
static inline __attribute__((always_inline)) void cp_counts_add_each(__u64 *a, const __u64 *b,
								     int n)
{
	for (int i = 0; i < n; i++)
		if (b[i])
			cp_add(&a[i], b[i]);
}

/* Adds the counts b to a, field by field: the BPF program at each complete
 * request, user space over the CPUs of a per-CPU map. */
static inline __attribute__((always_inline)) void cp_read_counts_add(struct cp_read_counts *a,
								     const struct cp_read_counts *b)
{
	cp_add(&a->reads, b->reads);
	cp_counts_add_each(a->by_entry, b->by_entry, CP_ENTRY_MAX);
	cp_counts_add_each(a->by_path, b->by_path, CP_PATH_MAX);
	cp_counts_add_each(a->by_clock, b->by_clock, CP_CLOCK_SLOTS);
	cp_counts_add_each(a->probe_calls, b->probe_calls, CP_MAX_PROBES);
}

/* What the program counts now; user space moves it along. Reads, call
 * sites and stacks count only in the clock window, and a request only when
 * it began and ended in it, so figures never mix a partial interval at
 * either edge of a window. */
enum cp_phase {
	CP_PHASE_IDLE = 0,     /* attached, window not open (or closed) */
	CP_PHASE_CLOCK = 1,    /* the clock window: every probe counts */
	CP_PHASE_COUNTERS = 2, /* the counter window: boundaries only */
};

/* Per-CPU totals (a BPF_MAP_TYPE_PERCPU_ARRAY with one element); user space
 * sums the CPUs. */
struct cp_totals {
	struct cp_read_counts all;	   /* every read in the window */
	struct cp_read_counts in_requests; /* reads inside complete requests */
	__u64 requests;			   /* complete requests (boundary to boundary) */
	__u64 boundary_hits;		   /* boundary events, partial intervals too */
	__u64 trap_hits;		   /* breakpoint and uprobe hits: what costs */
	__u64 max_reads_per_request;
	__u64 site_unnamed;	  /* reads with no site id left (CP_MAX_SITES) */
	__u64 site_uncredited;	  /* in-request reads beyond CP_PENDING_SITES */
	__u64 stack_drops;	  /* --stacks: stacks not stored, map full */
	__u64 stack_copy_drops;	  /* --stacks: stack copies that found the
				   * copy buffer full (struct cp_stack_copy) */
	__u64 stacks_preempted;	  /* --stacks: reads whose program found its
				   * CPU's stack scratch held by a preempted
				   * run of itself */
	__u64 counter_boundaries; /* boundaries in the counter window */
	__u64 hist[CP_HIST_SLOTS];
};

/* Call sites. The BPF program steps out of clock wrappers (libc's
 * clock_gettime, std::chrono::*::now, ...) with one rule per return address
 * inside them, computed in user space from their CFI (lib/symbols/unwind_table.c),
 * because Debian's libc has no frame pointers. */

enum cp_unwind_base {
	CP_UNWIND_SP = 0, /* CFA = sp + cfa_offset */
	CP_UNWIND_BP = 1, /* CFA = rbp + cfa_offset (frame-pointer code) */
};

struct cp_unwind_rule {
	__s32 cfa_offset;
	__s32 bp_offset; /* caller's rbp saved at CFA + bp_offset;
				 * 0: this frame left rbp alone */
	__u16 via;	 /* index into the table's wrapper names */
	__u8 base_reg;	 /* enum cp_unwind_base */
	__u8 pad;
};

#define CP_VIA_NONE 0xffff /* no wrapper crossed */

/* One call site: the return address into the program, the wrapper it
 * called (or CP_VIA_NONE) and how the read entered. */
struct cp_site_key {
	__u64 pc;
	__u16 via;
	__u8 entry;	     /* enum cp_entry */
	__u8 direct_syscall; /* through syscall(), not the vDSO */
	__u32 pad;
};

/* --stacks: whole user stacks, leaf first (the vDSO entry, the wrappers
 * stepped out of, the call site, then the frame-pointer chain), counted per
 * distinct stack. Unused slots are 0. */
#define CP_STACK_DEPTH 32
#define CP_MAX_STACKS 16384

struct cp_stack_key {
	__u64 pc[CP_STACK_DEPTH];
};

/* --stacks before every function's unwind rules are in place (user space
 * builds them after the window opens, lib/probe/window/late_stacks.c): the BPF
 * program copies the top of the read's user stack instead of walking it,
 * and user space walks the copy by the same rules once they are built, into
 * the same stack counts. 8 KiB is perf's default for a stack sample in its
 * dwarf mode. A walk can leave that stack by the frame-pointer chain (Go
 * calls the vDSO on its g0 stack, its callers' frames are on the
 * goroutine's), so where rbp looks like a frame elsewhere, a second piece
 * is copied from there. A copy is as long as what was read. */
#define CP_STACK_COPY_BYTES 8192
#define CP_STACK_COPY_FRAME_BYTES 4096

struct cp_stack_copy {
	__u64 ip, sp, bp; /* the read, as record_stack would start from it */
	__u32 mode;	  /* enum cp_site_mode */
	__u32 len[2];	  /* bytes of each piece; 0: none */
	__u32 pad;
	__u64 base[2]; /* where each piece was copied from */
	/* piece 0, then piece 1 right after it; the last page's worth is
	 * room the BPF verifier needs to see each page-wise read fit */
	__u8 bytes[CP_STACK_COPY_BYTES + 2 * CP_STACK_COPY_FRAME_BYTES];
};

#define CP_MAX_SITES 8192   /* distinct call sites counted */
#define CP_PENDING_SITES 16 /* distinct sites per request per thread */

struct cp_site_counts {
	__u64 all;	   /* reads in the window */
	__u64 in_requests; /* reads inside complete requests */
	__u64 in_checked;  /* ... closed at sys_enter while a syscall: boundary's
				 * wrapper was checked (CP_TOTALS_CHECKED) */
};
/* indexed by CP_TOTALS_* from in_requests (close_request) */
_Static_assert(__builtin_offsetof(struct cp_site_counts, in_checked) ==
		       __builtin_offsetof(struct cp_site_counts, in_requests) + 8,
	       "in_checked follows");

/* The vDSO patch's counter table in the target's memory (lib/probe/mech/patch/
 * vdso_area.S writes it, the boundary program reads the calling thread's
 * slot, user space sums it): slots of 16 words, one per thread key (the
 * thread pointer, fs:0). Word 0 is the key; words 1..13 count
 * clock_gettime by clock id (slot 1 + CP_CLOCK_OTHER: ids 12 and up, and
 * negative ones), 14 gettimeofday, 15 time. Slot 0 holds a magic word and
 * the reads of threads that found no slot of their own; thread slots
 * follow it, found by a Fibonacci hash of the key and at most
 * CP_PATCH_PROBES linear probes. */
#define CP_PATCH_HASH_SHIFT 52 /* 64 - log2(CP_PATCH_SLOTS) */
#define CP_PATCH_WORD_GETTIMEOFDAY 14
#define CP_PATCH_WORD_TIME 15

/* Call sites through the patch. After the counters, the same mapping
 * holds a table of rules for stepping out of clock wrappers (the rules of
 * struct cp_unwind_rule, written by user space before the window opens:
 * CP_PATCH_RULES entries of 16 bytes, each at the low bits of its return
 * address or up to CP_PATCH_RULE_PROBES - 1 entries after), then one block
 * of CP_PATCH_SITE_ENTRIES sites per thread slot (slot i's block at
 * CP_PATCH_SITES_OFF + i * CP_PATCH_SITE_BLOCK): {key, count} pairs the
 * thunk claims from the entry at the key's low bits on. A key is the call site's return
 * address (48 bits), the outermost wrapper crossed (12 bits, 0xfff: none),
 * the entry (2 bits) and, bit 62, a read through syscall() (counted by a
 * redirected syscall(): syscall_count.S). Reads that find no entry free
 * have no site. */

/* One rule as the thunk reads it: CFA = (rbp if base_bp, else sp) +
 * cfa_offset; rbp reloaded from CFA + bp_offset when that is not 0; the
 * return address at CFA - 8. */
struct cp_patch_rule {
	__u64 pc;
	__s32 cfa_offset;
	__s16 bp_offset;
	__u16 via_base; /* via | CP_PATCH_RULE_BASE_BP */
};

static inline __attribute__((always_inline)) __u64 cp_patch_site_pc(__u64 key)
{
	return key & ((1ull << 48) - 1);
}

static inline __attribute__((always_inline)) __u16 cp_patch_site_via(__u64 key)
{
	__u16 via = (__u16)((key >> 48) & 0xfff);

	return via == CP_PATCH_VIA_NONE ? CP_VIA_NONE : via;
}

static inline __attribute__((always_inline)) int cp_patch_site_entry(__u64 key)
{
	return (int)((key >> 60) & 3);
}

/* Bit 62: a read through syscall() (lib/probe/mech/patch/syscall_count.S). */
static inline __attribute__((always_inline)) __u8 cp_patch_site_direct(__u64 key)
{
	return (__u8)((key >> 62) & 1);
}

/* What word i (1..15) of a slot counts: the entry, and the clock slot
 * (gettimeofday and time read CLOCK_REALTIME, 0). */
static inline __attribute__((always_inline)) int cp_patch_word_entry(int i)
{
	return i == CP_PATCH_WORD_GETTIMEOFDAY ? CP_ENTRY_GETTIMEOFDAY :
	       i == CP_PATCH_WORD_TIME	       ? CP_ENTRY_TIME :
						 CP_ENTRY_CLOCK_GETTIME;
}

static inline __attribute__((always_inline)) int cp_patch_word_clock(int i)
{
	return cp_patch_word_entry(i) == CP_ENTRY_CLOCK_GETTIME ? i - 1 : 0;
}

/* The boundaries a request block (CP_PB_*) counts as passed, from its
 * hits and opens words: its hits, and those that opened a thread's first
 * request on a slot an exited thread left (its requests are its hits
 * less one all the same). */
static inline __attribute__((always_inline)) __u64 cp_pb_passed(__u64 hits, __u64 opens)
{
	return hits + opens;
}

/* The table summed by the BPF program while the target's memory still
 * held it (at its exit, or an exec): one element of its patch_exit map. */
struct cp_patch_exit {
	__u64 sums[CP_PATCH_SLOT_WORDS];
	__u64 done;
};

/* ... and its call sites, one element of the patch_exit_sites map per
 * key: the reads of the pass whose number is gen (a pass that is not
 * the last leaves entries of an older gen, which user space skips). */
#define CP_PATCH_EXIT_SITES 16384

struct cp_patch_exit_site {
	__u64 count;
	__u64 gen;
	__u64 in_requests; /* inside requests closed in the target */
};

/* The requests a func: boundary closed inside the target (lib/probe/mech/
 * patch/boundary_close.S), summed over its thread slots' request blocks
 * (CP_PB_* in patch_layout.h): by user space while the target runs, by
 * the BPF program as it exits (its patch_exit_requests map, from the pass
 * numbered gen, with patch_exit). Blocks of an earlier epoch than block
 * 0's are not the window's and are left out. */
struct cp_request_sums {
	__u64 requests;				/* complete requests (boundary to boundary) */
	__u64 hits;				/* boundaries passed */
	__u64 lost;				/* block 0's hits: passed by threads with no slot */
	__u64 max;				/* the most reads in one request */
	__u64 in_words[CP_PATCH_SLOT_WORDS];	/* the reads inside them, by word */
	__u64 in_syscalls[CP_PATCH_SLOT_WORDS]; /* ... through syscall(), by word */
	__u64 syscalls[CP_PATCH_SLOT_WORDS];	/* every read through syscall() (every
						 * block, every epoch: a sum to subtract
						 * the window's start from) */
	__u64 hist[CP_HIST_SLOTS];		/* requests by reads */
	__u64 gen;
};

/* The processes the target starts, followed (run's default): one element
 * of the procs map per process, keyed by its tgid in the host's numbers
 * (task_struct's, bpf_get_current_pid_tgid's). A forked child runs the
 * target's image, so the target's probes and patched vDSO count it; a
 * child that execs another program is held at its new image's first
 * instruction while clockprof patches that image too (CP_PROC_EXEC_HELD),
 * or, where it cannot be, not counted from then on (CP_PROC_EXECED). */
#define CP_MAX_PROCS 16384

enum cp_proc_flag {
	CP_PROC_EXITED = 1,	 /* its last thread exited */
	CP_PROC_EXECED = 2,	 /* it exec()ed another program */
	CP_PROC_SHARED_SLOT = 4, /* a thread of it found no slot of its own
					 * in the vDSO patch's table */
	CP_PROC_MEMBER = 8,	 /* one clockprof was given (attach -p, --tree,
				 * --cgroup), not one the target forked: its
				 * table is its own, mapped when it was patched */
	CP_PROC_NO_SITES = 16,	 /* its code is mapped elsewhere than the
				 * target's: its call sites (whose addresses
				 * are named as the target's) are not kept;
				 * inherited at fork */
	CP_PROC_EXEC_HELD = 32,	 /* it exec()ed and is held (SIGSTOP) at its
				 * new image's first instruction until
				 * clockprof has patched it (exec_events) */
	CP_PROC_REIMAGED = 64,	 /* it exec()ed and clockprof patched its new
				 * image (with CP_PROC_MEMBER: a table of its
				 * own): sums hold what its old image read */
	CP_PROC_EXEC_LATE = 128, /* held at its exec as the clock window
					 * closed, let go unpatched: nothing of
					 * its new image is in the window, its
					 * sums are all it read there */
	CP_PROC_EXECING = 256,	 /* past an exec's point of no return, its
				 * old image summed, its new one not yet
				 * started: its reads are all in its sums */
};

/* The kernel's USER_HZ (clock_t ticks, /proc/PID/stat), fixed in its ABI. */
#define CP_NS_PER_TICK 10000000ULL

struct cp_proc {
	__u32 pid;		/* in clockprof's pid namespace; 0 not in it */
	__u32 ppid;		/* its parent's, likewise */
	__u64 start_ns, end_ns; /* fork and exit (or exec), CLOCK_MONOTONIC */
	__u64 requests;		/* complete requests in the clock window */
	__u64 in_requests;	/* reads inside them */
	/* ... closed at sys_enter while a syscall: boundary's wrapper was
	 * checked (CP_TOTALS_CHECKED): the window's if the check fell back */
	__u64 checked_requests, checked_in_requests;
	__u32 flags;	      /* enum cp_proc_flag */
	__u32 threads_summed; /* threads whose vDSO patch slot was added to sums */
	char comm[16];	      /* at its exit or exec */
	__u64 table;	      /* its vDSO patch table: its parent's address
				 * (a forked copy), or a member's own */
	/* Its start in clock ticks after boot (/proc/PID/stat's field 22,
	 * CP_NS_PER_TICK): with the pid, its identity. An exited process's
	 * entry stays until a later drain; a process that gets its pid
	 * meanwhile is not it (never counted, held or patched as it). */
	__u64 start_ticks;
	/* The vDSO patch: its threads' slots, each added as the thread exited
	 * (the table is the process's own: it is wiped at fork), and its
	 * shared slot at its last thread's. */
	__u64 sums[CP_PATCH_SLOT_WORDS];
	/* ... and, with the boundary closed in the target, its reads through
	 * a redirected syscall() (its request blocks' words, as slots' words),
	 * summed with its requests at its last thread's exit. */
	__u64 syscall_sums[CP_PATCH_SLOT_WORDS];
};
/* indexed by 2 x CP_TOTALS_* from requests and in_requests (close_request) */
_Static_assert(__builtin_offsetof(struct cp_proc, checked_requests) ==
			       __builtin_offsetof(struct cp_proc, requests) + 16 &&
		       __builtin_offsetof(struct cp_proc, checked_in_requests) ==
			       __builtin_offsetof(struct cp_proc, in_requests) + 16,
	       "checked_* follow");

/* What of a followed process's slot its threads' exits have added to its
 * sums so far (or, for a member, its counts as the window opened): one
 * element of the child_slots map per slot in use. */
struct cp_child_slot_key {
	__u32 tgid; /* host's */
	__u32 slot; /* 0 shared, else the slot's index + 1 */
};

struct cp_child_slot_seen {
	__u64 words[CP_PATCH_SLOT_WORDS];
	__u64 sites[CP_PATCH_SITE_ENTRIES];
};

/* Goroutines whose requests a patched Go program's boundaries follow at
 * once (the least recently seen give way). */
#define CP_GOROUTINES 4096

/* Per-thread state (task storage, one per thread): the reads of the
 * request in progress, and at which call sites they were, until the
 * request completes. */
struct cp_thread {
	__u64 boundary_phase; /* phase at its last boundary, 0: none yet */
	struct cp_read_counts cur;
	__u32 pending_site[CP_PENDING_SITES];
	__u32 pending_count[CP_PENDING_SITES];
	__u32 npending;
	__u32 pending_overflow; /* reads whose site did not fit */
	__u64 dist_last;	/* the per-request counter at the last boundary */
	__u64 dist_valid;
	/* The vDSO patch: the thread's slot words at its last boundary. */
	__u64 patch_last[CP_PATCH_SLOT_WORDS];
	__u64 patch_valid;
	__u64 patch_key; /* the key whose slot patch_last is */
	/* ... and its reads through syscall() then (its request block's
	 * CP_PB_SYSCALLS words: syscall_count.S), words as a slot's. */
	__u64 patch_sc_last[CP_PATCH_SLOT_WORDS];
	/* ... its site block now ({key, count} pairs) and its counts at the
	 * last boundary, entry by entry (an entry's key never changes). */
	__u64 patch_sites_now[2 * CP_PATCH_SITE_ENTRIES];
	__u64 patch_sites_last[CP_PATCH_SITE_ENTRIES];
	/* A syscall: boundary closed at its wrapper: the thread's boundaries
	 * in the target at its last boundary syscall, and their epoch. */
	__u64 wrap_hits, wrap_epoch, wrap_known;
	/* The vDSO patch: the target's table window at its last boundary
	 * (patch_window, CP_PATCH_WINDOW_*). */
	__u64 patch_window;
};

/* The target's counter table's window as its counts see it (the
 * patch_window global): opened right after the mark's instant, closed at
 * the instant of the read that ends it, so that the requests the program
 * closes are those whose two boundaries both fall between them: their
 * reads are in the counts, and a read outside them is in no request but
 * an edge's (a launched command's opens while it is held). 0: none (the
 * phase decides). */
#define CP_PATCH_WINDOW_OPEN 1
#define CP_PATCH_WINDOW_CLOSED 2

/* A syscall: boundary closed in the target at the C library's wrapper,
 * checked against the kernel's syscalls (on_boundary_syscall): the
 * syscalls that came through the wrapper, those that did not, and when
 * the first did not (0: none), from which the kernel's are the boundary. */
struct cp_wrapper_check {
	__u64 checked, mismatched, fallback_ns;
};

/* The totals map's elements: the window's, and the requests sys_enter
 * closed while a syscall: boundary's wrapper was checked (the target
 * closed them too): the window's if the check fell back to sys_enter,
 * else dropped (the target's are the run's). */
#define CP_TOTALS_WINDOW 0
#define CP_TOTALS_CHECKED 1

/* Per-request counter distribution (the counter window): at each boundary
 * the BPF program reads the thread's own counter and files the difference
 * since the thread's previous boundary in a log-linear histogram: bucket
 * (e, m) holds values in [2^e + m 2^(e-3), 2^e + (m+1) 2^(e-3)), i.e. 8
 * sub-buckets per power of two (relative error under 12.5%); values below
 * 8 have buckets of their own. */
#define CP_DIST_SUB 8
#define CP_DIST_BUCKETS (64 * CP_DIST_SUB)
#define CP_DIST_MAX_THREADS 4096

struct cp_dist {
	__u64 count;
	__u64 max;
	__u64 sum;
	__u64 bucket[CP_DIST_BUCKETS];
};

#endif
