/* compare_run.h - a run file as the gate keeps it.
 *
 * compare needs four things of a run: its measures, its environment
 * fingerprint, whether it is complete and, to name the lines of a per-site
 * measure, its call sites. A run's measures parse into ten
 * times their size in JSON values; holding all 60 runs of a gate as whole
 * documents, then freeing them value by value, cost more than judging them.
 * So each run is read member by member (cp_run_file_read) into a flat
 * table of measures plus the document without its bulky members: the tree
 * of its measures is never built. */
#ifndef CP_COMPARE_RUN_H
#define CP_COMPARE_RUN_H

#include <jansson.h>
#include <stddef.h>

struct cp_error;

/* One entry of run.json "measures". */
struct cp_run_measure {
	const char *name; /* in the run's pool */
	const char *unit; /* in the run's pool */
	double value;
	int exact;	      /* kind "exact" (else "sampled") */
	int higher_is_better; /* better "higher" (else "lower") */
};

/* One entry of run.json "call_sites", as much of it as the gate reads. */
struct cp_run_site {
	const char *function;
	const char *file; /* NULL without line information; a relative
				 * one taken from the site's comp_dir when
				 * the run names it */
	long long line;
	double per_op; /* NaN without ops */
	/* Where a helper inlined into the function is called, the line of the
	 * function's own (inlined_at); NULL and 0 when none is named. */
	const char *at_file;
	long long at_line;
};

struct cp_compare_run {
	/* The run document; without "measures", "call_sites" and "stacks"
	 * unless it was read whole (a report needs those). */
	json_t *doc;
	/* Its call sites, flat (where a per-site measure's reads are, by
	 * line: compare_lines.h); strings in sites_pool, which is in the block
	 * of sites (freed with it). */
	struct cp_run_site *sites;
	size_t nsites;
	char *sites_pool;
	/* Its sites say inlined_at, null or not (written since it was added);
	 * one without any sites too. */
	int names_inlined_at;
	struct cp_run_measure *measures; /* in document order */
	size_t nmeasures;
	char *pool; /* names and units */
	/* SHA-256 of what is judged (the trimmed document and every measure),
	 * hex: the same run given twice has the same digest. */
	char digest[65];
};

/* Reads doc (a validated run document) into run; doc keeps its reference.
 * whole: run->doc is doc itself, not the trimmed copy. -1 when out of
 * memory. */
int cp_compare_run_from_doc(const json_t *doc, int whole, struct cp_compare_run *run);

void cp_compare_run_free(struct cp_compare_run *run);

/* Loads and validates n run files with cp_run_file_load(), several at a
 * time (parsing dominates a large gate: 60 files of 1,000 measures are
 * ~8 MB of JSON), into runs[i] for paths[i]; whole as above. On failure
 * every run is released and err holds the message of the first bad file
 * in order, the same one a sequential load would report. */
int cp_compare_load_runs(const char *const *paths, size_t n, int whole, struct cp_compare_run *runs,
			 struct cp_error *err);

#endif
