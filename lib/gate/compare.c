/* compare.c - see compare.h for the rules; this file gathers the measures
 * of every run, reads the runs' environment fingerprints and judges. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "compare.h"
#include "compare_boundary.h"
#include "compare_evidence.h"
#include "grow.h"
#include "json_file.h"
#include "error.h"
#include "parallel.h"
#include "run_file.h"
#include "utf8.h"
#include "stats.h"
#include "warning_groups.h"

/* A/A noise floor needs an interval between two halves of the base runs;
 * beyond the maximum it is not computed (the halves live on the stack). */
#define NOISE_FLOOR_MIN_RUNS 8
#define NOISE_FLOOR_MAX_RUNS 1024

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
	return s == CP_VERDICT_FAIL ? "fail" :
	       s == CP_VERDICT_INCONCLUSIVE ? "inconclusive" : "pass";
}

static void warnf(json_t *arr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warnf(json_t *arr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	/* A long measure name cut mid-character must not lose the warning. */
	va_start(ap, fmt);
	json_array_append_new(arr, json_string(cp_utf8_vformat(buf, sizeof(buf), fmt, ap)));
	va_end(ap);
}

/* A measure's warnings array, made when its first warning is: most
 * measures have none, and 100,000 empty arrays were 13 MB. */
static json_t *lazy_array(json_t **arr)
{
	if (!*arr)
		*arr = json_array();
	return *arr;
}

/* A measure's reason, as long as it is (most are a few words; the 320
 * bytes kept for each measure were half the result's memory). */
static void set_reason(struct cp_measure_verdict *mv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_reason(struct cp_measure_verdict *mv, const char *fmt, ...)
{
	char buf[CP_MEASURE_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(mv->reason);
	mv->reason = buf[0] ? strdup(buf) : NULL;
}

/* --- environment fingerprint ------------------------------------------ */

/* Fields compared across runs; "inconclusive" ones make up the host
 * fingerprint and change what sampled measures mean (another CPU model or
 * kernel runs the same code at another speed; a different clocksource
 * changes what a clock read costs; with or without a PMU the machine is
 * not the same kind), so sampled measures are judged only between runs
 * that agree on all of them. build_id and exe
 * are expected to differ between base and head and are only recorded; so
 * is mechanism, because different mechanisms never get this far
 * (check_mechanisms refuses them). */
static const struct {
	const char *field;
	const char *effect;	/* NULL: not compared */
} env_fields[] = {
	{ "kernel", "inconclusive" },
	{ "cpu", "inconclusive" },
	{ "clocksource", "inconclusive" },
	{ "pmu", "inconclusive" },
	{ "mechanism", NULL },
	{ "tool_version", "warning" },
	{ "build_id", NULL },
	{ "exe", NULL },
};
#define N_ENV_FIELDS (sizeof(env_fields) / sizeof(env_fields[0]))

static json_t *copy_or_null(const json_t *v)
{
	return v && !json_is_null(v) ? json_deep_copy(v) : json_null();
}

json_t *cp_run_fingerprint(const json_t *run)
{
	const json_t *host = json_object_get(run, "host");
	const json_t *target = json_object_get(run, "target");
	const json_t *tool_version = json_object_get(host, "tool_version");
	json_t *fp = json_object();

	if (!tool_version)
		tool_version = json_object_get(json_object_get(run, "tool"), "version");
	json_object_set_new(fp, "kernel", copy_or_null(json_object_get(host, "kernel")));
	json_object_set_new(fp, "cpu", copy_or_null(json_object_get(host, "cpu")));
	json_object_set_new(fp, "clocksource",
			    copy_or_null(json_object_get(host, "clocksource")));
	json_object_set_new(fp, "pmu", copy_or_null(json_object_get(host, "pmu")));
	/* Never null: a file without one was counted with breakpoints. */
	json_object_set_new(fp, "mechanism", json_string(cp_run_mechanism(run)));
	json_object_set_new(fp, "tool_version", copy_or_null(tool_version));
	json_object_set_new(fp, "build_id",
			    copy_or_null(json_object_get(target, "build_id")));
	json_object_set_new(fp, "exe", copy_or_null(json_object_get(target, "exe")));
	return fp;
}

static int array_has(const json_t *arr, const json_t *v)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
		if (json_equal(e, (json_t *)v))
			return 1;
	return 0;
}

static int same_set(const json_t *a, const json_t *b)
{
	size_t i;
	json_t *e;

	if (json_array_size(a) != json_array_size(b))
		return 0;
	json_array_foreach(a, i, e)
		if (!array_has(b, e))
			return 0;
	return 1;
}

/* {field: [distinct values over the side's runs]} */
static json_t *side_env(const struct cp_compare_side *s)
{
	json_t *env = json_object();

	for (size_t f = 0; f < N_ENV_FIELDS; f++)
		json_object_set_new(env, env_fields[f].field, json_array());
	for (size_t r = 0; r < s->n; r++) {
		json_t *fp = cp_run_fingerprint(s->runs[r].doc);

		for (size_t f = 0; f < N_ENV_FIELDS; f++) {
			json_t *arr = json_object_get(env, env_fields[f].field);
			json_t *v = json_object_get(fp, env_fields[f].field);

			if (!array_has(arr, v))
				json_array_append(arr, v);
		}
		json_decref(fp);
	}
	return env;
}

static void values_text(const json_t *arr, char *buf, size_t len)
{
	size_t i, used = 0;
	json_t *e;

	buf[0] = '\0';
	json_array_foreach(arr, i, e) {
		char *t = json_dumps(e, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);

		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%.80s",
						 i ? ", " : "", t ? t : "?");
		free(t);
	}
}

/* Adds field to the comma-separated list in why (once). */
static void name_field(char *why, size_t len, const char *field)
{
	size_t used = strlen(why);

	if (strstr(why, field))
		return;
	snprintf(why + used, len - used, "%s%s", used ? ", " : "", field);
}

/* Fills base_env, head_env, env_mismatch; returns 1 when sampled measures
 * must be inconclusive, naming the fingerprint fields that differ (within
 * a side or between the sides) in why. */
static int compare_env(const struct cp_compare_side *base,
		       const struct cp_compare_side *head,
		       struct cp_compare_result *r, char *why, size_t why_len)
{
	r->base_env = side_env(base);
	r->head_env = side_env(head);
	r->env_mismatch = json_array();
	why[0] = '\0';
	for (size_t f = 0; f < N_ENV_FIELDS; f++) {
		const char *field = env_fields[f].field;
		json_t *b = json_object_get(r->base_env, field);
		json_t *h = json_object_get(r->head_env, field);
		int fingerprint;
		char text[256];

		if (!env_fields[f].effect)
			continue;
		fingerprint = !strcmp(env_fields[f].effect, "inconclusive");
		if (json_array_size(b) > 1) {
			values_text(b, text, sizeof(text));
			warnf(r->warnings, "base runs differ in %s: %s", field, text);
			if (fingerprint)
				name_field(why, why_len, field);
		}
		if (json_array_size(h) > 1) {
			values_text(h, text, sizeof(text));
			warnf(r->warnings, "head runs differ in %s: %s", field, text);
			if (fingerprint)
				name_field(why, why_len, field);
		}
		if (same_set(b, h))
			continue;
		json_array_append_new(r->env_mismatch,
			json_pack("{s:s, s:O, s:O, s:s}", "field", field, "base", b,
				  "head", h, "effect", env_fields[f].effect));
		if (fingerprint)
			name_field(why, why_len, field);
	}
	return why[0] != '\0';
}

/* --- counting mechanism ------------------------------------------------ */

/* uprobe is the one suggested: it needs no hardware breakpoint to fire,
 * which the start-up self-test finds false on some hosts
 * (host.breakpoints_fire). */
#define RERUN_HINT \
	"rerun both sides with one --mechanism (clockprof run --mechanism uprobe ...)"

static const char *run_name(const struct cp_compare_side *s, size_t r)
{
	return s->names && s->names[r] ? s->names[r] : "?";
}

/* Fails naming the first run of s counted otherwise than its first run. */
static int mixed_side(const struct cp_compare_side *s, const char *side,
		      struct cp_error *err)
{
	const char *first = cp_run_mechanism(s->runs[0].doc);

	for (size_t r = 1; r < s->n; r++) {
		const char *m = cp_run_mechanism(s->runs[r].doc);

		if (strcmp(m, first))
			return cp_fail(err, CP_EXIT_USAGE,
				       "%s runs were counted with %.40s (%.120s) and %.40s (%.120s): " RERUN_HINT,
				       side, first, run_name(s, 0), m, run_name(s, r));
	}
	return 0;
}

/* Exact clock counts from different mechanisms need not be the same
 * quantity (a breakpoint sits on the vDSO entry; a uprobe one step before
 * it, where calls that skip the PLT go unseen), so a change between them
 * would be judged as a regression or an improvement of the code. Refused
 * whatever the measures: every run has clock measures (clock_reads/op is
 * always written), and even sampled ones (times, counters) carry the
 * probe's cost per hit, which differs between a trap and a uprobe. */
static int check_mechanisms(const struct cp_compare_side *base,
			    const struct cp_compare_side *head,
			    struct cp_error *err)
{
	const char *b, *h;

	if (mixed_side(base, "base", err) || mixed_side(head, "head", err))
		return -1;
	b = cp_run_mechanism(base->runs[0].doc);
	h = cp_run_mechanism(head->runs[0].doc);
	if (strcmp(b, h))
		return cp_fail(err, CP_EXIT_USAGE,
			       "base runs were counted with %.40s, head runs with %.40s: " RERUN_HINT,
			       b, h);
	return 0;
}

/* --- processes counted ------------------------------------------------- */

/* Where two runs' counts cover different processes: one counted the
 * target alone (no `processes`: --no-inherit, an attach of one pid, or a
 * clockprof before run followed forks), another counted several (run
 * following the processes its command forked, attach of several). A
 * command that forks gives counts of another size by construction, which
 * would be judged as a change of its code. Runs that counted one process
 * either way agree. */
static int check_processes(const struct cp_compare_side *base,
			   const struct cp_compare_side *head,
			   struct cp_error *err)
{
	const struct cp_compare_side *sides[2] = { base, head };
	const char *alone = NULL, *several = NULL;
	size_t many = 0;

	for (int k = 0; k < 2; k++)
		for (size_t r = 0; r < sides[k]->n; r++) {
			const json_t *p = json_object_get(sides[k]->runs[r].doc, "processes");

			if (!json_is_array(p) && !alone)
				alone = run_name(sides[k], r);
			else if (json_array_size(p) > 1 && !several) {
				several = run_name(sides[k], r);
				many = json_array_size(p);
			}
		}
	if (alone && several)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%.120s counted %zu processes (the target and those it forked), %.120s "
			       "the target alone: rerun both with one clockprof, and both with or "
			       "without --no-inherit", several, many, alone);
	return 0;
}

