/* test_anatomy.c - the anatomy of a request's rule (anatomy.h,
 * docs/anatomy.md) on constructed sequences: each test names exactly the
 * reads that are reusable and no other, and fails if the rule is
 * loosened (a syscall or a voluntary switch let through, the gap or the
 * share made lenient, threads or clocks mixed, truncated requests used). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "anatomy.h"
#include "anatomy_names.h"
#include "clockreads.h"
#include "symbolize.h"
#include "unit.h"

#define GAP 1000   /* --reuse-gap's default, ns */
#define SHARE 0.95 /* --reuse-share's default */
#define FUTEX 202  /* x86_64 syscall numbers */
#define READ 0

/* A read id: a site (pc), its clock and its innermost caller. */
static uint32_t add_read(struct cp_anatomy_samples *s, uint64_t pc, int32_t clock, uint64_t caller)
{
	s->reads = realloc(s->reads, (s->nreads + 1) * sizeof(*s->reads));
	memset(&s->reads[s->nreads], 0, sizeof(*s->reads));
	s->reads[s->nreads].pc = pc;
	s->reads[s->nreads].clock = clock;
	s->reads[s->nreads].callers[0] = caller;
	return (uint32_t)s->nreads++;
}

static struct cp_anatomy_request *add_request(struct cp_anatomy_samples *s, int tid)
{
	struct cp_anatomy_request *r;

	s->requests = realloc(s->requests, (s->nrequests + 1) * sizeof(*s->requests));
	r = &s->requests[s->nrequests++];
	memset(r, 0, sizeof(*r));
	r->pid = 1;
	r->tid = tid;
	s->requests_seen++;
	return r;
}

static void ev(struct cp_anatomy_request *r, uint64_t t, uint32_t kind, uint32_t what)
{
	r->events = realloc(r->events, (r->nevents + 1) * sizeof(*r->events));
	r->events[r->nevents++] = (struct cp_anatomy_event){ t, kind, what };
	if (!r->start_ns || t < r->start_ns)
		r->start_ns = t;
	r->end_ns = t;
}

static void rd(struct cp_anatomy_request *r, uint64_t t, uint32_t id)
{
	ev(r, t, CP_ANATOMY_READ, id);
}

static void samples_init(struct cp_anatomy_samples *s)
{
	memset(s, 0, sizeof(*s));
	s->gaps_exact = true;
}

/* Whether a's reusable entries are exactly want[0..n) ({read, reuses}),
 * in any order. */
static int reusable_is(const struct cp_anatomy *a, const uint32_t want[][2], size_t n)
{
	if (a->nreusable != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int found = 0;

		for (size_t j = 0; j < a->nreusable; j++)
			found |= a->reusable[j].read == want[i][0] &&
				 a->reusable[j].reuses == want[i][1];
		if (!found)
			return 0;
	}
	return 1;
}

/* n requests of thread 7, the i-th reading x at period * i and y apart
 * ns later. */
static void read_pairs(struct cp_anatomy_samples *s, uint32_t x, uint32_t y, int n, uint64_t period,
		       uint64_t apart)
{
	for (int i = 0; i < n; i++) {
		struct cp_anatomy_request *r = add_request(s, 7);

		rd(r, period * (uint64_t)i, x);
		rd(r, period * (uint64_t)i + apart, y);
	}
}

/* Whether a has nshapes shapes, the first of requests requests. */
static int shapes_are(const struct cp_anatomy *a, size_t nshapes, uint64_t requests)
{
	return a->nshapes == nshapes && a->shapes[0].requests == requests;
}

/* s judged with the defaults; s released. */
static int judge(struct cp_anatomy_samples *s, struct cp_anatomy *a)
{
	int rc = cp_anatomy_judge(s, GAP, SHARE, a);

	cp_anatomy_samples_free(s);
	return rc;
}

