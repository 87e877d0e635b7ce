/* compare.h - the gate: judge every measure of base runs against head runs.
 *
 * Input is runs as lib/gate/include/compare_run.h reads them, each side being
 * repeated runs of one build. Every measure (run.json
 * "measures") is judged against its bound (lib/gate/include/bounds.h):
 *
 *  - exact measures (counts known to be deterministic: clock reads per
 *    request and per call site) that are constant within each side compare
 *    value to value, with a single run allowed; any change in the bad
 *    direction beyond the bound regresses. An exact measure whose runs
 *    differ within a side (reads that depend on the data) is judged as a
 *    sampled one, with a note.
 *  - sampled measures (times, counters) get a Hodges-Lehmann estimate and
 *    95% confidence interval of the relative change and Mann-Whitney U
 *    tests (lib/gate/stats.h; exact for small samples). The hypothesis decided
 *    is "the change is beyond the bound", so that is what is tested (head
 *    against base moved to the bound, one-sided) and corrected (Holm) over
 *    the family of measures that could be beyond it (one-sided p <= 0.8,
 *    tested with the conditional p-value p / 0.8; compare.c says why): a
 *    measure regresses when its estimate lies beyond the bound AND its
 *    Holm-adjusted p-value is below alpha. A measure whose estimate is
 *    beyond the bound but not proven so is inconclusive (and so is the
 *    verdict); one whose estimate is within the bound but whose interval
 *    still reaches past it stays within, with a note saying what the runs
 *    cannot exclude. Too few runs for the family size, a relative bound
 *    on a zero base, or runs from different hosts (CPU, kernel,
 *    clocksource, PMU) are inconclusive, with the reason.
 *  - a measure on one side only is "added" or "removed", never dropped; a
 *    measure present in every base run and missing from the head fails the
 *    gate unless a `removed-ok` bounds line allows it.
 *  - runs: incomplete ones (complete: false) are left out and listed;
 *    the same run given twice is refused; runs counted by different
 *    mechanisms (uprobe, breakpoint) are not judged at all, nor (unless
 *    allowed) runs whose request boundary or ops_source differ
 *    (lib/gate/compare_boundary.c), nor runs that measured nothing: a
 *    side with a request boundary and no complete request in any run, or
 *    no clock read in any run of either side (lib/gate/compare_evidence.c);
 *    warnings of the runs are carried into the result.
 *
 * The result is turned into verdict.json by lib/gate/include/verdict_file.h. */
#ifndef CP_COMPARE_H
#define CP_COMPARE_H

#include <jansson.h>
#include <stddef.h>

#include "compare_run.h"

/* A sampled measure whose one-sided p for "beyond the bound" is at most
 * this joins the family corrected for it, tested with p / this (why:
 * lib/gate/compare.c). */
#define CP_FAMILY_SELECT 0.8

struct cp_error;
struct cp_bounds;
struct cp_bound_rule;

enum cp_measure_status {
	CP_MEASURE_WITHIN,
	CP_MEASURE_REGRESSED,
	CP_MEASURE_IMPROVED,
	CP_MEASURE_INCONCLUSIVE,
	CP_MEASURE_ADDED,
	CP_MEASURE_REMOVED,
	CP_MEASURE_NSTATUS
};

enum cp_verdict_status { CP_VERDICT_PASS, CP_VERDICT_FAIL, CP_VERDICT_INCONCLUSIVE };

/* "within", "regressed", ...; "pass", "fail", "inconclusive". */
const char *cp_measure_status_name(enum cp_measure_status s);
const char *cp_verdict_status_name(enum cp_verdict_status s);

/* One side of a comparison: the loaded runs and their file names (names
 * are used in messages and verdict.json; may be NULL). */
struct cp_compare_side {
	const struct cp_compare_run *runs;
	const char *const *names;
	size_t n;
};

struct cp_compare_opts {
	double alpha; /* 0.05; also sets the interval: 1 - alpha */
	int fail_on_inconclusive;
	/* --allow-mismatch: runs whose request boundary or ops_source
	 * differ are judged (with a warning) rather than refused. */
	int allow_mismatch;
	/* The repository's root, to which the lines of a regressed per-site
	 * measure are made relative ("repo_path"); NULL: the current
	 * directory. */
	const char *source_root;
};

struct cp_side_stats {
	double median, lo, hi; /* lo/hi: min and max over runs */
	size_t n;	       /* runs in which the measure is present */
};

