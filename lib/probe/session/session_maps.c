/* session_maps.c - the session's maps while attached: the counts read
 * (reduced over the CPUs), the call sites and stacks, the per-request
 * distribution's threads, the vDSO patch's sums taken at an exit; and
 * what user space writes there (the unwind rules, the phase, the wrapper
 * check). See session.h. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "clock_points.h"
#include "clockreads.skel.h"
#include "core_btf.h"
#include "error.h"
#include "grow.h"
#include "map_walk.h"
#include "monotonic.h"
#include "own_code.h"
#include "procfs.h"
#include "exec_guard.h"
#include "session.h"
#include "session_internal.h"
#include "session_probes.h"
#include "unwind_table.h"
#include "uprobe_multi.h"
#include "uprobe_removal.h"

/* Reads one entry of a per-CPU map: s->ncpus values of size bytes, one
 * per CPU, into *percpu (malloc'd; free() it). */
static int read_percpu(struct cp_session *s, const struct bpf_map *map, const void *key,
		       size_t key_size, size_t size, void **percpu)
{
	void *v = calloc((size_t)s->ncpus, size);
	int rc;

	*percpu = NULL;
	if (!v)
		return -1;
	rc = bpf_map__lookup_elem(map, key, key_size, v, (size_t)s->ncpus * size, 0);
	if (rc) {
		free(v);
		return rc;
	}
	*percpu = v;
	return 0;
}

/* The per-CPU values' reducers, one per type: counts add up, a maximum
 * takes the largest. A field added to one of these types needs its line
 * here; the sizes below fail to compile until it has one. */
_Static_assert(sizeof(struct cp_totals) ==
		       2 * sizeof(struct cp_read_counts) + (10 + CP_HIST_SLOTS) * sizeof(__u64),
	       "every field of struct cp_totals has its line in totals_add");
_Static_assert(sizeof(struct cp_dist) == (3 + CP_DIST_BUCKETS) * sizeof(__u64),
	       "every field of struct cp_dist has its line in dist_add");

static void max_into(__u64 *max, __u64 v)
{
	if (v > *max)
		*max = v;
}

static void totals_add(void *total, const void *one)
{
	struct cp_totals *sum = total;
	const struct cp_totals *v = one;

	cp_read_counts_add(&sum->all, &v->all);
	cp_read_counts_add(&sum->in_requests, &v->in_requests);
	sum->requests += v->requests;
	sum->boundary_hits += v->boundary_hits;
	sum->trap_hits += v->trap_hits;
	max_into(&sum->max_reads_per_request, v->max_reads_per_request);
	sum->site_unnamed += v->site_unnamed;
	sum->site_uncredited += v->site_uncredited;
	sum->stack_drops += v->stack_drops;
	sum->stack_copy_drops += v->stack_copy_drops;
	sum->stacks_preempted += v->stacks_preempted;
	sum->counter_boundaries += v->counter_boundaries;
	for (int i = 0; i < CP_HIST_SLOTS; i++)
		sum->hist[i] += v->hist[i];
}

static void dist_add(void *total, const void *one)
{
	struct cp_dist *sum = total;
	const struct cp_dist *v = one;

	sum->count += v->count;
	max_into(&sum->max, v->max);
	sum->sum += v->sum;
	for (int i = 0; i < CP_DIST_BUCKETS; i++)
		sum->bucket[i] += v->bucket[i];
}

/* Reads one entry of a per-CPU map into sum (size bytes), its CPUs'
 * values reduced by add, the reducer of its type. */
static int read_reduced(struct cp_session *s, const struct bpf_map *map, const void *key,
			size_t key_size, void *sum, size_t size,
			void (*add)(void *sum, const void *one))
{
	void *raw;
	int rc;

	memset(sum, 0, size);
	rc = read_percpu(s, map, key, key_size, size, &raw);
	for (int c = 0; rc == 0 && c < s->ncpus; c++)
		add(sum, (const char *)raw + (size_t)c * size);
	free(raw);
	return rc;
}

/* Whether a syscall: boundary's wrapper check fell back to sys_enter:
 * the requests the program closed while it checked are then the run's
 * (CP_TOTALS_CHECKED, the sites' in_checked), the target's are not. */