/* --- gathering measures ------------------------------------------------ */

struct gathered {
	size_t nmeasures;
	size_t values_cap, name_cap, base_meta_cap, head_meta_cap;
	size_t nb, nh;		/* runs per side */
	double *values;		/* [measure][nb + nh], NaN when absent */
	const char **name;	/* per measure, points into a run's pool */
	/* The first occurrence on each side: kind, unit, better. */
	const struct cp_run_measure **base_meta, **head_meta;
	json_t *index;		/* name -> integer index */
	size_t *by_position;	/* the previous run's measure indices, in order */
	size_t npositions, positions_cap;
};

/* A new measure: a row of NaN (absent from every run so far). */
static long add_measure(struct gathered *g, const char *name)
{
	size_t width = g->nb + g->nh, i = g->nmeasures;

	if (cp_grow(&g->values, &g->values_cap, (i + 1) * width, sizeof(*g->values)) ||
	    cp_grow(&g->name, &g->name_cap, i + 1, sizeof(*g->name)) ||
	    cp_grow(&g->base_meta, &g->base_meta_cap, i + 1, sizeof(*g->base_meta)) ||
	    cp_grow(&g->head_meta, &g->head_meta_cap, i + 1, sizeof(*g->head_meta)))
		return -1;
	if (json_object_set_new(g->index, name, json_integer((json_int_t)i)))
		return -1;
	for (size_t c = 0; c < width; c++)
		g->values[i * width + c] = NAN;
	g->name[i] = name;
	g->base_meta[i] = g->head_meta[i] = NULL;
	g->nmeasures++;
	return (long)i;
}

