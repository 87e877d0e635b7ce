/* anatomy_collect.c - see anatomy_collect.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <bpf/libbpf.h>

#include "anatomy.skel.h"
#include "anatomy_collect.h"
#include "anatomy_record.h"
#include "clockreads.h"
#include "error.h"
#include "patch_layout.h"
#include "pid_namespace.h"
#include "proc_maps.h"
#include "procfs.h"
#include "session.h"

#define DRAIN_US 2000			  /* how often the logs are looked at */
#define BURST_DRAIN_US 500		  /* ... in a burst: 4 times the logs freed */
#define SLOTS_EVERY 100			  /* ... and the slots in use, in drains */
#define AN_FIRST CP_PB_AN_STACK_LO	  /* a block's words drain reads: */
#define AN_HEAD (CP_PB_AN_LOG - AN_FIRST) /* from AN_FIRST to the log */
#define H(word) ((word)-AN_FIRST)	  /* ... and a word's place in them */

_Static_assert(sizeof(struct cp_anatomy_log_entry) == CP_PB_AN_ENTRY_WORDS * 8,
	       "a log entry is CP_PB_AN_ENTRY_WORDS words");
_Static_assert(CP_PB_AN_LOG + CP_PB_AN_ENTRIES * CP_PB_AN_ENTRY_WORDS <= CP_PB_WORDS,
	       "the log fits the request block");
_Static_assert(CP_PB_AN_STACK_HI == CP_PB_AN_STACK_LO + 1 &&
		       CP_PB_AN_STACK_TID == CP_PB_AN_STACK_LO + 2,
	       "the stack's words: lo, hi, tid");
#define IOV_BATCH 512

struct cp_anatomy_collect {
	pid_t pid;
	uint64_t table;
	int pin; /* pid's program, pinned: see table_write */
	unsigned sample;
	struct anatomy_bpf *skel;
	struct ring_buffer *ring;
	pthread_t thread;
	bool running, stop;
	struct cp_anatomy_calibration cal;
	uint32_t *used;	 /* slots in use */
	uint32_t *tried; /* by slot: the tid whose stack was looked for */
	size_t nused;
	struct cp_anatomy_raw *kept; /* the reservoir */
	size_t nkept;
	uint64_t logs_seen, rng;
	struct cp_anatomy_raw_rec {
		uint64_t slot, seq;
		struct cp_anatomy_rec r;
	} * pending; /* BPF records not yet given a log */
	size_t npending, cappending;
	uint64_t heads[IOV_BATCH][AN_HEAD]; /* drain's: the slots' headers */
	bool traps;			    /* uprobes: the session's ring, no table */
	struct open_request {		    /* ... the requests it has open */
		struct cp_anatomy_raw raw;
	} * open;
	size_t nopen, capopen;
	char why[256];			 /* the BPF program's failure, or "" */
	struct cp_anatomy_burst *bursts; /* the window's, in order */
	size_t nbursts;
	bool burst_on;
	uint64_t burst_at_ns; /* CLOCK_MONOTONIC: the last burst's start */
	unsigned burst_ms, period_ms;
	uint64_t outside_burst;	    /* logs not within one burst: dropped */
	uint64_t untimed;	    /* logs with no time-stamped read: dropped */
	struct cp_session *session; /* traps: its programs are the bursts' */
};

static uint64_t block_word(uint64_t table, uint64_t slot, unsigned word)
{
	return table + CP_PATCH_BLOCKS_OFF + (slot + 1) * CP_PATCH_BLOCK + word * 8ull;
}

/* A write into the table, through the program pinned as the collector
 * started (the one just patched): once the target exec()s, the drain's
 * writes fail, where by pid they reached the new program at the old
 * table's addresses (its own table's words, or anything it maps there). */
static int table_write(const struct cp_anatomy_collect *c, uint64_t at, const void *b, size_t len)
{
	return cp_proc_mem_write_pinned(c->pin, c->pid, at, b, len);
}

static int set_every(const struct cp_anatomy_collect *c, uint64_t every)
{
	return table_write(c, c->table + CP_PATCH_BLOCKS_OFF + CP_PB0_AN_EVERY * 8, &every,
			   sizeof(every));
}

