/* compare_run.c - see compare_run.h. */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compare_run.h"
#include "error.h"
#include "grow.h"
#include "json_file.h"
#include "parallel.h"
#include "run_file.h"
#include "sha256.h"

/* Members that grow with the target (one entry per measure, call site or
 * stack) and that judging never reads. */
static int bulky_member(const char *key)
{
	return !strcmp(key, "measures") || !strcmp(key, "call_sites") || !strcmp(key, "stacks");
}

static const char *string_or_empty(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}

static int read_measures(const json_t *doc, struct cp_compare_run *run)
{
	const json_t *measures = json_object_get(doc, "measures");
	size_t n = json_object_size(measures), pool_len = 0, k = 0;
	const char *name;
	json_t *m;
	char *p;

	json_object_foreach((json_t *)measures, name, m)
		pool_len += strlen(name) + strlen(string_or_empty(m, "unit")) + 2;
	run->measures = calloc(n + 1, sizeof(*run->measures));
	run->pool = malloc(pool_len + 1);
	if (!run->measures || !run->pool)
		return -1;
	p = run->pool;
	json_object_foreach((json_t *)measures, name, m) {
		struct cp_run_measure *rm = &run->measures[k++];
		const char *unit = string_or_empty(m, "unit");
		size_t len = strlen(name) + 1;

		rm->name = memcpy(p, name, len);
		p += len;
		len = strlen(unit) + 1;
		rm->unit = memcpy(p, unit, len);
		p += len;
		rm->value = json_number_value(json_object_get(m, "value"));
		rm->exact = !strcmp(string_or_empty(m, "kind"), "exact");
		rm->higher_is_better = !strcmp(string_or_empty(m, "better"), "higher");
	}
	run->nmeasures = k;
	return 0;
}

/* Where a site reads in its function's own lines, where a helper inlined
 * into it reads (run-json.md: inlined_at): NULL without one, or without a
 * file, which the site's own line is named by instead. */
static const json_t *inlined_at(const json_t *s)
{
	const json_t *at = json_object_get(s, "inlined_at");

	return json_integer_value(json_object_get(at, "line")) > 0 &&
			       json_is_string(json_object_get(at, "file")) ?
		       at :
		       NULL;
}

/* s copied into pool at *at, which moves past it; NULL stays NULL. */
static const char *pooled(char *pool, size_t *at, const char *s)
{
	char *copy = pool + *at;
	size_t len;

	if (!s)
		return NULL;
	len = strlen(s) + 1;
	memcpy(copy, s, len);
	*at += len;
	return copy;
}

/* A site's file s as a path: one DWARF names relative (built by
 * `cc ../src/x.c`, or with -fdebug-prefix-map) is taken from the site's
 * compile directory, comp_dir, when the run names it; else as it is. In
 * pool at *at, which moves past it; NULL stays NULL. */
