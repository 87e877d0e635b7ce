/* compare_gathered.h - the measures of every admitted run, gathered by
 * name into one table (compare.c): a row per measure, a column per run,
 * base runs first, NaN where a run lacks the measure. Judging a measure
 * (compare_measure.c) reads its row. */
#ifndef CP_COMPARE_GATHERED_H
#define CP_COMPARE_GATHERED_H

#include <jansson.h>
#include <math.h>
#include <stddef.h>

#include "compare.h"

/* A measure gathered: its name (in a run's pool) and its first
 * occurrence on each side (kind, unit, better). */
struct cp_gathered_measure {
	const char *name;
	const struct cp_run_measure *base_meta, *head_meta;
};

struct cp_gathered {
	size_t nmeasures;
	size_t values_cap, measures_cap;
	size_t nb, nh;	/* runs per side */
	double *values; /* [measure][nb + nh], NaN when absent */
	struct cp_gathered_measure *measures;
	json_t *index;	     /* name -> integer index */
	size_t *by_position; /* the previous run's measure indices, in order */
	size_t npositions, positions_cap;
	/* The target's executable by its role: the first base run's file
	 * name and its clock_reads[EXE]/op, which the runs that name theirs
	 * otherwise are judged under (aliased: how many). */
	const char *main_file;
	char *main_measure;
	size_t aliased;
};

/* How many runs of one side have measure i. */
static inline size_t cp_gathered_count(const struct cp_gathered *g, size_t i, int is_head)
{
	const double *row = g->values + i * (g->nb + g->nh) + (is_head ? g->nb : 0);
	size_t n = is_head ? g->nh : g->nb, k = 0;

	for (size_t r = 0; r < n; r++)
		k += !isnan(row[r]);
	return k;
}

/* Copies the present values of one side of measure i into out; returns
 * their count. */
static inline size_t cp_gathered_values(const struct cp_gathered *g, size_t i, int is_head,
					double *out)
{
	const double *row = g->values + i * (g->nb + g->nh) + (is_head ? g->nb : 0);
	size_t n = is_head ? g->nh : g->nb, k = 0;

	for (size_t r = 0; r < n; r++)
		if (!isnan(row[r]))
			out[k++] = row[r];
	return k;
}

#endif