/* The index of the measure at position k of a run. Run files list their
 * measures in the same order, so the previous run's measure at k is
 * almost always the one: a string compare instead of a hash lookup, for
 * each of the 60,000 values of a 1,000-measure, 60-run gate. */
static long measure_index(struct gathered *g, size_t k, const char *name)
{
	json_t *idx;
	long i;

	if (k < g->npositions && !strcmp(g->name[g->by_position[k]], name))
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

static int gather_run(struct gathered *g, const struct cp_compare_run *run,
		      size_t column, int is_head)
{
	for (size_t k = 0; k < run->nmeasures; k++) {
		const struct cp_run_measure *m = &run->measures[k];
		long i = measure_index(g, k, m->name);

		if (i < 0)
			return -1;
		g->values[(size_t)i * (g->nb + g->nh) + column] = m->value;
		if (is_head && !g->head_meta[i])
			g->head_meta[i] = m;
		if (!is_head && !g->base_meta[i])
			g->base_meta[i] = m;
	}
	/* Positions past this run's end belong to an older run. */
	g->npositions = run->nmeasures;
	return 0;
}

static int gather(struct gathered *g, const struct cp_compare_side *base,
		  const struct cp_compare_side *head)
{
	memset(g, 0, sizeof(*g));
	g->nb = base->n;
	g->nh = head->n;
	g->index = json_object();
	if (!g->index)
		return -1;
	for (size_t r = 0; r < base->n; r++)
		if (gather_run(g, &base->runs[r], r, 0))
			return -1;
	for (size_t r = 0; r < head->n; r++)
		if (gather_run(g, &head->runs[r], g->nb + r, 1))
			return -1;
	/* Only gathering looks names up: the index (~120 bytes a measure)
	 * goes before the verdicts are made. */
	json_decref(g->index);
	g->index = NULL;
	free(g->by_position);
	g->by_position = NULL;
	g->npositions = g->positions_cap = 0;
	return 0;
}

static void gathered_free(struct gathered *g)
{
	free(g->values);
	free(g->name);
	free(g->base_meta);
	free(g->head_meta);
	free(g->by_position);
	json_decref(g->index);
}

/* How many runs of one side have measure i. */
static size_t side_count(const struct gathered *g, size_t i, int is_head)
{
	const double *row = g->values + i * (g->nb + g->nh) + (is_head ? g->nb : 0);
	size_t n = is_head ? g->nh : g->nb, k = 0;

	for (size_t r = 0; r < n; r++)
		k += !isnan(row[r]);
	return k;
}

/* Copies the present values of one side of measure i into out; returns
 * their count. */
static size_t side_values(const struct gathered *g, size_t i, int is_head,
			  double *out)
{
	const double *row = g->values + i * (g->nb + g->nh) + (is_head ? g->nb : 0);
	size_t n = is_head ? g->nh : g->nb, k = 0;

	for (size_t r = 0; r < n; r++)
		if (!isnan(row[r]))
			out[k++] = row[r];
	return k;
}

/* --- judging ----------------------------------------------------------- */

static void side_stats(const double *v, size_t n, struct cp_side_stats *s)
{
	s->n = n;
	s->median = cp_median(v, n);
	s->lo = s->hi = v[0];
	for (size_t i = 1; i < n; i++) {
		if (v[i] < s->lo)
			s->lo = v[i];
		if (v[i] > s->hi)
			s->hi = v[i];
	}
}

/* Two values for people, with as many digits as it takes to tell them
 * apart when they differ: 7 -> 7.0000001, never 7 -> 7. */
static void fmt_pair(char *b1, char *b2, size_t len, double v1, double v2)
{
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(b1, len, "%.*g", prec, v1);
		snprintf(b2, len, "%.*g", prec, v2);
		if (v1 == v2 || strcmp(b1, b2))
			return;
	}
}

/* The allowed change in the bad direction, in the unit of `pct` (percent,
 * when the bound is relative and base is not 0) or of the measure. */
static double allowed_abs(const struct cp_bound_rule *b, double base)
{
	return b->relative ? b->value / 100.0 * fabs(base) : b->value;
}

/* A relative bound means nothing on a base of 0 (+5% of 0 is 0): say so
 * rather than judge, and suggest the absolute bound that would. */
static void zero_base_inconclusive(struct cp_measure_verdict *mv)
{
	mv->status = CP_MEASURE_INCONCLUSIVE;
	set_reason(mv,
		 "base median is 0, so the relative bound %s allows nothing; give an absolute bound "
		 "(a bounds line such as '%.80s +1')",
		 mv->bound->text, mv->name);
}

static void judge_exact(struct cp_measure_verdict *mv)
{
	double delta = mv->head.median - mv->base.median;
	double bad = mv->higher_is_better ? -delta : delta;
	double eps = 1e-12 * fmax(fabs(mv->base.median), fabs(mv->head.median));
	double allowed = allowed_abs(mv->bound, mv->base.median);
	char b1[40], b2[40];

	mv->change_abs = (struct cp_interval){ delta, delta, delta };
	if (mv->base.median != 0) {
		double pct = delta / fabs(mv->base.median) * 100.0;

		mv->change_pct = (struct cp_interval){ pct, pct, pct };
	}
	mv->direction = bad > eps ? 1 : bad < -eps ? -1 : 0;
	fmt_pair(b1, b2, sizeof(b1), mv->base.median, mv->head.median);
	if (mv->bound->relative && mv->base.median == 0 && delta != 0) {
		zero_base_inconclusive(mv);
		return;
	}
	if (bad > allowed + eps) {
		mv->status = CP_MEASURE_REGRESSED;
		set_reason(mv,
			 "%s -> %s %.60s, beyond bound %s", b1, b2, mv->unit,
			 mv->bound->text);
	} else if (bad < -eps) {
		mv->status = CP_MEASURE_IMPROVED;
		set_reason(mv, "%s -> %s %.60s", b1,
			 b2, mv->unit);
	} else {
		mv->status = CP_MEASURE_WITHIN;
		set_reason(mv,
			 bad > eps ? "%s -> %s %.60s, within bound %s" :
				     "%s -> %s %.60s, unchanged%.0s",
			 b1, b2, mv->unit, mv->bound->text);
	}
}

