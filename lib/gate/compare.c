/* compare.c - see compare.h for the rules. The gate in its steps: the
 * runs admitted (compare_admit.c), their measures gathered here by name,
 * each measure judged (compare_measure.c), the p-values corrected over
 * the family, and the verdict decided, with the exit code. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "compare.h"
#include "compare_admit.h"
#include "compare_gathered.h"
#include "compare_lines.h"
#include "compare_measure.h"
#include "compare_notes.h"
#include "compare_reusable.h"
#include "error.h"
#include "grow.h"
#include "parallel.h"
#include "run_file.h"
#include "stats.h"

/* CP_FAMILY_SELECT (compare.h): which measures are corrected together for
 * "beyond the bound", and how. Most measures of a gate sit well inside
 * their bound: their one-sided p for "beyond" is near 1, and counting each
 * in Holm's family would take power from the one that moved. So the family
 * is the measures whose p is at most CP_FAMILY_SELECT, each tested with the
 * conditional p-value p / CP_FAMILY_SELECT (Zhao, Small & Su 2019,
 * "Multiple testing when many p-values are uniformly conservative"): at
 * the bound p is uniform, so given p <= CP_FAMILY_SELECT, p divided by it
 * is uniform again, and inside the bound it is only more conservative;
 * Holm over the selected family keeps the family-wise false-fail rate at
 * the bound <= alpha (checked by tests/bench/bench_gate_stats.c).
 * Selecting by "estimate beyond the bound" was the same rule at 0.5, which
 * doubles every p; 0.8 costs a quarter instead and still leaves out
 * measures well within their bound. */

static const char *const status_names[CP_MEASURE_NSTATUS] = {
	"within", "regressed", "improved", "inconclusive", "added", "removed",
};

const char *cp_measure_status_name(enum cp_measure_status s)
{
	return s < CP_MEASURE_NSTATUS ? status_names[s] : "?";
}

const char *cp_verdict_status_name(enum cp_verdict_status s)
{
	return s == CP_VERDICT_FAIL	    ? "fail" :
	       s == CP_VERDICT_INCONCLUSIVE ? "inconclusive" :
					      "pass";
}

/* --- gathering measures ------------------------------------------------ */

/* A new measure: a row of NaN (absent from every run so far). */
static long add_measure(struct cp_gathered *g, const char *name)
{
	size_t width = g->nb + g->nh, i = g->nmeasures;

	if (cp_grow(&g->values, &g->values_cap, (i + 1) * width, sizeof(*g->values)) ||
	    cp_grow(&g->measures, &g->measures_cap, i + 1, sizeof(*g->measures)))
		return -1;
	if (json_object_set_new(g->index, name, json_integer((json_int_t)i)))
		return -1;
	for (size_t c = 0; c < width; c++)
		g->values[i * width + c] = NAN;
	g->measures[i] = (struct cp_gathered_measure){ .name = name };
	g->nmeasures++;
	return (long)i;
}

/* The index of the measure at position k of a run. Run files list their
 * measures in the same order, so the previous run's measure at k is
 * almost always the one: a string compare instead of a hash lookup, for
 * each of the 60,000 values of a 1,000-measure, 60-run gate. */
static long measure_index(struct cp_gathered *g, size_t k, const char *name)
{
	json_t *idx;
	long i;

	if (k < g->npositions && !strcmp(g->measures[g->by_position[k]].name, name))
		return (long)g->by_position[k];
	idx = json_object_get(g->index, name);
	i = idx ? (long)json_integer_value(idx) : add_measure(g, name);
	if (i < 0)
		return -1;
	if (cp_grow(&g->by_position, &g->positions_cap, k + 1, sizeof(*g->by_position)))
		return -1;
	g->by_position[k] = (size_t)i;
	return i;
}

/* The file name of a run's target executable (target.exe), or NULL. */
static const char *target_file_name(const struct cp_compare_run *run)
{
	const char *exe = json_string_value(
		json_object_get(json_object_get(run->doc, "target"), "exe"));
	const char *slash = exe ? strrchr(exe, '/') : NULL;

	return slash ? slash + 1 : exe;
}

static bool run_has(const struct cp_compare_run *run, const char *name)
{
	for (size_t k = 0; k < run->nmeasures; k++)
		if (!strcmp(run->measures[k].name, name))
			return true;
	return false;
}