static bool checked_count(const struct cp_session *s)
{
	return s->skel->bss->wrapper_check.fallback_ns != 0;
}

int cp_session_read(struct cp_session *s, struct cp_totals *sum)
{
	__u32 key = CP_TOTALS_WINDOW;
	struct cp_totals checked;
	int rc = read_reduced(s, s->skel->maps.totals, &key, sizeof(key), sum, sizeof(*sum),
			      totals_add);

	key = CP_TOTALS_CHECKED;
	if (rc == 0 && checked_count(s)) {
		rc = read_reduced(s, s->skel->maps.totals, &key, sizeof(key), &checked,
				  sizeof(checked), totals_add);
		if (rc == 0)
			totals_add(sum, &checked);
	}
	return rc;
}

void cp_session_wrapper_check(const struct cp_session *s, struct cp_wrapper_check *c)
{
	const volatile struct cp_wrapper_check *w = &s->skel->bss->wrapper_check;

	c->checked = w->checked;
	c->mismatched = w->mismatched;
	c->fallback_ns = w->fallback_ns;
}

void cp_session_wrapper_fall_back(struct cp_session *s)
{
	/* CLOCK_MONOTONIC: bpf_ktime_get_ns's clock */
	s->skel->bss->wrapper_check.fallback_ns = (uint64_t)(cp_monotonic_s() * 1e9);
	__atomic_store_n(&s->skel->bss->requests_checked, CP_TOTALS_WINDOW, __ATOMIC_RELAXED);
}

void cp_session_end_wrapper_check(struct cp_session *s)
{
	struct cp_wrapper_check c;

	cp_session_wrapper_check(s, &c);
	if (c.fallback_ns || !s->boundary.link)
		return;
	bpf_link__destroy(s->boundary.link);
	s->boundary.link = NULL;
}

/* Puts table t's rules in map fd; 0, or -1 with errno set. */
static int load_rules(int fd, const struct cp_unwind_table *t)
{
	__u32 count = (__u32)t->n;
	__u64 *keys = malloc(t->n * sizeof(*keys) + 1);
	struct cp_unwind_rule *values = malloc(t->n * sizeof(*values) + 1);
	int e = 0;

	if (!keys || !values) {
		e = ENOMEM;
	} else {
		for (size_t i = 0; i < t->n; i++) {
			keys[i] = t->entries[i].pc;
			values[i] = t->entries[i].rule;
		}
		/* One syscall for all rules where the kernel batches, else one each. */
		if (count && bpf_map_update_batch(fd, keys, values, &count, NULL))
			for (size_t i = 0; i < t->n && !e; i++)
				if (bpf_map_update_elem(fd, &keys[i], &values[i], BPF_ANY))
					e = errno;
	}
	free(keys);
	free(values);
	errno = e;
	return e ? -1 : 0;
}

/* --stacks: a map sized to t's rules, holding them, put in the programs'
 * slot in one step (a walk sees the old table or the new one); the slot
 * keeps it, and the old one goes once no program uses it. */
static int swap_stack_rules(struct cp_session *s, const struct cp_unwind_table *t)
{
	__u32 zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "stack_unwind", sizeof(__u64),
				sizeof(struct cp_unwind_rule), t->n ? (__u32)t->n : 1, NULL);
	int rc, e;

	if (fd < 0)
		return -1;
	rc = load_rules(fd, t) || bpf_map__update_elem(s->skel->maps.stack_unwind_rules, &zero,
						       sizeof(zero), &fd, sizeof(fd), BPF_ANY);
	e = errno;
	close(fd);
	errno = e;
	return rc ? -1 : 0;
}

int cp_session_set_unwind(struct cp_session *s, const struct cp_unwind_table *t,
			  struct cp_error *err)
{
	if (load_rules(bpf_map__fd(s->skel->maps.unwind_rules), t))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot load the unwind rules: %s",
			       strerror(errno));
	return 0;
}

int cp_session_set_stack_rules(struct cp_session *s, const struct cp_unwind_table *t,
			       struct cp_error *err)
{
	if (swap_stack_rules(s, t))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot load the stack unwind rules: %s",
			       strerror(errno));
	return 0;
}