/* Relative (percent) and absolute intervals of the change, head vs base.
 * With all values positive the relative interval comes from the ratios
 * (noise in these measures is multiplicative) and the absolute one is
 * derived from it (times |base median|), unless need_abs asks for the
 * absolute one directly (an absolute bound decides on it). Otherwise the
 * absolute interval comes from the differences and the relative one is
 * derived (none when base is 0). Computing one interval, not two, halves
 * the work of a large gate. */
static void change_intervals(const double *bv, size_t nb, const double *hv,
			     size_t nh, double z, double base_median, int need_abs,
			     double *scratch, struct cp_interval *pct,
			     struct cp_interval *abs_, int *has_interval, int *ratio)
{
	struct cp_shift s, r;
	double scale = fabs(base_median) / 100.0;

	*ratio = 0;
	if (cp_hl_ratio(bv, nb, hv, nh, z, scratch, &r) == 0) {
		*ratio = 1;
		*pct = (struct cp_interval){ (r.point - 1) * 100, (r.lo - 1) * 100,
					     (r.hi - 1) * 100 };
		*has_interval = r.has_interval;
		if (!need_abs) {
			*abs_ = (struct cp_interval){ pct->point * scale,
						      pct->lo * scale, pct->hi * scale };
			return;
		}
		cp_hl_shift(bv, nb, hv, nh, z, scratch, &s);
		*abs_ = (struct cp_interval){ s.point, s.lo, s.hi };
		return;
	}
	cp_hl_shift(bv, nb, hv, nh, z, scratch, &s);
	*abs_ = (struct cp_interval){ s.point, s.lo, s.hi };
	*has_interval = s.has_interval;
	if (base_median != 0)
		*pct = (struct cp_interval){ s.point / scale, s.lo / scale,
					     s.hi / scale };
	else
		*pct = (struct cp_interval){ NAN, NAN, NAN };
}

/* Interval of the change in the "bad" direction, in the bound's unit:
 * [*lo, *hi] and the allowed amount *allowed. */
static void bad_interval(const struct cp_measure_verdict *mv, double *lo,
			 double *hi, double *point, double *allowed)
{
	const struct cp_interval *c = &mv->change_abs;

	*allowed = mv->bound->value;
	if (mv->bound->relative) {
		if (!isnan(mv->change_pct.point))
			c = &mv->change_pct;
		else
			*allowed = 0;	/* base is 0: any increase is beyond */
	}
	if (mv->higher_is_better) {
		*lo = -c->hi;
		*hi = -c->lo;
		*point = -c->point;
	} else {
		*lo = c->lo;
		*hi = c->hi;
		*point = c->point;
	}
}

static void fmt_change(char *buf, size_t len, const struct cp_measure_verdict *mv,
		       double v)
{
	if (isnan(v))
		snprintf(buf, len, "?");
	else if (mv->bound->relative && !isnan(mv->change_pct.point))
		snprintf(buf, len, "%+.3g%%", v);
	else
		snprintf(buf, len, "%+.6g", v);
}

/* Base values moved to the bound in the bad direction, into out: what
 * the head must beat for "beyond the bound" to be shown. */
static void base_at_bound(const struct cp_measure_verdict *mv, const double *bv,
			  size_t nb, int ratio, double *out)
{
	double v = mv->bound->value, sign = mv->higher_is_better ? -1 : 1;
	double add = mv->bound->relative ? v / 100.0 * fabs(mv->base.median) : v;

	for (size_t i = 0; i < nb; i++)
		out[i] = mv->bound->relative && ratio ? bv[i] * (1 + sign * v / 100.0) :
							bv[i] + sign * add;
}

/* First pass over a sampled measure: statistics, no decision yet. */
static void measure_sampled(struct cp_measure_verdict *mv, const double *bv,
			    const double *hv, double z, double *scratch)
{
	struct cp_mann_whitney mw, beyond;
	int has_interval, ratio;

	change_intervals(bv, mv->base.n, hv, mv->head.n, z, mv->base.median,
			 !mv->bound->relative, scratch, &mv->change_pct,
			 &mv->change_abs, &has_interval, &ratio);
	mv->interval_ratio = ratio;
	cp_mann_whitney(bv, mv->base.n, hv, mv->head.n, &mw);
	mv->p_value = mw.p;
	mv->test_exact = mw.exact;
	/* "Beyond the bound", one-sided: head against the base moved to the
	 * bound. scratch is free again: the pairs are no longer needed. */
	base_at_bound(mv, bv, mv->base.n, ratio, scratch);
	cp_mann_whitney(scratch, mv->base.n, hv, mv->head.n, &beyond);
	mv->p_beyond = mv->higher_is_better ? beyond.p_less : beyond.p_greater;
	if (!has_interval) {
		mv->change_pct.lo = mv->change_pct.hi = NAN;
		mv->change_abs.lo = mv->change_abs.hi = NAN;
		mv->p_value = mv->p_beyond = NAN;	/* not part of a family */
		mv->interval_ratio = -1;
	}
}