/* clock_reads[EXE]/op names an executable by its file name. The target's
 * own is matched by its role, as the request boundary is: builds of base
 * and head named apart (server-old, server-new) judge one measure, under
 * the first base run's name (g->main_measure), not one "removed" (which
 * fails the gate) and one "added". from: this run's own name for it, when
 * it differs and the run has no measure of the base's name; else NULL. */
static char *main_alias(struct cp_gathered *g, const struct cp_compare_run *run)
{
	const char *mine = target_file_name(run);
	char *from = NULL;

	if (!g->main_measure || !mine || !strcmp(mine, g->main_file) ||
	    run_has(run, g->main_measure) || asprintf(&from, "clock_reads[%s]/op", mine) < 0)
		return NULL;
	if (!run_has(run, from)) {
		free(from);
		return NULL;
	}
	return from;
}

static int gather_run(struct cp_gathered *g, const struct cp_compare_run *run, size_t column,
		      int is_head)
{
	char *from = main_alias(g, run);

	g->aliased += from != NULL;
	for (size_t k = 0; k < run->nmeasures; k++) {
		const struct cp_run_measure *m = &run->measures[k];
		long i = measure_index(g, k,
				       from && !strcmp(m->name, from) ? g->main_measure : m->name);

		if (i < 0) {
			free(from);
			return -1;
		}
		g->values[(size_t)i * (g->nb + g->nh) + column] = m->value;
		if (is_head && !g->measures[i].head_meta)
			g->measures[i].head_meta = m;
		if (!is_head && !g->measures[i].base_meta)
			g->measures[i].base_meta = m;
	}
	/* Positions past this run's end belong to an older run. */
	g->npositions = run->nmeasures;
	free(from);
	return 0;
}

/* What only gathering looks names up in: the index (~120 bytes a
 * measure) and the positions, dropped once gathered (and when freed). */
static void drop_lookups(struct cp_gathered *g)
{
	json_decref(g->index);
	g->index = NULL;
	free(g->by_position);
	g->by_position = NULL;
	g->npositions = g->positions_cap = 0;
}

static int gather(struct cp_gathered *g, const struct cp_compare_side *base,
		  const struct cp_compare_side *head)
{
	memset(g, 0, sizeof(*g));
	g->nb = base->n;
	g->nh = head->n;
	g->index = json_object();
	if (!g->index)
		return -1;
	g->main_file = target_file_name(&base->runs[0]);
	if (g->main_file && asprintf(&g->main_measure, "clock_reads[%s]/op", g->main_file) < 0)
		g->main_measure = NULL;
	for (size_t r = 0; r < base->n; r++)
		if (gather_run(g, &base->runs[r], r, 0))
			return -1;
	for (size_t r = 0; r < head->n; r++)
		if (gather_run(g, &head->runs[r], g->nb + r, 1))
			return -1;
	drop_lookups(g); /* before the verdicts are made */
	return 0;
}

static void gathered_free(struct cp_gathered *g)
{
	drop_lookups(g);
	free(g->values);
	free(g->measures);
	free(g->main_measure);
}

static int cmp_verdict_name(const void *a, const void *b)
{
	return strcmp(((const struct cp_measure_verdict *)a)->name,
		      ((const struct cp_measure_verdict *)b)->name);
}

/* A side without a complete run: every measure is shown with its numbers
 * but none is judged, nor can one fail the gate. */
static void leave_unjudged(struct cp_compare_result *out)
{
	for (size_t i = 0; i < out->n; i++) {
		struct cp_measure_verdict *mv = &out->measures[i];

		mv->status = CP_MEASURE_INCONCLUSIVE;
		mv->blocking = mv->in_family = 0;
		mv->runs_needed = 0;
		mv->not_excluded[0] = '\0';
		mv->p_value = mv->p_adjusted = NAN;
		mv->p_beyond = mv->p_beyond_adjusted = NAN;
		cp_compare_set_reason(
			mv, "not judged: a side has no complete run (see inconclusive_reasons)");
	}
	out->holm_family = 0;
}