static const char *pooled_path(char *pool, size_t *at, const char *dir, const char *s)
{
	char *copy = pool + *at;
	int n;

	if (!s || s[0] == '/' || !dir || !dir[0])
		return pooled(pool, at, s);
	n = sprintf(copy, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", s);
	*at += (size_t)n + 1;
	return copy;
}

/* The call sites as a flat table: the gate keeps 60 runs, and a site's
 * JSON tree is a dozen values where it reads four. */
static int read_sites(const json_t *cs, struct cp_compare_run *run)
{
	size_t n = json_array_size(cs), len = 0, at = 0, i;
	const json_t *s;

	run->names_inlined_at = !n;
	json_array_foreach(cs, i, s) {
		len += strlen(cp_json_str(s, "function", "")) + strlen(cp_json_str(s, "file", "")) +
		       5;
		len += strlen(cp_json_str(inlined_at(s), "file", ""));
		len += 2 * strlen(cp_json_str(s, "comp_dir", ""));
		run->names_inlined_at |= json_object_get(s, "inlined_at") != NULL;
	}
	if (!n)
		return 0;
	/* One block: the table, then the strings it points into. */
	run->sites = calloc(1, n * sizeof(*run->sites) + len);
	if (!run->sites)
		return -1;
	run->sites_pool = (char *)(run->sites + n);
	json_array_foreach(cs, i, s) {
		struct cp_run_site *r = &run->sites[i];
		const json_t *per_op = json_object_get(s, "per_op"), *called = inlined_at(s);
		const char *dir = cp_json_str(s, "comp_dir", NULL);

		r->function = pooled(run->sites_pool, &at, cp_json_str(s, "function", ""));
		r->file = pooled_path(run->sites_pool, &at, dir, cp_json_str(s, "file", NULL));
		r->line = json_integer_value(json_object_get(s, "line"));
		r->at_file = pooled_path(run->sites_pool, &at, dir,
					 cp_json_str(called, "file", NULL));
		r->at_line = called ? json_integer_value(json_object_get(called, "line")) : 0;
		r->per_op = json_is_number(per_op) ? json_number_value(per_op) : NAN;
	}
	run->nsites = n;
	return 0;
}

/* The digest of the trimmed document and the measures table: a copy of
 * a run file, or the same document loaded twice, has the same one. */
static int run_digest(const json_t *trimmed, struct cp_compare_run *run)
{
	char *text = json_dumps(trimmed, JSON_COMPACT | JSON_SORT_KEYS);
	size_t len = text ? strlen(text) : 0, cap = len + 1;
	char *buf;

	if (!text)
		return -1;
	cap += run->nmeasures * (sizeof(double) + 3);
	if (!(buf = malloc(cap))) {
		free(text);
		return -1;
	}
	memcpy(buf, text, len);
	free(text);
	/* Each measure's value, kind and name length, as raw bytes: this runs
	 * for every measure of every run, and hashing the names too cost a
	 * 1,000-measure gate 6 ms. Two different runs differ in their
	 * metadata (start time, pid) or their values. */
	for (size_t k = 0; k < run->nmeasures; k++) {
		const struct cp_run_measure *m = &run->measures[k];
		size_t nl = strlen(m->name);

		memcpy(buf + len, &m->value, sizeof(m->value));
		len += sizeof(m->value);
		buf[len++] = (char)(m->exact | m->higher_is_better << 1);
		buf[len++] = (char)(nl & 0xff);
		buf[len++] = (char)(nl >> 8 & 0xff);
	}
	cp_sha256_hex(buf, len, run->digest);
	free(buf);
	return 0;
}

int cp_compare_run_from_doc(const json_t *doc, int whole, struct cp_compare_run *run)
{
	const char *key;
	json_t *v;

	memset(run, 0, sizeof(*run));
	if (read_measures(doc, run))
		goto oom;
	/* Copied, not shared: the caller frees doc, bulky members and all. */
	if (!(run->doc = json_object()))
		goto oom;
	json_object_foreach((json_t *)doc, key, v)
		if (!bulky_member(key) && json_object_set_new(run->doc, key, json_deep_copy(v)))
			goto oom;
	if (run_digest(run->doc, run))
		goto oom;
	if (read_sites(json_object_get(doc, "call_sites"), run))
		goto oom;
	if (whole) {
		json_decref(run->doc);
		run->doc = json_incref((json_t *)doc);
	}
	return 0;
oom:
	cp_compare_run_free(run);
	return -1;
}

void cp_compare_run_free(struct cp_compare_run *run)
{
	json_decref(run->doc);
	free(run->sites); /* and sites_pool, in its block */
	free(run->measures);
	free(run->pool);
	memset(run, 0, sizeof(*run));
}

/* A run's measures as the reader hands them over. Names and units go to
 * the pool as offsets (it moves as it grows) and become pointers at the
 * end. */
struct measure_sink {
	struct cp_compare_run *run;
	size_t cap, pool_len, pool_cap;
};

static int pool_add(struct measure_sink *s, const char *text, size_t *off)
{
	size_t len = strlen(text) + 1;

	if (cp_grow(&s->run->pool, &s->pool_cap, s->pool_len + len, 1))
		return -1;
	*off = s->pool_len;
	memcpy(s->run->pool + s->pool_len, text, len);
	s->pool_len += len;
	return 0;
}

static int add_measure(void *ctx, const char *name, const json_t *m)
{
	struct measure_sink *s = ctx;
	struct cp_compare_run *run = s->run;
	struct cp_run_measure *rm;
	size_t name_off, unit_off;

	if (cp_grow(&run->measures, &s->cap, run->nmeasures + 1, sizeof(*run->measures)) ||
	    pool_add(s, name, &name_off) || pool_add(s, string_or_empty(m, "unit"), &unit_off))
		return -1;
	rm = &run->measures[run->nmeasures++];
	rm->name = (const char *)(uintptr_t)name_off;
	rm->unit = (const char *)(uintptr_t)unit_off;
	rm->value = json_number_value(json_object_get(m, "value"));
	rm->exact = !strcmp(string_or_empty(m, "kind"), "exact");
	rm->higher_is_better = !strcmp(string_or_empty(m, "better"), "higher");
	return 0;
}

/* The table and the pool grew by doubling: up to half of each is slack
 * that every run would keep while it is judged. */
static void shrink_to_fit(struct cp_compare_run *run, size_t pool_len)
{
	void *p;

	if (run->nmeasures && (p = realloc(run->measures, run->nmeasures * sizeof(*run->measures))))
		run->measures = p;
	if (pool_len && (p = realloc(run->pool, pool_len)))
		run->pool = p;
}

/* Reads path into run without ever holding the tree of its measures:
 * each is parsed, copied into the table and dropped (the run file reader
 * walks the file member by member). */
static int load_compact(const char *path, struct cp_compare_run *run, struct cp_error *err)
{
	struct measure_sink sink = { .run = run };
	json_t *doc = NULL;

	memset(run, 0, sizeof(*run));
	if (cp_run_file_read(path, add_measure, &sink, &doc, err))
		goto fail;
	shrink_to_fit(run, sink.pool_len);
	for (size_t k = 0; k < run->nmeasures; k++) {
		run->measures[k].name = run->pool + (uintptr_t)run->measures[k].name;
		run->measures[k].unit = run->pool + (uintptr_t)run->measures[k].unit;
	}
	json_object_del(doc, "measures");
	run->doc = doc;
	if (read_sites(json_object_get(doc, "call_sites"), run)) {
		cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", path);
		goto fail;
	}
	json_object_del(doc, "call_sites");
	json_object_del(doc, "stacks");
	if (run_digest(run->doc, run)) {
		cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", path);
		goto fail;
	}
	return 0;
fail:
	cp_compare_run_free(run);
	return -1;
}

struct load_job {
	const char *const *paths;
	struct cp_compare_run *runs;
	int whole;
	struct cp_error *errs;
	int *failed;
};

static void load_one(void *ctx, size_t i, size_t worker)
{
	struct load_job *job = ctx;
	json_t *doc = NULL;

	(void)worker;
	if (!job->whole) {
		job->failed[i] = load_compact(job->paths[i], &job->runs[i], &job->errs[i]) != 0;
		return;
	}
	job->failed[i] = cp_run_file_load(job->paths[i], &doc, &job->errs[i]) != 0;
	if (!job->failed[i] && cp_compare_run_from_doc(doc, job->whole, &job->runs[i])) {
		cp_fail(&job->errs[i], CP_EXIT_USAGE, "%s: out of memory", job->paths[i]);
		job->failed[i] = 1;
	}
	json_decref(doc);
}

int cp_compare_load_runs(const char *const *paths, size_t n, int whole, struct cp_compare_run *runs,
			 struct cp_error *err)
{
	struct load_job job = { .paths = paths, .runs = runs, .whole = whole };
	int rc = 0;

	job.errs = calloc(n + 1, sizeof(*job.errs));
	job.failed = calloc(n + 1, sizeof(*job.failed));
	if (!job.errs || !job.failed) {
		free(job.errs);
		free(job.failed);
		return cp_fail(err, CP_EXIT_USAGE, "out of memory loading run files");
	}
	memset(runs, 0, n * sizeof(*runs));
	cp_parallel_for(n, cp_parallel_workers(n), load_one, &job);
	/* The loaders' threads freed what parsing took (each measure's tree,
	 * the names kept to find duplicates) into their own malloc arenas,
	 * which judging on this thread does not reuse: given back, or a
	 * 100,000-measure gate keeps ~15 MB it no longer uses. */
	malloc_trim(0);
	for (size_t i = 0; i < n; i++)
		if (job.failed[i]) {
			if (err)
				*err = job.errs[i];
			rc = -1;
			break;
		}
	if (rc)
		for (size_t i = 0; i < n; i++)
			cp_compare_run_free(&runs[i]);
	free(job.errs);
	free(job.failed);
	return rc;
}