static void noise_floor(struct cp_measure_verdict *mv, const double *bv,
			double z, double *scratch)
{
	double even[NOISE_FLOOR_MAX_RUNS / 2], odd[NOISE_FLOOR_MAX_RUNS / 2];
	size_t ne = 0, no = 0, n = mv->base.n;
	struct cp_interval pct, abs_;
	int has, ratio;
	double floor_pct, bound_pct;

	if (n < NOISE_FLOOR_MIN_RUNS || n > NOISE_FLOOR_MAX_RUNS)
		return;
	/* Interleaved halves, so a drift over the base runs shows as noise. */
	for (size_t i = 0; i < n; i++) {
		if (i % 2)
			odd[no++] = bv[i];
		else
			even[ne++] = bv[i];
	}
	change_intervals(even, ne, odd, no, z, cp_median(even, ne), 0, scratch,
			 &pct, &abs_, &has, &ratio);
	if (!has || isnan(pct.lo))
		return;
	floor_pct = fmax(fabs(pct.lo), fabs(pct.hi));
	mv->noise_floor_pct = floor_pct;
	bound_pct = mv->bound->relative ? mv->bound->value :
		    mv->base.median != 0 ?
		    mv->bound->value / fabs(mv->base.median) * 100 : INFINITY;
	if (fabs(bound_pct) < floor_pct)
		warnf(lazy_array(&mv->warnings),
		      "bound %s is tighter than the A/A noise floor %.2g%% seen between base runs; "
		      "changes this small cannot be told from noise",
		      mv->bound->text, floor_pct);
}

/* Whether nb and nh runs can show "beyond the bound" at all: the smallest
 * one-sided p there is (fully separated samples; half the two-sided one),
 * as a conditional p Holm-corrected over nfamily, must be below alpha. */
static int runs_can_show(size_t nb, size_t nh, size_t nfamily, double alpha)
{
	double min_p = cp_mann_whitney_min_p(nb, nh) / 2;

	return min_p / CP_FAMILY_SELECT * (double)nfamily < alpha;
}

/* Runs per side with which fully separated samples reach p < alpha after
 * Holm over nfamily measures (and give an interval at all). */
static size_t runs_for_family(size_t nfamily, double alpha, size_t min_runs)
{
	size_t k = min_runs;

	while (k < 1000 && !runs_can_show(k, k, nfamily, alpha))
		k++;
	return k;
}

/* A measure whose point estimate lies beyond its bound: regressed when
 * the one-sided test shows it beyond, after correction over the family;
 * else inconclusive with what is missing. */
static void decide_beyond(struct cp_measure_verdict *mv, double alpha,
			  size_t nfamily, size_t min_runs, double lo, double allowed,
			  const char *l, const char *h, const char *pt)
{
	mv->status = CP_MEASURE_INCONCLUSIVE;
	if (!runs_can_show(mv->base.n, mv->head.n, nfamily, alpha)) {
		mv->runs_needed = runs_for_family(nfamily, alpha, min_runs);
		set_reason(mv,
			 "estimate %s is beyond bound %s, but too few runs: %zu base, %zu head cannot show it "
			 "with %zu measures judged together; need at least %zu on each side",
			 pt, mv->bound->text, mv->base.n, mv->head.n, nfamily, mv->runs_needed);
	} else if (mv->in_family && mv->p_beyond_adjusted < alpha) {
		mv->status = CP_MEASURE_REGRESSED;
		set_reason(mv,
			 "%s [%s, %s] is beyond bound %s by the one-sided test (p = %.2g, Holm-adjusted over %zu: %.2g)",
			 pt, l, h, mv->bound->text, mv->p_beyond, nfamily,
			 mv->p_beyond_adjusted);
	} else if (lo > allowed) {
		set_reason(mv,
			 "%s [%s, %s] lies beyond bound %s, but not after correcting for %zu measures (adjusted p = %.2g)",
			 pt, l, h, mv->bound->text, nfamily, mv->p_beyond_adjusted);
	} else {
		set_reason(mv,
			 "estimate %s is beyond bound %s, but not shown beyond it: the interval [%s, %s] includes %s "
			 "(one-sided p = %.2g, adjusted %.2g); more runs may decide",
			 pt, mv->bound->text, l, h, mv->bound->text, mv->p_beyond,
			 mv->p_beyond_adjusted);
	}
}

/* Second pass: the decision, once p-values are adjusted. */
static void decide_sampled(struct cp_measure_verdict *mv, double alpha,
			   const char *env_why, size_t nfamily, size_t min_runs)
{
	double lo, hi, point, allowed;
	char l[32], h[32], pt[32];

	if (mv->runs_needed) {
		mv->status = CP_MEASURE_INCONCLUSIVE;
		set_reason(mv,
			 "too few runs: %zu base, %zu head; need at least %zu on each side",
			 mv->base.n, mv->head.n, mv->runs_needed);
		return;
	}
	bad_interval(mv, &lo, &hi, &point, &allowed);
	mv->direction = point > 0 ? 1 : point < 0 ? -1 : 0;
	fmt_change(l, sizeof(l), mv, mv->higher_is_better ? -hi : lo);
	fmt_change(h, sizeof(h), mv, mv->higher_is_better ? -lo : hi);
	fmt_change(pt, sizeof(pt), mv, mv->higher_is_better ? -point : point);
	if (env_why) {
		mv->status = CP_MEASURE_INCONCLUSIVE;
		set_reason(mv,
			 "host fingerprint differs between runs (%.120s): sampled measures are only judged "
			 "between runs of one host (see env_mismatch)", env_why);
		return;
	}
	if (point > allowed) {
		decide_beyond(mv, alpha, nfamily, min_runs, lo, allowed, l, h, pt);
		return;
	}
	if (hi < 0 && mv->p_adjusted < alpha) {
		mv->status = CP_MEASURE_IMPROVED;
		set_reason(mv,
			 "%s [%s, %s] lies on the good side (adjusted p = %.2g)",
			 pt, l, h, mv->p_adjusted);
		return;
	}
	mv->status = CP_MEASURE_WITHIN;
	if (hi <= allowed) {
		set_reason(mv,
			 "%s [%s, %s] within bound %s", pt, l, h, mv->bound->text);
		return;
	}
	/* The estimate is within the bound; the runs just cannot rule out
	 * the interval's far end. Said, but not a reason to hold the gate. */
	set_reason(mv,
		 "%s [%s, %s] within bound %s; not enough runs to exclude %s",
		 pt, l, h, mv->bound->text, mv->higher_is_better ? l : h);
	snprintf(mv->not_excluded, sizeof(mv->not_excluded), "%s",
		 mv->higher_is_better ? l : h);
}