/* Two monotonic reads, at sites pcs[0] and pcs[2] called from pcs[1] and
 * pcs[3], apart ns apart in n requests; judged with the defaults. */
static int pairs_judged(struct cp_anatomy *a, const uint64_t pcs[4], int n, uint64_t period,
			uint64_t apart)
{
	struct cp_anatomy_samples s;
	uint32_t x, y;

	samples_init(&s);
	x = add_read(&s, pcs[0], CLOCK_MONOTONIC, pcs[1]);
	y = add_read(&s, pcs[2], CLOCK_MONOTONIC, pcs[3]);
	read_pairs(&s, x, y, n, period, apart);
	return judge(&s, a);
}

/* One helper read for two callers 400 ns apart: the second could reuse the
 * first (the callers tell the reads apart). At the gap limit itself (1000
 * ns) it could not: the limit is strict. */
TEST(anatomy_reads_through_one_helper_reusable)
{
	struct cp_anatomy a;
	const uint32_t want[][2] = { { 1, 0 } };
	const uint64_t helper[4] = { 0x1000, 0x2000, 0x1000, 0x3000 };

	CHECK_INT(pairs_judged(&a, helper, 4, 10000, 400), 0);
	CHECK(a.judged);
	CHECK(reusable_is(&a, want, 1));
	CHECK_NEAR(a.reusable[0].share, 1.0, 1e-12);
	CHECK_INT(a.reusable[0].gap_p50_ns, 400);
	CHECK_INT(a.reusable[0].gap_p99_ns, 400);
	CHECK_NEAR(a.reusable[0].per_op, 1.0, 1e-12);
	CHECK_NEAR(a.reusable_per_op, 1.0, 1e-12);
	CHECK(a.every_request);
	cp_anatomy_free(&a);

	CHECK_INT(pairs_judged(&a, helper, 1, 0, GAP), 0);
	CHECK_INT(a.nreusable, 0);
	CHECK_NEAR(a.reusable_per_op, 0.0, 1e-12);
	cp_anatomy_free(&a);
}

/* n requests reading two sites apart[0] ns apart; those from the from-th
 * on with an event (kind, what) 100 ns after the first read and the
 * second apart[1] ns after it; judged with the defaults. */
static void pairs_with(struct cp_anatomy *a, int n, int from, uint32_t kind, uint32_t what,
		       const uint64_t apart[2])
{
	struct cp_anatomy_samples s;
	uint32_t x, y;

	samples_init(&s);
	x = add_read(&s, 0x1000, CLOCK_MONOTONIC, 0);
	y = add_read(&s, 0x1100, CLOCK_MONOTONIC, 0);
	for (int i = 0; i < n; i++) {
		struct cp_anatomy_request *r = add_request(&s, 7);
		uint64_t t = 100000 * (uint64_t)i;

		rd(r, t, x);
		if (i >= from)
			ev(r, t + 100, kind, what);
		rd(r, t + apart[i >= from], y);
	}
	(void)judge(&s, a);
}

/* n requests reading two sites 200 ns apart; those from the held-th on
 * with an event (kind, what) between. */
static void judged_pairs(struct cp_anatomy *a, int held, int n, uint32_t kind, uint32_t what)
{
	const uint64_t apart[2] = { 200, 200 };

	pairs_with(a, n, held, kind, what, apart);
}

/* The same two reads with something between them in every request. */
static void two_reads_around(struct cp_anatomy *a, uint32_t kind, uint32_t what)
{
	judged_pairs(a, 0, 3, kind, what);
}

/* A read after read() on a pipe can observe what it waited for. */
TEST(anatomy_read_after_a_syscall_not_reusable)
{
	struct cp_anatomy a;

	two_reads_around(&a, CP_ANATOMY_SYSCALL, READ);
	CHECK(a.judged);
	CHECK_INT(a.nreusable, 0);
	CHECK_INT(a.nshapes, 1);
	CHECK_INT(a.shapes[0].steps[1].nsyscalls, 1);
	CHECK_STR(cp_anatomy_syscall_name(a.shapes[0].steps[1].syscalls[0]), "read");
	cp_anatomy_free(&a);
}