void cp_anatomy_collect_off(pid_t pid, uint64_t table)
{
	uint64_t at = table + CP_PATCH_BLOCKS_OFF + CP_PB0_AN_EVERY * 8, every = 1;

	/* as the window opens: through pid's newest pin, the patch's */
	if (!cp_proc_mem_read(pid, at, &every, sizeof(every)) && every)
		cp_proc_mem_write(pid, at, &(uint64_t){ 0 }, sizeof(every));
}

/* The slots whose key word is set. */
static int find_used(struct cp_anatomy_collect *c)
{
	uint64_t *words = malloc(CP_PATCH_TABLE_SIZE);
	int rc = -1;

	if (!words || cp_proc_mem_read(c->pid, c->table, words, CP_PATCH_TABLE_SIZE))
		goto out;
	c->nused = 0;
	for (uint32_t s = 0; s < CP_PATCH_SLOTS; s++)
		if (words[(s + 1) * CP_PATCH_SLOT_WORDS])
			c->used[c->nused++] = s;
	rc = 0;
out:
	free(words);
	return rc;
}

static void raw_free(struct cp_anatomy_raw *r)
{
	free(r->entries);
	free(r->recs);
	memset(r, 0, sizeof(*r));
}

/* The BPF records of r's request, taken from the pending ones. */
static void take_records(struct cp_anatomy_collect *c, struct cp_anatomy_raw *r)
{
	size_t w = 0;

	for (size_t i = 0; i < c->npending; i++) {
		struct cp_anatomy_raw_rec *p = &c->pending[i];

		if (p->slot == r->slot && p->seq == r->seq) {
			struct cp_anatomy_rec *g = realloc(r->recs, (r->nrecs + 1) * sizeof(*g));

			if (g) {
				r->recs = g;
				r->recs[r->nrecs++] = p->r;
			}
		} else if (!(p->slot == r->slot && p->seq < r->seq)) {
			c->pending[w++] = *p; /* a log still open: kept */
		}
	}
	c->npending = w;
}

/* A finished log kept, or not, in the reservoir (Algorithm R): every log
 * of the window has the same chance, wherever it came in it. */
static void keep(struct cp_anatomy_collect *c, struct cp_anatomy_raw *r)
{
	uint64_t j;

	take_records(c, r);
	c->logs_seen++;
	if (c->nkept < c->sample) {
		c->kept[c->nkept++] = *r;
		return;
	}
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	j = c->rng % c->logs_seen;
	if (j < c->sample) {
		raw_free(&c->kept[j]);
		c->kept[j] = *r;
	} else {
		raw_free(r);
	}
}

bool cp_anatomy_in_burst(const struct cp_anatomy_burst *b, size_t n, uint64_t start, uint64_t end)
{
	/* the bursts are in order and apart: only the latest that began
	 * before the log can hold it */
	for (size_t i = n; i-- > 0;)
		if (b[i].on <= start)
			return end >= start && end <= b[i].off;
	return false;
}

/* A finished log kept if it lies within one burst (every syscall and
 * switch of it recorded); else dropped with its records, and counted. */
static void keep_if_in_burst(struct cp_anatomy_collect *c, struct cp_anatomy_raw *r)
{
	if (cp_anatomy_in_burst(c->bursts, c->nbursts, r->start_tsc, r->end_tsc)) {
		keep(c, r);
		return;
	}
	take_records(c, r);
	raw_free(r);
	c->outside_burst++;
}

/* The mapping of a thread's own stack, [*lo, *hi), that holds top - 8
 * (the return address of the boundary that opened its log), of the n in
 * m: [stack] (the main thread's, which only grows down); or, for a
 * thread the C library made, the private anonymous read-write mapping
 * that holds its thread pointer (key) too, which the library puts at its
 * top, with a guard page (PROT_NONE) right below: [start, key). Another
 * mapping (a coroutine's stack, the heap, one the C library did not make)
 * may be unmapped, or may shrink, while the thread lives: -1. */