static int cmp_verdict_name(const void *a, const void *b)
{
	return strcmp(((const struct cp_measure_verdict *)a)->name,
		      ((const struct cp_measure_verdict *)b)->name);
}

/* Kind, unit or direction disagreeing between sides cannot be judged. */
static int meta_conflict(struct cp_measure_verdict *mv,
			 const struct cp_run_measure *bm,
			 const struct cp_run_measure *hm)
{
	const char *key = NULL, *b = NULL, *h = NULL;

	if (bm->exact != hm->exact) {
		key = "kind";
		b = bm->exact ? "exact" : "sampled";
		h = hm->exact ? "exact" : "sampled";
	} else if (strcmp(bm->unit, hm->unit)) {
		key = "unit";
		b = bm->unit;
		h = hm->unit;
	} else if (bm->higher_is_better != hm->higher_is_better) {
		key = "better";
		b = bm->higher_is_better ? "higher" : "lower";
		h = hm->higher_is_better ? "higher" : "lower";
	}
	if (!key)
		return 0;
	mv->status = CP_MEASURE_INCONCLUSIVE;
	set_reason(mv,
		 "%s differs: \"%.40s\" in base, \"%.40s\" in head", key, b, h);
	return 1;
}

/* Each distinct warning of a side's runs once, with how many runs gave
 * it, like ones merged (warning_groups.h): a profiler that saw nothing says
 * so in its runs, and that must reach whoever reads the verdict, once. */
struct side_warnings {
	const char *side;
	size_t nruns;
	json_t *warnings;
};

static void add_group(const char *text, size_t count, void *arg)
{
	const struct side_warnings *sw = arg;

	/* Whole: what the runs said is never cut (it comes from run files,
	 * read as UTF-8); cut only were it not, mid-character never. */
	json_t *whole = json_sprintf("%s runs (%zu of %zu): %s", sw->side, count, sw->nruns, text);

	if (whole)
		json_array_append_new(sw->warnings, whole);
	else
		warnf(sw->warnings, "%s runs (%zu of %zu): %.300s", sw->side, count, sw->nruns, text);
}

static void run_warnings(const struct cp_compare_side *s, const char *side,
			 json_t *warnings)
{
	struct side_warnings sw = { side, s->n, warnings };
	json_t *groups = cp_warning_groups_new();

	for (size_t r = 0; r < s->n; r++) {
		size_t i;
		json_t *w;

		json_array_foreach(json_object_get(s->runs[r].doc, "warnings"), i, w)
			if (json_string_value(w))
				cp_warning_groups_add(groups, json_string_value(w));
	}
	cp_warning_groups_each(groups, add_group, &sw);
	json_decref(groups);
}

/* Added or removed. A measure every base run had that no head run has is
 * what a broken head looks like (it crashed before doing the work), so it
 * fails the gate unless the bounds file says it may go (removed-ok). */
static void decide_one_sided(struct cp_measure_verdict *mv, struct cp_bounds *bounds,
			     size_t nb, size_t base_runs)
{
	const struct cp_bound_rule *ok;

	cp_bounds_note_unjudged(bounds, mv->name);
	mv->status = nb ? CP_MEASURE_REMOVED : CP_MEASURE_ADDED;
	if (!nb || nb < base_runs) {
		set_reason(mv, "present in %s runs only",
			 nb ? "base" : "head");
		return;
	}
	ok = cp_bounds_removed_ok(bounds, mv->name);
	if (ok) {
		set_reason(mv,
			 "present in every base run, in no head run; allowed by removed-ok (line %d)",
			 ok->line);
		return;
	}
	mv->blocking = 1;
	set_reason(mv,
		 "present in every base run, missing from the head; if that is intended, add "
		 "'removed-ok %.80s' to the bounds file", mv->name);
}

/* Serial first pass over measure i: what it is, whether both sides have
 * it, its bound, and the decisions that need no statistics. */
static void prepare_measure(struct cp_measure_verdict *mv, const struct gathered *g,
			   size_t i, struct cp_bounds *bounds)
{
	const struct cp_run_measure *meta = g->base_meta[i] ? g->base_meta[i] :
					    g->head_meta[i];
	size_t nb = side_count(g, i, 0), nh = side_count(g, i, 1);

	mv->unit = meta->unit;
	mv->exact = meta->exact;
	mv->higher_is_better = meta->higher_is_better;
	mv->in_base = nb > 0;
	mv->in_head = nh > 0;
	mv->change_pct = mv->change_abs = (struct cp_interval){ NAN, NAN, NAN };
	mv->p_value = mv->p_adjusted = mv->noise_floor_pct = NAN;
	mv->p_beyond = mv->p_beyond_adjusted = NAN;
	mv->test_exact = mv->interval_ratio = -1;
	if (!nb || !nh) {
		decide_one_sided(mv, bounds, nb, g->nb);
		return;
	}
	if (nb < g->nb)
		warnf(lazy_array(&mv->warnings), "present in %zu of %zu base runs", nb, g->nb);
	if (nh < g->nh)
		warnf(lazy_array(&mv->warnings), "present in %zu of %zu head runs", nh, g->nh);
	mv->bound = cp_bounds_match(bounds, mv->name, mv->exact);
	meta_conflict(mv, g->base_meta[i], g->head_meta[i]);
}

/* The statistics of every measure, spread over the CPUs: a 1,000-measure
 * gate computes 2,000 Hodges-Lehmann intervals of up to 900 pairs each.
 * Each worker has its own value and pair buffers (sized by
 * pair_buffer_len()); each measure its own verdict and warnings array. */
struct stats_job {
	const struct gathered *g;
	struct cp_measure_verdict *measures;
	const struct cp_bounds *bounds;
	double z;
	double *buffers;	/* per worker: base values, head values, pairs */
	size_t buffer_len;
};