/* A growing list of the entries read, elements of size bytes. */
struct entry_list {
	void *v;
	size_t n, cap, size;
};

static int append_entry(struct entry_list *l, const void *entry)
{
	if (cp_grow(&l->v, &l->cap, l->n + 1, l->size))
		return -1;
	memcpy((char *)l->v + l->n++ * l->size, entry, l->size);
	return 0;
}

struct site_walk {
	struct bpf_map *counts;
	struct entry_list list;
	bool checked; /* checked_count */
};

/* site_counts is shared by the CPUs: one value per site, at the id that
 * site_ids gives its key. */
static int add_site(const void *key, const void *id, void *arg)
{
	struct site_walk *w = arg;
	struct cp_site_count c;

	memcpy(&c.key, key, sizeof(c.key));
	if (bpf_map__lookup_elem(w->counts, id, sizeof(__u32), &c.counts, sizeof(c.counts), 0))
		return 0;
	if (w->checked)
		c.counts.in_requests += c.counts.in_checked;
	return append_entry(&w->list, &c);
}

int cp_session_read_sites(struct cp_session *s, struct cp_site_count **sites, size_t *n)
{
	struct site_walk w = { s->skel->maps.site_counts,
			       { .size = sizeof(**sites) },
			       checked_count(s) };
	int rc = cp_map_walk(s->skel->maps.site_ids, sizeof(struct cp_site_key), sizeof(__u32),
			     add_site, &w);

	*sites = w.list.v;
	*n = w.list.n;
	return rc;
}

static int add_stack(const void *key, const void *count, void *arg)
{
	struct cp_stack_count c;

	memcpy(&c.key, key, sizeof(c.key));
	memcpy(&c.count, count, sizeof(c.count));
	return append_entry(arg, &c);
}

int cp_session_read_stacks(struct cp_session *s, struct cp_stack_count **stacks, size_t *n)
{
	struct entry_list l = { .size = sizeof(**stacks) };
	int rc = cp_map_walk(s->skel->maps.stacks, sizeof(struct cp_stack_key), sizeof(__u64),
			     add_stack, &l);

	*stacks = l.v;
	*n = l.n;
	return rc;
}

static bool dist_free_slot(const struct cp_session *s, __u32 *slot)
{
	for (__u32 i = 0; i < s->dist_slots_used; i++)
		if (!s->dist_tids[i]) {
			*slot = i;
			return true;
		}
	*slot = s->dist_slots_used;
	return s->dist_slots_used < CP_DIST_MAX_THREADS;
}

bool cp_session_dist_full(const struct cp_session *s)
{
	return s->dist_live == CP_DIST_MAX_THREADS;
}

int cp_session_dist_add_thread(struct cp_session *s, pid_t tid, int fd)
{
	__u32 slot, key = (__u32)tid;

	if (!dist_free_slot(s, &slot) ||
	    bpf_map__update_elem(s->skel->maps.dist_events, &slot, sizeof(slot), &fd, sizeof(fd),
				 BPF_ANY) ||
	    bpf_map__update_elem(s->skel->maps.dist_slots, &key, sizeof(key), &slot, sizeof(slot),
				 BPF_ANY)) {
		close(fd);
		return -1;
	}
	s->dist_tids[slot] = tid;
	s->dist_fds[slot] = fd;
	s->dist_live++;
	if (slot == s->dist_slots_used)
		s->dist_slots_used++;
	return 0;
}

void cp_session_dist_remove_thread(struct cp_session *s, pid_t tid)
{
	__u32 key = (__u32)tid;

	for (__u32 i = 0; i < s->dist_slots_used; i++) {
		if (s->dist_tids[i] != tid)
			continue;
		bpf_map__delete_elem(s->skel->maps.dist_slots, &key, sizeof(key), 0);
		bpf_map__delete_elem(s->skel->maps.dist_events, &i, sizeof(i), 0);
		close(s->dist_fds[i]);
		s->dist_tids[i] = 0;
		s->dist_live--;
		return;
	}
}