static int stack_bounds(const struct cp_proc_map *m, size_t n, uint64_t key, uint64_t top,
			uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < n && !(key & 1); i++) { /* (a goroutine's: none) */
		if (top - 8 < m[i].start || top - 8 >= m[i].end)
			continue;
		if (strcmp(m[i].perms, "rw-p") || m[i].ino)
			return -1;
		if (!strcmp(m[i].path, "[stack]")) {
			*lo = m[i].start;
			*hi = m[i].end;
			return 0;
		}
		if (m[i].path[0] || key < top || key >= m[i].end || !i ||
		    m[i - 1].end != m[i].start || strcmp(m[i - 1].perms, "---p"))
			return -1;
		*lo = m[i].start;
		*hi = key;
		return 0;
	}
	return -1;
}

/* Where each finished log of slots[0..n) (heads: their words from
 * AN_FIRST) may read its callers: the bounds of its thread's stack
 * written into the slot's block, then the thread's tid (vdso_count.S's
 * .Llog reads none before, and none for another thread), for each slot
 * whose thread's were not looked for yet; /proc/PID/maps read once for
 * them all. Before the log is freed: the thread's next log has them. */
static void learn_stacks(struct cp_anatomy_collect *c, const uint32_t *slots, size_t n,
			 const uint64_t (*heads)[AN_HEAD])
{
	struct cp_proc_map *maps = NULL;
	size_t nmaps = 0;

	for (size_t i = 0; i < n; i++) {
		const uint64_t *h = heads[i];
		uint64_t tid = h[H(CP_PB_AN_TID)], key = 0, b[2];

		if (h[H(CP_PB_AN_STATE)] != 2 || !tid || tid > UINT32_MAX ||
		    h[H(CP_PB_AN_STACK_TID)] == tid || c->tried[slots[i]] == tid)
			continue;
		c->tried[slots[i]] = (uint32_t)tid;
		if (!maps && cp_proc_maps_read(c->pid, &maps, &nmaps))
			return;
		if (cp_proc_mem_read(c->pid, c->table + (slots[i] + 1ull) * CP_PATCH_SLOT_WORDS * 8,
				     &key, sizeof(key)) ||
		    stack_bounds(maps, nmaps, key, h[H(CP_PB_AN_TOP)], &b[0], &b[1]))
			continue;
		uint64_t at = block_word(c->table, slots[i], CP_PB_AN_STACK_LO);

		if (!table_write(c, at, b, sizeof(b))) /* the tid last */
			table_write(c, at + 16, &tid, sizeof(tid));
	}
	free(maps);
}

/* A log's span: its first and last time-stamped read's rdtsc (a boundary
 * takes none, nor a read whose vDSO path takes none: patch_layout.h's
 * CP_ANATOMY_TSC_CLOCKS); false when no read of it was stamped. */
static bool stamped_span(struct cp_anatomy_raw *r)
{
	r->start_tsc = r->end_tsc = 0;
	for (size_t i = 0; i < r->nentries; i++) {
		if (!r->entries[i].tsc)
			continue;
		if (!r->start_tsc)
			r->start_tsc = r->entries[i].tsc;
		r->end_tsc = r->entries[i].tsc;
	}
	return r->start_tsc != 0;
}

/* Slot s's finished log (head: its words from AN_FIRST) read and
 * freed for the next request; kept unless it began before the window,
 * or no read of it was time-stamped (counted: untimed). */
