/* test_anatomy_collect.c - --anatomy's merge of one drained log with the
 * BPF records of its request (anatomy_collect.h): the reads put on
 * CLOCK_MONOTONIC by the calibration, named once each (site, clock,
 * caller), and every event in time order. */
#include <stdint.h>
#include <stdlib.h>

#include "anatomy_collect.h"
#include "anatomy_record.h"
#include "clockreads.h"
#include "unit.h"

#define KEY(pc) ((uint64_t)(pc) | (uint64_t)0xfff << 48) /* no wrapper, entry 0 */

TEST(anatomy_tsc_is_put_on_the_monotonic_clock_by_two_points)
{
	struct cp_anatomy_calibration c = { { 1000, 3000 }, { 500, 1500 } };

	CHECK(cp_anatomy_tsc_ns(&c, 1000) == 500);
	CHECK(cp_anatomy_tsc_ns(&c, 2000) == 1000);
	CHECK(cp_anatomy_tsc_ns(&c, 3000) == 1500);
	CHECK(cp_anatomy_tsc_ns(&c, 5000) == 2500); /* past the end: extrapolated */
	CHECK(cp_anatomy_tsc_ns(&c, 600) == 300);   /* before the start too */
}

TEST(anatomy_merge_orders_reads_syscalls_and_switches_by_time)
{
	struct cp_anatomy_calibration cal = { { 0, 1000000 }, { 0, 1000000 } };
	struct cp_anatomy_log_entry e[4] = {
		{ KEY(0x401000), 100, 1, { 0x402000, 0x403000 } }, /* helper, from A */
		{ KEY(0x401000), 150, 1, { 0x402010, 0x403000 } }, /* helper, from B */
		{ KEY(0x401000), 900, 1, { 0x402000, 0x403000 } }, /* A again */
		{ KEY(0x405000), 950, 0, { 0, 0 } },		   /* REALTIME, no caller */
	};
	struct cp_anatomy_rec recs[2] = { { 400, CP_ANATOMY_REC_SYSCALL, 0 },
					  { 500, CP_ANATOMY_REC_SWITCH, 1 } };
	struct cp_anatomy_raw raw = { .slot = 3,
				      .seq = 7,
				      .tid = 42,
				      .start_tsc = 50,
				      .end_tsc = 1000,
				      .n = 4,
				      .entries = e,
				      .nentries = 4,
				      .recs = recs,
				      .nrecs = 2 };
	struct cp_anatomy_samples s = { 0 };
	struct cp_anatomy_request r;

	CHECK(cp_anatomy_merge(&raw, &cal, 99, &s, &r) == 0);
	CHECK(r.pid == 99 && r.tid == 42 && r.start_ns == 50 && r.end_ns == 1000 && !r.truncated);
	CHECK(s.nreads == 3); /* A and B apart, A once */
	CHECK(s.reads[0].pc == 0x401000 && s.reads[0].callers[0] == 0x402000 &&
	      s.reads[0].callers[1] == 0x403000 && s.reads[0].callers[2] == 0);
	CHECK(s.reads[1].callers[0] == 0x402010 && s.reads[2].clock == 0);
	CHECK(s.reads[0].via == CP_VIA_NONE && s.reads[0].entry == 0);
	CHECK(r.nevents == 6);
	static const uint32_t kinds[6] = { CP_ANATOMY_READ,   CP_ANATOMY_READ, CP_ANATOMY_SYSCALL,
					   CP_ANATOMY_SWITCH, CP_ANATOMY_READ, CP_ANATOMY_READ };
	static const uint32_t whats[6] = { 0, 1, 0, 1, 0, 2 };
	for (int i = 0; i < 6; i++)
		CHECK(r.events[i].kind == kinds[i] && r.events[i].what == whats[i]);
	CHECK(r.events[0].t_ns == 100 && r.events[5].t_ns == 950);
	free(r.events);
	raw.n = CP_PB_AN_ENTRIES + 1; /* more reads than the log held */
	CHECK(cp_anatomy_merge(&raw, &cal, 99, &s, &r) == 0);
	CHECK(r.truncated && s.nreads == 3);
	free(r.events);
	cp_anatomy_samples_free(&s);
}