/* Holm on the hypothesis decided ("beyond the bound") over the family
 * selected as CP_FAMILY_SELECT says, on conditional p-values; and, for
 * calling a change an improvement, over every tested measure on "no
 * change". */
static int adjust(struct cp_compare_result *out, double *ps, int env_inconclusive)
{
	for (size_t i = 0; i < out->n; i++) {
		struct cp_measure_verdict *mv = &out->measures[i];
		int tested = (!mv->exact || mv->judged_sampled) && mv->in_base && mv->in_head &&
			     !mv->reason && !mv->runs_needed && !env_inconclusive &&
			     !isnan(mv->p_value);

		mv->in_family = tested && mv->p_beyond <= CP_FAMILY_SELECT;
		ps[i] = mv->in_family ? mv->p_beyond / CP_FAMILY_SELECT : NAN;
		out->holm_family += mv->in_family;
	}
	if (cp_holm(ps, out->n, ps))
		return -1;
	for (size_t i = 0; i < out->n; i++) {
		struct cp_measure_verdict *mv = &out->measures[i];

		mv->p_beyond_adjusted = ps[i];
		ps[i] = isnan(mv->p_value) || mv->reason || env_inconclusive ? NAN : mv->p_value;
	}
	if (cp_holm(ps, out->n, ps))
		return -1;
	for (size_t i = 0; i < out->n; i++)
		out->measures[i].p_adjusted = ps[i];
	return 0;
}

/* The verdict and the exit code, from every measure's status: fail when
 * one regressed (or a measure every base run had is missing from the
 * head), inconclusive when one is or a side could not be judged, else
 * pass. */
static void decide_verdict(struct cp_compare_result *out, struct cp_bounds *bounds)
{
	for (size_t i = 0; i < out->n; i++) {
		out->counts[out->measures[i].status]++;
		out->blocking += out->measures[i].blocking;
	}
	for (size_t r = 0; r < bounds->nrules; r++)
		if (!bounds->rules[r].matched)
			cp_compare_warnf(out->warnings,
					 "bounds rule line %d '%.80s %s' matches no measure",
					 bounds->rules[r].line,
					 bounds->rules[r].removed_ok ? "removed-ok" :
								       bounds->rules[r].pattern,
					 bounds->rules[r].removed_ok ? bounds->rules[r].pattern :
								       bounds->rules[r].text);
	out->status = out->counts[CP_MEASURE_REGRESSED] || out->blocking ? CP_VERDICT_FAIL :
		      out->counts[CP_MEASURE_INCONCLUSIVE] ||
				      json_array_size(out->inconclusive_reasons) ?
									   CP_VERDICT_INCONCLUSIVE :
									   CP_VERDICT_PASS;
	out->exit_code = out->status == CP_VERDICT_FAIL ||
					 (out->status == CP_VERDICT_INCONCLUSIVE &&
					  out->fail_on_inconclusive) ?
				 CP_EXIT_GATE :
				 CP_EXIT_OK;
}

/* Gathers the measures of the admitted runs, computes their statistics on
 * every CPU, corrects and decides. -1 when out of memory. */
/* The measure names, owned by the result: one block, not a JSON string
 * each (80 bytes a name more). */
static int copy_names(struct cp_compare_result *out, const struct cp_gathered *g)
{
	size_t len = 1;
	char *p;

	for (size_t i = 0; i < g->nmeasures; i++)
		len += strlen(g->measures[i].name) + 1;
	if (!(p = out->name_pool = malloc(len)))
		return -1;
	for (size_t i = 0; i < g->nmeasures; i++) {
		size_t n = strlen(g->measures[i].name) + 1;

		out->measures[i].name = memcpy(p, g->measures[i].name, n);
		p += n;
	}
	return 0;
}