/* The two reads with a switch between: voluntary (a futex wait that
 * slept, with no syscall recorded beside it) breaks the pair; a
 * preemption is no act of the program's and does not. */
static void switch_between(uint32_t voluntary)
{
	struct cp_anatomy a;
	const uint32_t want[][2] = { { 1, 0 } };

	two_reads_around(&a, CP_ANATOMY_SWITCH, voluntary);
	CHECK(a.judged);
	CHECK(reusable_is(&a, want, voluntary ? 0 : 1));
	CHECK_INT(a.shapes[0].steps[1].voluntary, voluntary);
	CHECK_INT(a.shapes[0].steps[1].preempted, !voluntary);
	cp_anatomy_free(&a);
}

TEST(anatomy_read_after_a_voluntary_switch_not_reusable)
{
	switch_between(1);
}

TEST(anatomy_read_after_a_preemption_still_reusable)
{
	switch_between(0);
}

/* A start and a stop around 50 µs of computation measure it. */
TEST(anatomy_start_stop_pair_not_reusable)
{
	struct cp_anatomy a;
	const uint64_t start_stop[4] = { 0x1000, 0, 0x1100, 0 };

	CHECK_INT(pairs_judged(&a, start_stop, 5, 100000, 50000), 0);
	CHECK(a.judged);
	CHECK_INT(a.nreusable, 0);
	CHECK_INT(a.shapes[0].steps[1].gap_ns, 50000);
	CHECK_INT(a.shapes[0].steps[1].at_ns, 50000);
	cp_anatomy_free(&a);
}

/* Two threads' requests overlap in time: thread 7 reads, makes a syscall
 * and reads again; thread 8 reads twice between. Only thread 8's second
 * read is reusable: sequences are per thread, and thread 7's second read
 * is not paired with thread 8's read 50 ns before it. */
TEST(anatomy_two_threads_interleaved_judged_per_thread)
{
	struct cp_anatomy_samples s;
	struct cp_anatomy a;
	struct cp_anatomy_request *r;
	uint32_t a1, a2, b1, b2;
	const uint32_t want[][2] = { { 3, 2 } };

	samples_init(&s);
	a1 = add_read(&s, 0x1000, CLOCK_MONOTONIC, 0);
	a2 = add_read(&s, 0x1100, CLOCK_MONOTONIC, 0);
	b1 = add_read(&s, 0x2000, CLOCK_MONOTONIC, 0);
	b2 = add_read(&s, 0x2100, CLOCK_MONOTONIC, 0);
	for (int i = 0; i < 3; i++) {
		uint64_t t = 10000 * (uint64_t)i;

		r = add_request(&s, 7);
		rd(r, t, a1);
		ev(r, t + 100, CP_ANATOMY_SYSCALL, READ);
		rd(r, t + 300, a2);
		r = add_request(&s, 8);
		rd(r, t + 150, b1);
		rd(r, t + 250, b2);
	}
	CHECK_INT(judge(&s, &a), 0);
	CHECK(reusable_is(&a, want, 1));
	CHECK(shapes_are(&a, 2, 3));
	CHECK_NEAR(a.shapes[0].share, 0.5, 1e-12);
	cp_anatomy_free(&a);
}

/* CLOCK_REALTIME after CLOCK_MONOTONIC, gettimeofday after
 * CLOCK_REALTIME, time after gettimeofday: other clocks, no reuse. */