struct cp_interval {
	double point, lo, hi; /* NaN when unknown */
};

/* The longest reason a measure is given, with its NUL. */
#define CP_MEASURE_REASON_MAX 320

struct cp_measure_verdict {
	const char *name;   /* owned by the result */
	const char *unit;   /* in a run's pool: the runs must outlive the result */
	int exact;	    /* kind "exact" (else "sampled") */
	int judged_sampled; /* exact, but varied within a side */
	int higher_is_better;
	int in_base, in_head;
	struct cp_side_stats base, head;
	struct cp_interval change_pct; /* NaN point when base is 0 */
	struct cp_interval change_abs; /* head - base, in unit */
	double p_value, p_adjusted;    /* "no change"; NaN when not tested */
	/* "change beyond the bound", one-sided (NaN when not tested), and
	 * the Holm adjustment of its conditional p over the family (NaN
	 * outside it). */
	double p_beyond, p_beyond_adjusted;
	int in_family;			   /* p_beyond small enough to be corrected */
	int test_exact;			   /* -1 not tested, 0 approximate, 1 exact U */
	int interval_ratio;		   /* -1 none, 0 shift, 1 ratio */
	int blocking;			   /* removed and not allowed: fails */
	char not_excluded[32];		   /* within, but the interval reaches
					 * this far past the bound ("+7.1%") */
	const struct cp_bound_rule *bound; /* NULL for added/removed */
	enum cp_measure_status status;
	int direction;		/* +1 worse, -1 better, 0 same */
	double noise_floor_pct; /* NaN when not computed */
	size_t runs_needed;	/* per side; 0 unless too few runs */
	char *reason;		/* malloc'd; NULL: none ("") */
	json_t *warnings;	/* array of strings; NULL: none */
	/* A regressed per-site measure (clock_reads@FUNCTION/op): the
	 * lines of FUNCTION that gained reads per op (compare_lines.h);
	 * NULL for any other measure. */
	json_t *lines;
};

struct cp_compare_result {
	struct cp_measure_verdict *measures; /* sorted by name */
	size_t n;
	size_t counts[CP_MEASURE_NSTATUS];
	enum cp_verdict_status status;
	int exit_code;		      /* 0 or 1 (CP_EXIT_GATE) */
	size_t min_runs;	      /* per side, for a sampled interval */
	size_t holm_family;	      /* measures corrected together */
	size_t blocking;	      /* removed measures that fail the gate */
	json_t *excluded;	      /* [{side, file, reason}] runs left out */
	json_t *inconclusive_reasons; /* run-level reasons, strings */
	double alpha;
	int fail_on_inconclusive;
	int allow_mismatch;
	json_t *base_env, *head_env; /* {field: [distinct values]} */
	json_t *env_mismatch;	     /* [{field, base, head, effect}] */
	json_t *warnings;	     /* array of strings */
	/* The reusable reads (run.json anatomy.reusable) of every base run
	 * that no head run lists, largest base saving first
	 * (compare_reusable.c); NULL when a side has no run whose reuse was
	 * judged. */
	json_t *reusable_removed;
	char *name_pool; /* owns the measure names */
};

/* The fingerprint of one run: {kernel, cpu, clocksource, pmu, mechanism,
 * tool_version, build_id, exe}, each the run's value or null (new
 * reference); mechanism is never null ("breakpoint" for files that name
 * none, see cp_run_mechanism). */
json_t *cp_run_fingerprint(const json_t *run);

/* Judges head against base. bounds records which rules matched. On success
 * fills *out (free with cp_compare_result_free). Fails (CP_EXIT_USAGE) when
 * a side is empty, when a side has the same run twice (same digest), when
 * the runs were not all counted with the same mechanism
 * (clock_reads.mechanism), or, without opts->allow_mismatch, when they
 * differ in their request boundary or ops_source. */
int cp_compare(const struct cp_compare_side *base, const struct cp_compare_side *head,
	       struct cp_bounds *bounds, const struct cp_compare_opts *opts,
	       struct cp_compare_result *out, struct cp_error *err);

void cp_compare_result_free(struct cp_compare_result *r);

/* Whether two figures of a line's reads per op are the same reads: they
 * differ by less than 1% (per_op over --ops, or with reads outside
 * requests, wavers in its last digits; docs/gating.md). */
int cp_same_reads(double a, double b);

#endif