/* Bursts (docs/anatomy.md): a log is used only when it began and ended
 * within one burst, the links' attach and their detach included; one
 * that ran past its burst's end (the program detached), began before it
 * (attached late) or spans two is dropped; the burst still on has no end. */
TEST(anatomy_log_is_used_only_within_one_burst)
{
	struct cp_anatomy_burst b[3] = { { 100, 200 }, { 1000, 1100 }, { 2000, UINT64_MAX } };

	CHECK(cp_anatomy_in_burst(b, 3, 100, 200)); /* its bounds included */
	CHECK(cp_anatomy_in_burst(b, 3, 150, 160));
	CHECK(cp_anatomy_in_burst(b, 3, 1000, 1050));
	CHECK(!cp_anatomy_in_burst(b, 3, 150, 201));  /* ended past the detach */
	CHECK(!cp_anatomy_in_burst(b, 3, 99, 150));   /* began before the attach */
	CHECK(!cp_anatomy_in_burst(b, 3, 150, 1050)); /* spans two bursts */
	CHECK(!cp_anatomy_in_burst(b, 3, 300, 400));  /* between bursts */
	CHECK(!cp_anatomy_in_burst(b, 3, 50, 60));    /* before the first */
	CHECK(!cp_anatomy_in_burst(b, 3, 160, 150));  /* ends before it began */
	CHECK(cp_anatomy_in_burst(b, 3, 2500, 9000)); /* the burst still on */
	CHECK(!cp_anatomy_in_burst(b, 0, 150, 160));  /* no burst at all */
}

TEST(anatomy_merge_leaves_out_reads_outside_the_request_s_span)
{
	/* a signal handler's read logged after the close took the end's
	 * rdtsc, before it closed the log (anatomy_close.S): not the
	 * request's (measured: 23 of 13811 sampled requests, a handler
	 * reading time() every 20 us) */
	struct cp_anatomy_calibration cal = { { 0, 1000000 }, { 0, 1000000 } };
	struct cp_anatomy_log_entry e[3] = {
		{ KEY(0x401000), 100, 1, { 0, 0 } },
		{ KEY(0x401000), 900, 1, { 0, 0 } },
		{ KEY(0x406000), 19000, 1, { 0, 0 } }, /* the handler's, after the end */
	};
	struct cp_anatomy_raw raw = {
		.start_tsc = 50, .end_tsc = 1000, .n = 3, .entries = e, .nentries = 3
	};
	struct cp_anatomy_samples s = { 0 };
	struct cp_anatomy_request r;

	CHECK(cp_anatomy_merge(&raw, &cal, 99, &s, &r) == 0);
	CHECK(r.nevents == 2 && s.nreads == 1 && !r.truncated);
	CHECK(r.events[1].t_ns == 900);
	free(r.events);
	cp_anatomy_samples_free(&s);
}

/* Untimed reads (stamp 0: time(), the coarse clocks) keep their place in
 * the log's order, 1 ns past the read before them, or just before the
 * first stamped one. */
TEST(anatomy_merge_places_untimed_reads_in_log_order)
{
	struct cp_anatomy_calibration cal = { { 0, 1000000 }, { 0, 1000000 } };
	struct cp_anatomy_log_entry e[4] = {
		{ KEY(0x401000), 0, -2, { 0, 0 } },
		{ KEY(0x402000), 100, 1, { 0, 0 } },
		{ KEY(0x403000), 0, -2, { 0, 0 } },
		{ KEY(0x404000), 900, 1, { 0, 0 } },
	};
	struct cp_anatomy_raw raw = {
		.start_tsc = 100, .end_tsc = 900, .n = 4, .entries = e, .nentries = 4
	};
	struct cp_anatomy_samples s = { 0 };
	struct cp_anatomy_request r;

	CHECK(cp_anatomy_merge(&raw, &cal, 99, &s, &r) == 0);
	CHECK(r.nevents == 4 && s.nreads == 4);
	CHECK(r.events[0].t_ns == 99 && r.events[0].what == 0);
	CHECK(r.events[1].t_ns == 100 && r.events[1].what == 1);
	CHECK(r.events[2].t_ns == 101 && r.events[2].what == 2);
	CHECK(r.events[3].t_ns == 900 && r.events[3].what == 3);
	free(r.events);
	cp_anatomy_samples_free(&s);
}