static int judge_measures(struct cp_compare_result *out, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, struct cp_bounds *bounds,
			  const char *env_why)
{
	struct cp_gathered g = { 0 };
	struct cp_compare_stats_job job = { &g,	  NULL, bounds, cp_compare_z_for_alpha(out->alpha),
					    NULL, 0 };
	double *ps = NULL;
	size_t workers;
	int rc = -1;

	if (gather(&g, base, head))
		goto out;
	if (g.aliased)
		json_array_append_new(
			out->warnings,
			json_sprintf(
				"%zu run(s) name the target's executable otherwise than the first base run (%s): their %s is judged as that run's, the target's by its role",
				g.aliased, g.main_file, "clock_reads[EXE]/op"));
	out->n = g.nmeasures;
	out->measures = calloc(g.nmeasures + 1, sizeof(*out->measures));
	job.measures = out->measures;
	workers = cp_parallel_workers(g.nmeasures);
	job.buffer_len = cp_compare_buffer_len(g.nb, g.nh);
	job.buffers = calloc(workers, job.buffer_len * sizeof(double));
	ps = malloc((g.nmeasures + 1) * sizeof(double));
	if (!out->measures || !job.buffers || !ps || copy_names(out, &g))
		goto out;
	for (size_t i = 0; i < g.nmeasures; i++)
		cp_compare_prepare_measure(&out->measures[i], &g, i, bounds);
	cp_parallel_for(g.nmeasures, workers, cp_compare_measure_stats, &job);
	for (size_t i = 0; i < g.nmeasures; i++)
		if (out->measures[i].bound == &bounds->default_floor)
			cp_bounds_count_floor(bounds, out->measures[i].exact);
	if (adjust(out, ps, env_why[0] != '\0'))
		goto out;
	for (size_t i = 0; i < g.nmeasures; i++) {
		struct cp_measure_verdict *mv = &out->measures[i];

		if ((mv->exact && !mv->judged_sampled) || !mv->in_base || !mv->in_head ||
		    !mv->bound || mv->reason)
			continue;
		cp_compare_decide_sampled(mv, out->alpha, env_why[0] ? env_why : NULL,
					  out->holm_family, out->min_runs);
	}
	rc = 0;
out:
	gathered_free(&g);
	free(job.buffers);
	free(ps);
	return rc;
}

int cp_compare(const struct cp_compare_side *base_in, const struct cp_compare_side *head_in,
	       struct cp_bounds *bounds, const struct cp_compare_opts *opts,
	       struct cp_compare_result *out, struct cp_error *err)
{
	struct cp_compare_side base, head;
	void *mem = NULL;
	char env_why[160];
	int rc, unjudged = 0;

	memset(out, 0, sizeof(*out));
	if (!base_in->n || !head_in->n)
		return cp_fail(err, CP_EXIT_USAGE,
			       "compare needs at least one base and one head run file");
	out->alpha = opts && opts->alpha > 0 && opts->alpha < 1 ? opts->alpha : 0.05;
	out->fail_on_inconclusive = opts ? opts->fail_on_inconclusive : 0;
	out->allow_mismatch = opts ? opts->allow_mismatch : 0;
	out->min_runs = cp_hl_min_runs(cp_compare_z_for_alpha(out->alpha));
	out->warnings = json_array();
	out->excluded = json_array();
	out->inconclusive_reasons = json_array();
	if (cp_compare_admit(base_in, head_in, &base, &head, &mem, &unjudged, out, env_why,
			     sizeof(env_why), err)) {
		cp_compare_result_free(out);
		return -1;
	}
	rc = judge_measures(out, &base, &head, bounds, env_why);
	if (!rc && unjudged)
		leave_unjudged(out);
	if (!rc)
		rc = cp_compare_name_lines(out, &base, &head, opts ? opts->source_root : NULL);
	if (!rc)
		rc = cp_compare_reusable(out, &base, &head);
	free(mem);
	if (rc) {
		cp_compare_result_free(out);
		return cp_fail(err, CP_EXIT_USAGE, "out of memory comparing runs");
	}
	qsort(out->measures, out->n, sizeof(*out->measures), cmp_verdict_name);
	decide_verdict(out, bounds);
	return 0;
}

void cp_compare_result_free(struct cp_compare_result *r)
{
	for (size_t i = 0; r->measures && i < r->n; i++) {
		json_decref(r->measures[i].warnings);
		json_decref(r->measures[i].lines);
		free(r->measures[i].reason);
	}
	free(r->measures);
	free(r->name_pool);
	json_decref(r->base_env);
	json_decref(r->head_env);
	json_decref(r->env_mismatch);
	json_decref(r->warnings);
	json_decref(r->excluded);
	json_decref(r->inconclusive_reasons);
	json_decref(r->reusable_removed);
	memset(r, 0, sizeof(*r));
}