size_t cp_session_dist_tids(const struct cp_session *s, pid_t *tids)
{
	size_t n = 0;

	for (__u32 i = 0; i < s->dist_slots_used; i++)
		if (s->dist_tids[i])
			tids[n++] = s->dist_tids[i];
	return n;
}

void cp_session_watch_prepare_exec(struct cp_session *s)
{
	if (!s->prepare_exec_watch && s->skel->rodata->exec_traced)
		s->prepare_exec_watch = bpf_program__attach_raw_tracepoint(
			s->skel->progs.on_target_exit, "sched_prepare_exec");
}

void cp_session_set_patch_table(struct cp_session *s, uint64_t addr)
{
	__atomic_store_n(&s->skel->bss->patch_table, addr, __ATOMIC_SEQ_CST);
	if (!s->exit_watch)
		s->exit_watch = bpf_program__attach(s->skel->progs.on_target_exit);
	/* the exec's sums (on_clock_func takes them at the C library's execve
	 * only where the kernel has no sched_prepare_exec) */
	cp_session_watch_prepare_exec(s);
}

void cp_session_set_patch_window(struct cp_session *s, uint64_t window)
{
	__atomic_store_n(&s->skel->bss->patch_window, window, __ATOMIC_SEQ_CST);
}

bool cp_session_patch_exit_sums(struct cp_session *s, uint64_t sums[CP_PATCH_SLOT_WORDS])
{
	struct cp_patch_exit e;
	__u32 zero = 0;

	if (!s->exit_watch ||
	    bpf_map__lookup_elem(s->skel->maps.patch_exit, &zero, sizeof(zero), &e, sizeof(e), 0) ||
	    !e.done)
		return false;
	memcpy(sums, e.sums, sizeof(e.sums));
	return true;
}

/* Each call site of the last whole pass over the target's table, with
 * its reads (in: inside requests closed in the target, else all). */
static int each_exit_site(struct cp_session *s, bool in,
			  int (*each)(void *ctx, uint64_t key, uint64_t count), void *ctx)
{
	struct bpf_map *map = s->skel->maps.patch_exit_sites;
	__u64 gen = s->skel->bss->patch_exit_gen_done, key, next;
	struct cp_patch_exit_site v;
	int rc = 0;

	for (int more = !bpf_map__get_next_key(map, NULL, &next, sizeof(next)); more && !rc;
	     more = !bpf_map__get_next_key(map, &key, &next, sizeof(next))) {
		key = next;
		if (!bpf_map__lookup_elem(map, &key, sizeof(key), &v, sizeof(v), 0) &&
		    v.gen == gen && (in ? v.in_requests : v.count))
			rc = each(ctx, key, in ? v.in_requests : v.count);
	}
	return rc;
}

int cp_session_patch_exit_requests(struct cp_session *s, struct cp_request_sums *out,
				   int (*each)(void *ctx, uint64_t key, uint64_t in_requests),
				   void *ctx)
{
	__u32 zero = 0;

	if (!s->exit_watch || !s->skel->bss->patch_exit_gen_done ||
	    bpf_map__lookup_elem(s->skel->maps.patch_exit_requests, &zero, sizeof(zero), out,
				 sizeof(*out), 0) ||
	    out->gen != s->skel->bss->patch_exit_gen_done)
		return -1;
	return each_exit_site(s, true, each, ctx);
}

int cp_session_patch_exit_sites(struct cp_session *s,
				int (*each)(void *ctx, uint64_t key, uint64_t count), void *ctx)
{
	if (!s->exit_watch || !s->skel->bss->patch_exit_gen_done)
		return -1;
	return each_exit_site(s, false, each, ctx);
}

void cp_session_set_phase(struct cp_session *s, enum cp_phase phase)
{
	/* A plain store the programs read on their next run; one still
	 * running on another CPU finishes in the phase it started in. */
	__atomic_store_n(&s->skel->bss->phase, (__u32)phase, __ATOMIC_SEQ_CST);
}

int cp_session_read_dist(struct cp_session *s, struct cp_dist *sum)
{
	__u32 zero = 0;

	return read_reduced(s, s->skel->maps.dist, &zero, sizeof(zero), sum, sizeof(*sum),
			    dist_add);
}