/* Pairs one worker may need at once: base x head for the change, or the
 * two halves of the base runs for the noise floor, whichever is more. */
static size_t pair_buffer_len(size_t nb, size_t nh)
{
	size_t halves = nb >= NOISE_FLOOR_MIN_RUNS && nb <= NOISE_FLOOR_MAX_RUNS ?
			((nb + 1) / 2) * (nb / 2) : 0;

	return nb * nh > halves ? nb * nh : halves;
}

static void measure_stats(void *ctx, size_t i, size_t worker)
{
	struct stats_job *job = ctx;
	struct cp_measure_verdict *mv = &job->measures[i];
	double *bv = job->buffers + worker * job->buffer_len;
	double *hv = bv + job->g->nb, *scratch = hv + job->g->nh;
	size_t nb = side_values(job->g, i, 0, bv), nh = side_values(job->g, i, 1, hv);
	int constant;

	if (nb)
		side_stats(bv, nb, &mv->base);
	if (nh)
		side_stats(hv, nh, &mv->head);
	if (!nb || !nh || mv->reason)
		return;		/* added, removed or conflicting: decided */
	constant = mv->base.lo == mv->base.hi && mv->head.lo == mv->head.hi;
	mv->bound = cp_bounds_floor(job->bounds, mv->bound, mv->base.median,
				    mv->exact && !constant);
	if (mv->exact && constant) {
		judge_exact(mv);
		return;
	}
	if (mv->exact) {
		mv->judged_sampled = 1;
		warnf(lazy_array(&mv->warnings),
		      "exact measure varies between runs (base %.6g .. %.6g, head %.6g .. %.6g): judged as sampled",
		      mv->base.lo, mv->base.hi, mv->head.lo, mv->head.hi);
	}
	if (mv->base.lo == 0 && mv->base.hi == 0 && mv->head.lo == 0 && mv->head.hi == 0) {
		mv->status = CP_MEASURE_WITHIN;
		mv->change_abs = (struct cp_interval){ 0, 0, 0 };
		set_reason(mv, "0 in every run, unchanged");
		return;
	}
	if (mv->bound->relative && mv->base.median == 0) {
		zero_base_inconclusive(mv);
		return;
	}
	if (cp_hl_rank(nb, nh, job->z) == 0) {
		/* Raise the smaller side until an interval exists. */
		size_t k = 1;

		while (cp_hl_rank(nb > k ? nb : k, nh > k ? nh : k, job->z) == 0)
			k++;
		mv->runs_needed = k;
	}
	measure_sampled(mv, bv, hv, job->z, scratch);
	noise_floor(mv, bv, job->z, scratch);
}

/* z for a two-sided (1 - alpha) interval: CP_Z_975 for the default alpha,
 * else the normal tail inverted by bisection. */
static double z_for_alpha(double alpha)
{
	double lo = 0, hi = 40;

	if (alpha == 0.05)
		return CP_Z_975;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (cp_normal_sf(mid) > alpha / 2)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* The same run twice on one side would count its evidence twice. */
static int refuse_duplicates(const struct cp_compare_side *s, const char *side,
			     struct cp_error *err)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < i; j++)
			if (s->runs[i].digest[0] &&
			    !strcmp(s->runs[i].digest, s->runs[j].digest))
				return cp_fail(err, CP_EXIT_USAGE,
					       "%s runs %.200s and %.200s are the same run (same content); give each run once",
					       side, run_name(s, j), run_name(s, i));
	return 0;
}

static int is_complete(const struct cp_compare_run *run)
{
	return !json_is_false(json_object_get(run->doc, "complete"));
}

/* Lists run i of s in excluded: cut short, it measured something else. */
static void exclude_run(const struct cp_compare_side *s, const char *side, size_t i,
			struct cp_compare_result *r)
{
	json_array_append_new(r->excluded, json_pack("{s:s, s:s, s:s}",
		"side", side, "file", run_name(s, i),
		"reason", "incomplete (complete: false)"));
	warnf(r->warnings, "%s run %.200s left out: cut short (complete: false)",
	      side, run_name(s, i));
}

/* The complete runs of s (a cut-short window measured something else),
 * into keep; the others are listed in excluded. When none is complete,
 * every run is listed and keep is all of s, so that their numbers are
 * still shown, but nothing is judged (returns 1): the verdict is
 * inconclusive, whatever the numbers say. */
static int complete_runs(const struct cp_compare_side *s, const char *side,
			 struct cp_compare_run *runs, const char **names,
			 struct cp_compare_side *keep, struct cp_compare_result *r)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		k += is_complete(&s->runs[i]);
	if (!k) {
		for (size_t i = 0; i < s->n; i++)
			exclude_run(s, side, i, r);
		warnf(r->inconclusive_reasons,
		      "no complete %s run: all %zu were cut short (complete: false), so nothing was judged",
		      side, s->n);
		*keep = *s;
		return 1;
	}
	k = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (is_complete(&s->runs[i])) {
			runs[k] = s->runs[i];
			names[k++] = run_name(s, i);
		} else {
			exclude_run(s, side, i, r);
		}
	}
	*keep = (struct cp_compare_side){ runs, names, k };
	return 0;
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
		set_reason(mv, "not judged: a side has no complete run (see inconclusive_reasons)");
	}
	out->holm_family = 0;
}

/* Run-level checks before any measure: duplicates, mechanisms, processes
 * counted, complete runs, runs that measured nothing (refused), host
 * fingerprint, warnings of the runs. */
