/* anatomy_merge.c - see anatomy_collect.h. A kept log and the BPF
 * records of its request become one request of the samples, its reads'
 * TSC put on CLOCK_MONOTONIC by the calibration taken at the window's
 * start and end; apart from the collection (anatomy_collect.c), so that
 * the tests can merge raw pieces of their own making. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "anatomy_collect.h"
#include "anatomy_record.h"
#include "clockreads.h"

/* A pair of the TSC and CLOCK_MONOTONIC at one instant: of 64 tries, the
 * one whose two TSC reads bracket the clock's read most tightly (a
 * preemption between them would move the pair by half of it). */
void cp_anatomy_calibrate(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 64; i++) {
		struct timespec ts;
		uint64_t a = __rdtsc(), b;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
	}
}

uint64_t cp_anatomy_tsc_ns(const struct cp_anatomy_calibration *c, uint64_t tsc)
{
	long double span = (long double)(c->tsc[1] - c->tsc[0]);
	long double d = (long double)tsc - (long double)c->tsc[0];

	if (span <= 0)
		return c->ns[0];
	return c->ns[0] + (uint64_t)(int64_t)(d * (long double)(c->ns[1] - c->ns[0]) / span);
}

static int by_time(const void *a, const void *b)
{
	const struct cp_anatomy_event *x = a, *y = b;

	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

/* The index of the read of key and clock in s's reads, added if new;
 * -1 out of memory. */
static long read_index(struct cp_anatomy_samples *s, const struct cp_anatomy_log_entry *e)
{
	struct cp_anatomy_read_id id = { .pc = cp_patch_site_pc(e->key),
					 .via = cp_patch_site_via(e->key),
					 .entry = (uint8_t)cp_patch_site_entry(e->key),
					 .clock = (int32_t)e->clock,
					 .callers = { e->callers[0], e->callers[1] } };
	struct cp_anatomy_read_id *g;

	for (size_t i = 0; i < s->nreads; i++)
		if (s->reads[i].pc == id.pc && s->reads[i].via == id.via &&
		    s->reads[i].entry == id.entry && s->reads[i].clock == id.clock &&
		    !memcmp(s->reads[i].callers, id.callers, sizeof(id.callers)))
			return (long)i;
	if (!(g = realloc(s->reads, (s->nreads + 1) * sizeof(*g))))
		return -1;
	s->reads = g;
	s->reads[s->nreads] = id;
	return (long)s->nreads++;
}

/* The untimed reads (stamp 0) a log holds before its first stamped one. */
static size_t untimed_before_the_first_stamp(const struct cp_anatomy_raw *raw)
{
	size_t j = 0;

	while (j < raw->nentries && !raw->entries[j].tsc)
		j++;
	return j;
}

int cp_anatomy_merge(const struct cp_anatomy_raw *raw, const struct cp_anatomy_calibration *cal,
		     pid_t pid, struct cp_anatomy_samples *s, struct cp_anatomy_request *r)
{
	size_t n = raw->nentries + raw->nrecs, k = 0;
	struct cp_anatomy_event *ev = calloc(n ? n : 1, sizeof(*ev));
	uint64_t at = cp_anatomy_tsc_ns(cal, raw->start_tsc) - untimed_before_the_first_stamp(raw) -
		      1;

	memset(r, 0, sizeof(*r));
	if (!ev)
		return -1;
	for (size_t i = 0; i < raw->nentries; i++) {
		const struct cp_anatomy_log_entry *e = &raw->entries[i];
		long read;

		/* a stamped read outside the request's span is not the
		 * request's (none can be: the span is its stamps') */
		if (e->tsc && (e->tsc < raw->start_tsc || e->tsc > raw->end_tsc))
			continue;
		if ((read = read_index(s, e)) < 0) {
			free(ev);
			return -1;
		}
		/* an untimed read (stamp 0: its clock's vDSO path takes no
		 * rdtsc) keeps its place in log order, 1 ns past the read
		 * before it; it is never judged (cp_anatomy_clock_timed) */
		at = e->tsc ? cp_anatomy_tsc_ns(cal, e->tsc) : at + 1;
		ev[k++] = (struct cp_anatomy_event){ at, CP_ANATOMY_READ, (uint32_t)read };
	}
	for (size_t i = 0; i < raw->nrecs; i++)
		ev[k++] = (struct cp_anatomy_event){ raw->recs[i].t_ns,
						     raw->recs[i].kind == CP_ANATOMY_REC_SWITCH ?
							     CP_ANATOMY_SWITCH :
							     CP_ANATOMY_SYSCALL,
						     raw->recs[i].what };
	if (k)
		qsort(ev, k, sizeof(*ev), by_time);
	*r = (struct cp_anatomy_request){ .pid = pid,
					  .tid = (int32_t)raw->tid,
					  .events = ev,
					  .nevents = k,
					  .start_ns = cp_anatomy_tsc_ns(cal, raw->start_tsc),
					  .end_ns = cp_anatomy_tsc_ns(cal, raw->end_tsc),
					  .truncated = raw->n > raw->nentries };
	/* the span is the stamped reads' (a boundary takes no stamp): its
	 * syscalls and switches before the first and after the last widen it */
	if (k && ev[0].t_ns < r->start_ns)
		r->start_ns = ev[0].t_ns;
	if (k && ev[k - 1].t_ns > r->end_ns)
		r->end_ns = ev[k - 1].t_ns;
	return 0;
}

/* Tests only: CLOCKPROF_TEST_ANATOMY_DUMP=FILE writes the raw samples
 * there as one JSON object, for the collection to be checked before the
 * rule's side judges it (tests/integration/test_anatomy.py). */
void cp_anatomy_samples_dump(const struct cp_anatomy_samples *s)
{
	const char *path = getenv("CLOCKPROF_TEST_ANATOMY_DUMP");
	FILE *f = path && *path ? fopen(path, "w") : NULL;

	if (!f)
		return;
	fprintf(f,
		"{\"requests_seen\": %llu, \"outside_burst\": %llu, \"untimed\": %llu, "
		"\"gaps_exact\": %s, \"reads\": [",
		(unsigned long long)s->requests_seen, (unsigned long long)s->outside_burst,
		(unsigned long long)s->untimed, s->gaps_exact ? "true" : "false");
	for (size_t i = 0; i < s->nreads; i++)
		fprintf(f,
			"%s{\"pc\": %llu, \"via\": %u, \"entry\": %u, \"clock\": %d, "
			"\"caller\": %llu, \"caller2\": %llu}",
			i ? ", " : "", (unsigned long long)s->reads[i].pc, s->reads[i].via,
			s->reads[i].entry, s->reads[i].clock,
			(unsigned long long)s->reads[i].callers[0],
			(unsigned long long)s->reads[i].callers[1]);
	fputs("], \"requests\": [", f);
	for (size_t i = 0; i < s->nrequests; i++) {
		const struct cp_anatomy_request *r = &s->requests[i];

		fprintf(f,
			"%s{\"tid\": %d, \"start_ns\": %llu, \"end_ns\": %llu, "
			"\"truncated\": %s, \"events\": [",
			i ? ", " : "", r->tid, (unsigned long long)r->start_ns,
			(unsigned long long)r->end_ns, r->truncated ? "true" : "false");
		for (size_t e = 0; e < r->nevents; e++)
			fprintf(f, "%s[%llu, %u, %u]", e ? ", " : "",
				(unsigned long long)r->events[e].t_ns, r->events[e].kind,
				r->events[e].what);
		fputs("]}", f);
	}
	fputs("]}\n", f);
	fclose(f);
}