static void drain_slot(struct cp_anatomy_collect *c, uint32_t s, const uint64_t *head)
{
	struct cp_anatomy_raw r = { .slot = s,
				    .seq = head[H(CP_PB_AN_SEQ)],
				    .tid = head[H(CP_PB_AN_TID)],
				    .n = head[H(CP_PB_AN_N)],
				    .stack_known = head[H(CP_PB_AN_STACK_TID)] ==
						   head[H(CP_PB_AN_TID)] };
	uint64_t zero = 0, now[AN_HEAD];

	r.nentries = r.n < CP_PB_AN_ENTRIES ? r.n : CP_PB_AN_ENTRIES;
	if (r.nentries && !(r.entries = calloc(r.nentries, sizeof(*r.entries))))
		return;
	if (r.nentries && cp_proc_mem_read(c->pid, block_word(c->table, s, CP_PB_AN_LOG), r.entries,
					   r.nentries * sizeof(*r.entries))) {
		raw_free(&r);
		return;
	}
	/* Still the log read (a new thread on the slot drops a log and may
	 * open its own meanwhile: boundary_close.S): freed, else left. */
	if (cp_proc_mem_read(c->pid, block_word(c->table, s, AN_FIRST), now, sizeof(now)) ||
	    now[H(CP_PB_AN_STATE)] != 2 || now[H(CP_PB_AN_SEQ)] != r.seq) {
		raw_free(&r);
		return;
	}
	table_write(c, block_word(c->table, s, CP_PB_AN_STATE), &zero, 8);
	if (!stamped_span(&r)) {
		c->untimed++;
		raw_free(&r);
		return;
	}
	if (r.start_tsc < c->cal.tsc[0] || r.end_tsc < r.start_tsc) {
		raw_free(&r);
		return;
	}
	keep_if_in_burst(c, &r);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct cp_anatomy_collect *c = ctx;
	const struct cp_anatomy_record *rec = data;
	struct cp_anatomy_raw_rec *g;

	if (size < sizeof(*rec))
		return 0;
	if (c->npending == c->cappending) {
		size_t cap = c->cappending ? 2 * c->cappending : 1024;

		if (cap > (1u << 22) || !(g = realloc(c->pending, cap * sizeof(*g))))
			return 0; /* bounded: a request never closed */
		c->pending = g;
		c->cappending = cap;
	}
	c->pending[c->npending++] = (struct cp_anatomy_raw_rec){
		rec->slot, rec->seq, { rec->t_ns, rec->kind, rec->what }
	};
	return 0;
}

/* One look at the slots in use: the headers, then the BPF records (each
 * finished log's were recorded before its close), then the stacks of
 * threads new to their slots, then the logs. */