TEST(anatomy_other_clock_not_reusable)
{
	static const int32_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
					  CP_ANATOMY_CLOCK_GETTIMEOFDAY, CP_ANATOMY_CLOCK_TIME };
	struct cp_anatomy_samples s;
	struct cp_anatomy a;

	samples_init(&s);
	for (uint32_t k = 0; k < 4; k++)
		add_read(&s, 0x1000 + 0x100 * k, clocks[k], 0);
	for (uint64_t i = 0; i < 3; i++) {
		struct cp_anatomy_request *r = add_request(&s, 7);

		for (uint32_t k = 0; k < 4; k++)
			rd(r, 10000 * i + 100 * k, k); /* in that order, 100 ns apart */
	}
	CHECK_INT(judge(&s, &a), 0);
	CHECK(a.judged);
	CHECK_INT(a.nreusable, 0);
	cp_anatomy_free(&a);
}

/* Reads the log stamps no time for (time(), the coarse clocks: their
 * vDSO path takes no rdtsc, so neither does the log) are never judged:
 * two time() reads back to back, and two CLOCK_MONOTONIC_COARSE reads,
 * are not reusable; two CLOCK_MONOTONIC reads beside them are. */
TEST(anatomy_untimed_reads_never_judged)
{
	static const int32_t clocks[] = { CP_ANATOMY_CLOCK_TIME, CLOCK_MONOTONIC_COARSE,
					  CLOCK_MONOTONIC };
	static const uint32_t want[][2] = { { 5, 4 } };
	struct cp_anatomy_samples s;
	struct cp_anatomy a;

	samples_init(&s);
	for (uint32_t k = 0; k < 6; k++)
		add_read(&s, 0x1000 + 0x100 * k, clocks[k / 2], 0);
	for (uint64_t i = 0; i < 3; i++) {
		struct cp_anatomy_request *r = add_request(&s, 7);

		for (uint32_t k = 0; k < 6; k++)
			rd(r, 10000 * i + 10 * k, k);
	}
	CHECK_INT(judge(&s, &a), 0);
	CHECK(a.judged);
	CHECK(reusable_is(&a, want, 1));
	CHECK(!cp_anatomy_clock_timed(CP_ANATOMY_CLOCK_TIME));
	CHECK(!cp_anatomy_clock_timed(CLOCK_MONOTONIC_COARSE));
	CHECK(cp_anatomy_clock_timed(CP_ANATOMY_CLOCK_GETTIMEOFDAY));
	CHECK(cp_anatomy_clock_timed(CLOCK_BOOTTIME));
	cp_anatomy_free(&a);
}

/* E is the latest earlier read of the clock: the third read reuses the
 * second (after the syscall), not the first. */
TEST(anatomy_reuses_the_latest_earlier_read)
{
	struct cp_anatomy_samples s;
	struct cp_anatomy a;
	const uint32_t want[][2] = { { 2, 1 } };
	uint32_t x, y, z;

	samples_init(&s);
	x = add_read(&s, 0x1000, CLOCK_MONOTONIC, 0);
	y = add_read(&s, 0x1100, CLOCK_MONOTONIC, 0);
	z = add_read(&s, 0x1200, CLOCK_MONOTONIC, 0);
	for (int i = 0; i < 2; i++) {
		struct cp_anatomy_request *r = add_request(&s, 7);

		rd(r, 10000 * i, x);
		ev(r, 10000 * i + 100, CP_ANATOMY_SYSCALL, FUTEX);
		rd(r, 10000 * i + 5000, y);
		rd(r, 10000 * i + 5200, z);
	}
	CHECK_INT(judge(&s, &a), 0);
	CHECK(reusable_is(&a, want, 1));
	CHECK_INT(a.reusable[0].gap_p50_ns, 200);
	cp_anatomy_free(&a);
}

/* held of n requests hold the pair; the others have a syscall between. */
static void share_of(struct cp_anatomy *a, int held, int n)
{
	judged_pairs(a, held, n, CP_ANATOMY_SYSCALL, READ);
}

/* 19 of 20 is the share itself, 0.95: reusable. 18 of 20, and 94 of
 * 100, fall short of it. */