static int check_runs(const struct cp_compare_side *base, const struct cp_compare_side *head,
		      struct cp_compare_side *b, struct cp_compare_side *h, void **mem,
		      int *unjudged, struct cp_compare_result *out, char *env_why,
		      size_t why_len, struct cp_error *err)
{
	size_t n = base->n + head->n;
	struct cp_compare_run *runs;
	const char **names;

	if (refuse_duplicates(base, "base", err) || refuse_duplicates(head, "head", err) ||
	    check_mechanisms(base, head, err) || check_processes(base, head, err) ||
	    cp_compare_check_ops(base, head, out->allow_mismatch, out->warnings, err))
		return -1;
	*mem = malloc(n * (sizeof(*runs) + sizeof(*names)));
	if (!*mem)
		return cp_fail(err, CP_EXIT_USAGE, "out of memory comparing runs");
	runs = *mem;
	names = (const char **)(runs + n);
	*unjudged = complete_runs(base, "base", runs, names, b, out);
	*unjudged |= complete_runs(head, "head", runs + base->n, names + base->n, h, out);
	if (cp_compare_check_evidence(b, h, err)) {
		free(*mem);
		*mem = NULL;
		return -1;
	}
	compare_env(b, h, out, env_why, why_len);
	run_warnings(b, "base", out->warnings);
	run_warnings(h, "head", out->warnings);
	return 0;
}

/* Holm on the hypothesis decided ("beyond the bound") over the family
 * selected as CP_FAMILY_SELECT says, on conditional p-values; and, for
 * calling a change an improvement, over every tested measure on "no
 * change". */
static int adjust(struct cp_compare_result *out, double *ps, int env_inconclusive)
{
	for (size_t i = 0; i < out->n; i++) {
		struct cp_measure_verdict *mv = &out->measures[i];
		int tested = (!mv->exact || mv->judged_sampled) && mv->in_base &&
			     mv->in_head && !mv->reason && !mv->runs_needed &&
			     !env_inconclusive && !isnan(mv->p_value);

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

static void headline(struct cp_compare_result *out, struct cp_bounds *bounds)
{
	for (size_t i = 0; i < out->n; i++) {
		out->counts[out->measures[i].status]++;
		out->blocking += out->measures[i].blocking;
	}
	for (size_t r = 0; r < bounds->nrules; r++)
		if (!bounds->rules[r].matched)
			warnf(out->warnings, "bounds rule line %d '%.80s %s' matches no measure",
			      bounds->rules[r].line, bounds->rules[r].removed_ok ? "removed-ok" :
			      bounds->rules[r].pattern, bounds->rules[r].removed_ok ?
			      bounds->rules[r].pattern : bounds->rules[r].text);
	out->status = out->counts[CP_MEASURE_REGRESSED] || out->blocking ? CP_VERDICT_FAIL :
		      out->counts[CP_MEASURE_INCONCLUSIVE] ||
		      json_array_size(out->inconclusive_reasons) ? CP_VERDICT_INCONCLUSIVE :
		      CP_VERDICT_PASS;
	out->exit_code = out->status == CP_VERDICT_FAIL ||
			 (out->status == CP_VERDICT_INCONCLUSIVE &&
			  out->fail_on_inconclusive) ? CP_EXIT_GATE : CP_EXIT_OK;
}

/* Gathers the measures of the admitted runs, computes their statistics on
 * every CPU, corrects and decides. -1 when out of memory. */
/* The measure names, owned by the result: one block, not a JSON string
 * each (80 bytes a name more). */
static int copy_names(struct cp_compare_result *out, const struct gathered *g)
{
	size_t len = 1;
	char *p;

	for (size_t i = 0; i < g->nmeasures; i++)
		len += strlen(g->name[i]) + 1;
	if (!(p = out->name_pool = malloc(len)))
		return -1;
	for (size_t i = 0; i < g->nmeasures; i++) {
		size_t n = strlen(g->name[i]) + 1;

		out->measures[i].name = memcpy(p, g->name[i], n);
		p += n;
	}
	return 0;
}

static int judge_measures(struct cp_compare_result *out, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, struct cp_bounds *bounds,
			  const char *env_why)
{
	struct gathered g = { 0 };
	struct stats_job job = { &g, NULL, bounds, z_for_alpha(out->alpha), NULL, 0 };
	double *ps = NULL;
	size_t workers;
	int rc = -1;

	if (gather(&g, base, head))
		goto out;
	out->n = g.nmeasures;
	out->measures = calloc(g.nmeasures + 1, sizeof(*out->measures));
	job.measures = out->measures;
	workers = cp_parallel_workers(g.nmeasures);
	job.buffer_len = g.nb + g.nh + pair_buffer_len(g.nb, g.nh) + 1;
	job.buffers = calloc(workers, job.buffer_len * sizeof(double));
	ps = malloc((g.nmeasures + 1) * sizeof(double));
	if (!out->measures || !job.buffers || !ps || copy_names(out, &g))
		goto out;
	for (size_t i = 0; i < g.nmeasures; i++)
		prepare_measure(&out->measures[i], &g, i, bounds);
	cp_parallel_for(g.nmeasures, workers, measure_stats, &job);
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
		decide_sampled(mv, out->alpha, env_why[0] ? env_why : NULL,
			       out->holm_family, out->min_runs);
	}
	rc = 0;
out:
	gathered_free(&g);
	free(job.buffers);
	free(ps);
	return rc;
}

int cp_compare(const struct cp_compare_side *base_in,
	       const struct cp_compare_side *head_in, struct cp_bounds *bounds,
	       const struct cp_compare_opts *opts,
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
	out->min_runs = cp_hl_min_runs(z_for_alpha(out->alpha));
	out->warnings = json_array();
	out->excluded = json_array();
	out->inconclusive_reasons = json_array();
	if (check_runs(base_in, head_in, &base, &head, &mem, &unjudged, out, env_why,
		       sizeof(env_why), err)) {
		cp_compare_result_free(out);
		return -1;
	}
	rc = judge_measures(out, &base, &head, bounds, env_why);
	free(mem);
	if (rc) {
		cp_compare_result_free(out);
		return cp_fail(err, CP_EXIT_USAGE, "out of memory comparing runs");
	}
	if (unjudged)
		leave_unjudged(out);
	qsort(out->measures, out->n, sizeof(*out->measures), cmp_verdict_name);
	headline(out, bounds);
	return 0;
}

void cp_compare_result_free(struct cp_compare_result *r)
{
	for (size_t i = 0; r->measures && i < r->n; i++) {
		json_decref(r->measures[i].warnings);
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
	memset(r, 0, sizeof(*r));
}