static void drain(struct cp_anatomy_collect *c)
{
	uint64_t(*heads)[AN_HEAD] = c->heads;
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];

	for (size_t at = 0; at < c->nused; at += IOV_BATCH) {
		size_t n = c->nused - at < IOV_BATCH ? c->nused - at : IOV_BATCH;

		for (size_t i = 0; i < n; i++) {
			local[i] = (struct iovec){ heads[i], sizeof(heads[i]) };
			remote[i] = (struct iovec){ (void *)(uintptr_t)block_word(
							    c->table, c->used[at + i], AN_FIRST),
						    sizeof(heads[i]) };
		}
		if (cp_proc_vm_read(c->pid, local, n, remote, n) != (ssize_t)(n * sizeof(heads[0])))
			continue;
		if (c->ring)
			ring_buffer__consume(c->ring);
		learn_stacks(c, &c->used[at], n, heads);
		for (size_t i = 0; i < n; i++)
			if (heads[i][H(CP_PB_AN_STATE)] == 2)
				drain_slot(c, c->used[at + i], heads[i]);
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int write_on(const struct cp_anatomy_collect *c, uint64_t on)
{
	return table_write(c, c->table + CP_PATCH_BLOCKS_OFF + CP_PB0_AN_ON * 8, &on, sizeof(on));
}

/* The BPF program given up (it could not be attached): the samples then
 * have no syscalls, and say so (why). */
static void lose_bpf(struct cp_anatomy_collect *c)
{
	snprintf(c->why, sizeof(c->why), "its syscalls and switches could not be recorded (%s)",
		 strerror(errno));
	ring_buffer__free(c->ring);
	anatomy_bpf__destroy(c->skel);
	c->ring = NULL;
	c->skel = NULL;
}

/* The syscall and switch recording attached (on) or detached: the
 * session's programs where every read traps, else anatomy.bpf.c (given
 * up if it cannot be attached); -1: the session's could not be. */
static int links(struct cp_anatomy_collect *c, bool on)
{
	if (c->traps)
		return cp_session_anatomy_links(c->session, on);
	if (c->skel && !on)
		anatomy_bpf__detach(c->skel);
	else if (c->skel && anatomy_bpf__attach(c->skel))
		lose_bpf(c);
	return 0;
}

/* Now on a burst's clock: the TSC the logs have, or where every read
 * traps, the records' CLOCK_MONOTONIC. */
static uint64_t burst_clock(const struct cp_anatomy_collect *c)
{
	return c->traps ? mono_ns() : __rdtsc();
}

/* A burst begun: the recording attached, then logs let open (block 0's
 * CP_PB0_AN_ON). Not begun without memory to note it, or where the
 * session's recording could not be attached (tried at the next). */
static void burst_begin(struct cp_anatomy_collect *c)
{
	struct cp_anatomy_burst *g = realloc(c->bursts, (c->nbursts + 1) * sizeof(*g));

	c->burst_at_ns = mono_ns();
	if (!g)
		return;
	c->bursts = g;
	if (links(c, true))
		return;
	c->bursts[c->nbursts++] = (struct cp_anatomy_burst){ burst_clock(c), UINT64_MAX };
	c->burst_on = true;
	if (!c->traps)
		write_on(c, 1);
}

/* The burst ended: no more logs open, then the recording detached (a
 * log still open is dropped when it closes: cp_anatomy_in_burst). */
static void burst_end(struct cp_anatomy_collect *c)
{
	if (!c->traps)
		write_on(c, 0);
	c->bursts[c->nbursts - 1].off = burst_clock(c);
	c->burst_on = false;
	links(c, false);
}

/* A burst begun or ended when its time has come. */
static void burst_tick(struct cp_anatomy_collect *c)
{
	uint64_t since = mono_ns() - c->burst_at_ns;

	if (c->burst_on && since >= c->burst_ms * 1000000ull)
		burst_end(c);
	else if (!c->burst_on && since >= c->period_ms * 1000000ull)
		burst_begin(c);
}

/* The bursts' length and period: CP_ANATOMY_BURST_MS and _PERIOD_MS.
 * Tests only: CLOCKPROF_TEST_ANATOMY_BURST=ON_MS/PERIOD_MS sets them
 * (tests/integration/test_anatomy.py: one long burst, then none). */
static void burst_schedule(struct cp_anatomy_collect *c)
{
	const char *t = getenv("CLOCKPROF_TEST_ANATOMY_BURST");
	unsigned on, period;

	c->burst_ms = CP_ANATOMY_BURST_MS;
	c->period_ms = CP_ANATOMY_PERIOD_MS;
	if (t && sscanf(t, "%u/%u", &on, &period) == 2 && on && on < period) {
		c->burst_ms = on;
		c->period_ms = period;
	}
}

static void *run(void *arg)
{
	struct cp_anatomy_collect *c = arg;

	for (unsigned i = 0; !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE); i++) {
		struct timespec pause = { 0, (c->burst_on ? BURST_DRAIN_US : DRAIN_US) * 1000L };

		burst_tick(c);
		if (c->traps) {
			ring_buffer__consume(c->ring);
		} else {
			if (i % SLOTS_EVERY == 0)
				find_used(c);
			drain(c);
		}
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* A collector for process pid keeping sample requests; NULL: no memory. */
static struct cp_anatomy_collect *collect_new(pid_t pid, unsigned sample)
{
	struct cp_anatomy_collect *c = calloc(1, sizeof(*c));

	if (c && !(c->kept = calloc(sample ? sample : 1, sizeof(*c->kept)))) {
		free(c);
		return NULL;
	}
	if (c) {
		c->pid = pid;
		c->pin = -1;
		c->sample = sample;
	}
	return c;
}

/* What a collector holds, and it (NULL: nothing). */
static void collect_free(struct cp_anatomy_collect *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nkept; i++)
		raw_free(&c->kept[i]);
	for (size_t i = 0; i < c->nopen; i++)
		raw_free(&c->open[i].raw);
	ring_buffer__free(c->ring);
	anatomy_bpf__destroy(c->skel);
	cp_proc_mem_unpin(c->pin);
	free(c->kept);
	free(c->used);
	free(c->tried);
	free(c->pending);
	free(c->open);
	free(c->bursts);
	free(c);
}

/* Uprobes: the open request of the record's thread (the one of its
 * number, unless start: then made anew); NULL none. */
static struct cp_anatomy_raw *open_of(struct cp_anatomy_collect *c,
				      const struct cp_anatomy_record *rec, bool start)
{
	struct open_request *g;

	for (size_t i = 0; i < c->nopen; i++) {
		struct cp_anatomy_raw *r = &c->open[i].raw;

		if (r->tid != rec->tid)
			continue;
		if (start) { /* its last never ended (a record lost): dropped */
			raw_free(r);
			*r = (struct cp_anatomy_raw){ .seq = rec->seq,
						      .tid = rec->tid,
						      .start_tsc = rec->t_ns };
		}
		return r->seq == rec->seq ? r : NULL;
	}
	if (!start)
		return NULL;
	if (c->nopen == c->capopen) {
		size_t cap = c->capopen ? 2 * c->capopen : 64;

		if (cap > 65536 || !(g = realloc(c->open, cap * sizeof(*g))))
			return NULL;
		c->open = g;
		c->capopen = cap;
	}
	c->open[c->nopen].raw =
		(struct cp_anatomy_raw){ .seq = rec->seq, .tid = rec->tid, .start_tsc = rec->t_ns };
	return &c->open[c->nopen++].raw;
}

#define TRAP_READS_MAX 4096 /* reads a request keeps (more: truncated) */

/* Uprobes: one record into its thread's open request; at its end, the
 * request kept (a record lost in it: kept truncated). */
static int on_trap_record(void *ctx, void *data, size_t size)
{
	struct cp_anatomy_collect *c = ctx;
	const struct cp_anatomy_record *rec = data;
	struct cp_anatomy_raw *r;

	if (size < sizeof(*rec) || !(r = open_of(c, rec, rec->kind == CP_ANATOMY_REC_START)))
		return 0;
	if (rec->kind == CP_ANATOMY_REC_READ) {
		struct cp_anatomy_log_entry *g;

		if (r->nentries < TRAP_READS_MAX &&
		    (g = realloc(r->entries, (r->nentries + 1) * sizeof(*g)))) {
			r->entries = g;
			r->entries[r->nentries++] = (struct cp_anatomy_log_entry){
				rec->key,
				rec->t_ns,
				(int32_t)rec->what,
				{ rec->callers[0], rec->callers[1] }
			};
		}
		r->n++;
	} else if (rec->kind == CP_ANATOMY_REC_SYSCALL || rec->kind == CP_ANATOMY_REC_SWITCH) {
		struct cp_anatomy_rec *g = realloc(r->recs, (r->nrecs + 1) * sizeof(*g));

		if (g) {
			r->recs = g;
			r->recs[r->nrecs++] = (struct cp_anatomy_rec){ rec->t_ns, rec->kind,
								       rec->what };
		}
	} else if (rec->kind == CP_ANATOMY_REC_END) {
		struct open_request *o = (struct open_request *)r;

		r->end_tsc = rec->t_ns;
		if (rec->what)
			r->n = r->nentries + 1;
		keep_if_in_burst(c, r);
		*o = c->open[--c->nopen];
	}
	return 0;
}

int cp_anatomy_collect_start_traps(struct cp_anatomy_collect **out, pid_t pid, struct cp_session *s,
				   unsigned sample, struct cp_error *err)
{
	struct cp_anatomy_collect *c = collect_new(pid, sample);

	*out = NULL;
	if (!c ||
	    !(c->ring = ring_buffer__new(cp_session_anatomy_ring(s), on_trap_record, c, NULL))) {
		collect_free(c);
		return cp_fail(err, CP_EXIT_PROFILE, "--anatomy: out of memory");
	}
	c->traps = true;
	c->cal = (struct cp_anatomy_calibration){ { 0, 1 }, { 0, 1 } }; /* ns already */
	c->rng = (uint64_t)pid * 0x9E3779B97F4A7C15ull | 1;
	c->session = s;
	burst_schedule(c);
	burst_begin(c); /* the first as the window opens */
	c->running = pthread_create(&c->thread, NULL, run, c) == 0;
	*out = c;
	return 0;
}

/* anatomy.bpf.c loaded for pid, attached only in bursts (burst_begin);
 * why says what failed. */
static void open_bpf(struct cp_anatomy_collect *c, const struct cp_pid_ns *ns, char *why,
		     size_t whylen)
{
	struct anatomy_bpf *skel = anatomy_bpf__open();

	if (!skel) {
		snprintf(why, whylen, "its syscalls and switches could not be recorded (%s)",
			 strerror(errno));
		return;
	}
	skel->rodata->target_tgid = (uint32_t)c->pid;
	skel->rodata->table = c->table;
	skel->rodata->pidns_dev = ns->dev;
	skel->rodata->pidns_ino = ns->ino;
	if (anatomy_bpf__load(skel) ||
	    !(c->ring = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, c, NULL))) {
		snprintf(why, whylen, "its syscalls and switches could not be recorded (%s)",
			 strerror(errno));
		anatomy_bpf__destroy(skel);
		return;
	}
	c->skel = skel;
}