TEST(anatomy_share_at_and_below_the_limit)
{
	struct cp_anatomy a;
	const uint32_t want[][2] = { { 1, 0 } };

	share_of(&a, 19, 20);
	CHECK(reusable_is(&a, want, 1));
	CHECK_NEAR(a.reusable[0].share, 0.95, 1e-12);
	CHECK_INT(a.reusable[0].requests, 20);
	CHECK_INT(a.reusable[0].held, 19);
	CHECK_NEAR(a.reusable[0].per_op, 1.0, 1e-12); /* every read at the line goes */
	cp_anatomy_free(&a);
	share_of(&a, 18, 20);
	CHECK_INT(a.nreusable, 0);
	cp_anatomy_free(&a);
	share_of(&a, 94, 100);
	CHECK_INT(a.nreusable, 0);
	cp_anatomy_free(&a);
}

/* n requests reading two sites apart ns apart; in the last preempted of
 * them the thread was preempted between the reads, and the second came
 * 50 us after the first. */
static void preempted_pairs(struct cp_anatomy *a, int n, int preempted, uint64_t apart)
{
	const uint64_t gaps[2] = { apart, 50000 };

	pairs_with(a, n, n - preempted, CP_ANATOMY_SWITCH, 0, gaps);
}

/* The time a preemption took is the kernel's, not the program's: 2 of 20
 * requests with one between two reads 200 ns apart keep the pair (judged
 * by those gaps, 18 of 20 fell short of the share), and the gaps'
 * percentiles are the program's. A start and a stop 5 us apart stay
 * apart, preempted or not. */
TEST(anatomy_preempted_gap_not_judged)
{
	struct cp_anatomy a;
	const uint32_t want[][2] = { { 1, 0 } };

	preempted_pairs(&a, 20, 2, 200);
	CHECK(reusable_is(&a, want, 1));
	CHECK_INT(a.reusable[0].held, 20);
	CHECK_INT(a.reusable[0].times, 20);
	CHECK_INT(a.reusable[0].gap_p99_ns, 200);
	cp_anatomy_free(&a);
	preempted_pairs(&a, 20, 2, 5000);
	CHECK_INT(a.nreusable, 0);
	cp_anatomy_free(&a);
}

/* A truncated request (its syscall between the reads) is left out of the
 * rule and of the shapes. */
TEST(anatomy_truncated_requests_excluded)
{
	struct cp_anatomy_samples s;
	struct cp_anatomy a;
	struct cp_anatomy_request *r;
	const uint32_t want[][2] = { { 1, 0 } };
	uint32_t x, y;

	samples_init(&s);
	x = add_read(&s, 0x1000, CLOCK_MONOTONIC, 0);
	y = add_read(&s, 0x1100, CLOCK_MONOTONIC, 0);
	r = add_request(&s, 7);
	rd(r, 0, x);
	rd(r, 200, y);
	r = add_request(&s, 7);
	rd(r, 10000, x);
	ev(r, 10100, CP_ANATOMY_SYSCALL, READ);
	rd(r, 10200, y);
	rd(r, 10300, x);
	r->truncated = true;
	CHECK_INT(judge(&s, &a), 0);
	CHECK(reusable_is(&a, want, 1));
	CHECK_INT(a.sampled_requests, 1);
	CHECK_INT(a.truncated_requests, 1);
	CHECK_INT(a.requests, 2);
	CHECK(!a.every_request);
	CHECK(shapes_are(&a, 1, 1));
	CHECK_INT(a.shapes[0].nsteps, 2);
	CHECK_NEAR(a.reusable[0].share, 1.0, 1e-12);
	cp_anatomy_free(&a);
}

/* Gaps with a trap in each (uprobes): shapes, but no read judged, and
 * the reason carried; no whole request: not judged either. */
TEST(anatomy_not_judged_where_gaps_are_not_exact)
{
	struct cp_anatomy_samples s;
	struct cp_anatomy a;
	struct cp_anatomy_request *r;
	uint32_t x, y;

	samples_init(&s);
	s.gaps_exact = false;
	strcpy(s.why_not_exact, "uprobes trap at each read");
	x = add_read(&s, 0x1000, CLOCK_MONOTONIC, 0);
	y = add_read(&s, 0x1100, CLOCK_MONOTONIC, 0);
	r = add_request(&s, 7);
	rd(r, 0, x);
	rd(r, 200, y);
	CHECK_INT(judge(&s, &a), 0);
	CHECK(a.on);
	CHECK(!a.judged);
	CHECK_STR(a.not_judged_because, "uprobes trap at each read");
	CHECK_INT(a.nreusable, 0);
	CHECK_NEAR(a.reusable_per_op, 0.0, 1e-12);
	CHECK_INT(a.nshapes, 1);
	cp_anatomy_free(&a);

	samples_init(&s);
	CHECK_INT(judge(&s, &a), 0);
	CHECK(!a.judged);
	CHECK(strstr(a.not_judged_because, "no request") != NULL);
	cp_anatomy_free(&a);
}

/* Shapes: most requests first, p50 times over the shape's requests, the
 * syscalls of its median request (distinct, in order), the rest of the
 * sample's reads per op estimated from it. */
TEST(anatomy_shapes_and_estimate)
{
	struct cp_anatomy_samples s;
	struct cp_anatomy a;
	uint32_t x, y;
	const uint64_t second[] = { 300, 500, 900 };

	samples_init(&s);
	x = add_read(&s, 0x1000, CLOCK_MONOTONIC, 0);
	y = add_read(&s, 0x1100, CLOCK_MONOTONIC, 0);
	for (int i = 0; i < 3; i++) {
		struct cp_anatomy_request *r = add_request(&s, 7);
		uint64_t t = 100000 * (uint64_t)i;

		rd(r, t, x);
		ev(r, t + 10, CP_ANATOMY_SYSCALL, READ);
		ev(r, t + 20, CP_ANATOMY_SYSCALL, FUTEX);
		ev(r, t + 30, CP_ANATOMY_SYSCALL, READ);
		rd(r, t + second[i], y);
	}
	rd(add_request(&s, 7), 900000, y);
	s.requests_seen = 40;
	CHECK_INT(judge(&s, &a), 0);
	CHECK(shapes_are(&a, 2, 3));
	CHECK_NEAR(a.shapes[0].share, 0.75, 1e-12);
	CHECK_INT(a.shapes[0].nsteps, 2);
	CHECK_INT(a.shapes[0].steps[0].read, x);
	CHECK_INT(a.shapes[0].steps[1].read, y);
	CHECK_INT(a.shapes[0].steps[1].at_ns, 500);
	CHECK_INT(a.shapes[0].steps[1].gap_ns, 500);
	CHECK_INT(a.shapes[0].steps[1].nsyscalls, 2);
	CHECK_STR(cp_anatomy_syscall_name(a.shapes[0].steps[1].syscalls[0]), "read");
	CHECK_STR(cp_anatomy_syscall_name(a.shapes[0].steps[1].syscalls[1]), "futex");
	CHECK_INT(a.shapes[1].requests, 1);
	CHECK_INT(a.other_requests, 0);
	CHECK_INT(a.sampled_requests, 4);
	CHECK_INT(a.requests, 40);
	CHECK(!a.every_request);
	CHECK_INT(a.nreusable, 0);
	cp_anatomy_free(&a);

	/* a collection that did not say how many requests the window had:
	 * the sample is the population known, and not taken for all of it */
	samples_init(&s);
	rd(add_request(&s, 7), 0, add_read(&s, 0x1000, CLOCK_MONOTONIC, 0));
	s.requests_seen = 0;
	CHECK_INT(judge(&s, &a), 0);
	CHECK_INT(a.requests, 1);
	CHECK(!a.every_request);
	cp_anatomy_free(&a);
}