int cp_anatomy_collect_start(struct cp_anatomy_collect **out, pid_t pid, uint64_t table,
			     unsigned sample, const struct cp_pid_ns *ns, struct cp_error *err)
{
	struct cp_anatomy_collect *c = collect_new(pid, sample);

	*out = NULL;
	if (!c || !(c->used = calloc(CP_PATCH_SLOTS, sizeof(*c->used))) ||
	    !(c->tried = calloc(CP_PATCH_SLOTS, sizeof(*c->tried)))) {
		collect_free(c);
		return cp_fail(err, CP_EXIT_PROFILE, "--anatomy: out of memory");
	}
	c->table = table;
	c->pin = cp_proc_mem_pin(pid);
	open_bpf(c, ns, c->why, sizeof(c->why));
	cp_anatomy_calibrate(&c->cal.tsc[0], &c->cal.ns[0]);
	c->rng = c->cal.tsc[0] | 1;
	burst_schedule(c);
	burst_begin(c); /* the first as the window opens */
	if (set_every(c, 1)) {
		cp_anatomy_collect_stop(c, 0, NULL);
		return cp_fail(err, CP_EXIT_PROFILE,
			       "--anatomy: the counter table of process %d "
			       "cannot be written",
			       pid);
	}
	c->running = pthread_create(&c->thread, NULL, run, c) == 0;
	*out = c;
	return 0;
}