/* Past CP_ANATOMY_SHAPES shapes the rest are summed. */
TEST(anatomy_shapes_past_the_limit_summed)
{
	struct cp_anatomy_samples s;
	struct cp_anatomy a;
	uint32_t x;

	samples_init(&s);
	x = add_read(&s, 0x1000, CLOCK_MONOTONIC, 0);
	for (int n = 1; n <= CP_ANATOMY_SHAPES + 2; n++) {
		struct cp_anatomy_request *r = add_request(&s, 7);

		for (int i = 0; i < n; i++)
			rd(r, 1000000 * (uint64_t)n + 5000 * (uint64_t)i, x);
	}
	CHECK_INT(judge(&s, &a), 0);
	CHECK_INT(a.nshapes, CP_ANATOMY_SHAPES);
	CHECK_INT(a.other_requests, 2);
	cp_anatomy_free(&a);
}

TEST(anatomy_clock_names)
{
	char buf[32];

	CHECK_STR(cp_anatomy_clock_name(CLOCK_MONOTONIC, buf, sizeof(buf)), "CLOCK_MONOTONIC");
	CHECK_STR(cp_anatomy_clock_name(CLOCK_REALTIME, buf, sizeof(buf)), "CLOCK_REALTIME");
	CHECK_STR(cp_anatomy_clock_name(CP_ANATOMY_CLOCK_GETTIMEOFDAY, buf, sizeof(buf)),
		  "gettimeofday");
	CHECK_STR(cp_anatomy_clock_name(CP_ANATOMY_CLOCK_TIME, buf, sizeof(buf)), "time");
	CHECK_STR(cp_anatomy_clock_name(-5, buf, sizeof(buf)), "clock -5");
}

static __attribute__((noinline)) uint64_t return_address(void)
{
	return (uint64_t)__builtin_return_address(0);
}

/* A place in this file for a read to be named at. */
static __attribute__((noinline)) uint64_t anatomy_named_caller(void)
{
	uint64_t pc = return_address();

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return pc;
}

/* Reads named as call sites are, their callers by function, file and line;
 * with no symbolizer, by address and the entry called. */
TEST(anatomy_reads_named_like_call_sites)
{
	struct cp_symbolizer *sym = cp_symbolizer_open(getpid(), NULL);
	struct cp_anatomy_samples s;
	struct cp_anatomy a;
	uint64_t pc = anatomy_named_caller();

	if (!sym) {
		unit_skip("this process's modules cannot be read");
		return;
	}
	samples_init(&s);
	add_read(&s, pc, CLOCK_MONOTONIC, pc);
	CHECK_INT(judge(&s, &a), 0);
	cp_anatomy_name(sym, NULL, &a);
	cp_symbolizer_close(sym);
	CHECK_STR(a.reads[0].function, "anatomy_named_caller");
	CHECK(a.reads[0].file && strstr(a.reads[0].file, "test_anatomy.c"));
	CHECK(a.reads[0].line > 0);
	CHECK(a.reads[0].module != NULL);
	CHECK_STR(a.reads[0].via, "clock_gettime");
	CHECK_INT(a.reads[0].ncallers, 1);
	CHECK_STR(a.reads[0].callers[0].function, "anatomy_named_caller");
	CHECK_INT(a.reads[0].callers[0].line, a.reads[0].line);
	cp_anatomy_free(&a);

	samples_init(&s);
	add_read(&s, 0x1234, CP_ANATOMY_CLOCK_TIME, 0);
	s.reads[0].entry = CP_ENTRY_TIME;
	CHECK_INT(judge(&s, &a), 0);
	cp_anatomy_name(NULL, NULL, &a);
	CHECK_STR(a.reads[0].function, "0x1234");
	CHECK_STR(a.reads[0].via, "time");
	CHECK_INT(a.reads[0].ncallers, 0);
	cp_anatomy_free(&a);
}