/* Whether kept log i was logged before clockprof knew its thread's stack
 * (its reads without callers: learn_stacks) while another of the thread
 * was logged after: left out, its reads not told apart from the same
 * reads with callers. A thread whose stack was never known (one request
 * a thread, a stack of its own making) keeps its logs. */
static bool before_stack_known(const struct cp_anatomy_collect *c, size_t i)
{
	if (c->kept[i].stack_known)
		return false;
	for (size_t j = 0; j < c->nkept; j++)
		if (c->kept[j].stack_known && c->kept[j].tid == c->kept[i].tid &&
		    c->kept[j].slot == c->kept[i].slot)
			return true;
	return false;
}

/* The kept logs merged, in the order they began, into out. */
static void hand_over(struct cp_anatomy_collect *c, struct cp_anatomy_samples *out)
{
	if (c->nkept && !(out->requests = calloc(c->nkept, sizeof(*out->requests))))
		return;
	for (size_t i = 0; i < c->nkept; i++) {
		if (before_stack_known(c, i))
			continue;
		if (cp_anatomy_merge(&c->kept[i], &c->cal, c->pid, out,
				     &out->requests[out->nrequests]))
			break;
		out->nrequests++;
	}
	for (size_t i = 1; i < out->nrequests; i++) /* by start: insertion */
		for (size_t j = i; j && out->requests[j - 1].start_ns > out->requests[j].start_ns;
		     j--) {
			struct cp_anatomy_request t = out->requests[j];

			out->requests[j] = out->requests[j - 1];
			out->requests[j - 1] = t;
		}
}

void cp_anatomy_collect_stop(struct cp_anatomy_collect *c, uint64_t requests_seen,
			     struct cp_anatomy_samples *out)
{
	if (!c->traps)
		set_every(c, 0);
	if (c->running) {
		__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
		pthread_join(c->thread, NULL);
	}
	if (c->burst_on)
		burst_end(c);
	if (c->traps)
		ring_buffer__consume(c->ring);
	else
		cp_anatomy_calibrate(&c->cal.tsc[1], &c->cal.ns[1]);
	if (!c->traps && !find_used(c))
		drain(c);
	if (out) {
		memset(out, 0, sizeof(*out));
		out->requests_seen = requests_seen;
		out->outside_burst = c->outside_burst;
		out->untimed = c->untimed;
		out->gaps_exact = c->skel != NULL && !c->traps;
		snprintf(
			out->why_not_exact, sizeof(out->why_not_exact), "%s",
			c->traps ?
				"each read traps into the kernel inside the gap it measures (uprobes): "
				"the gaps are clockprof's as much as the program's" :
				c->why);
		hand_over(c, out);
		cp_anatomy_samples_dump(out);
	}
	collect_free(c);
}
