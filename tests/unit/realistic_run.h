/* realistic_run.h - A/A and +1 read/op comparisons of a realistic run,
 * drawn at random from a fixed seed: the one model behind the defaults'
 * figures tests/bench/bench_gate_stats.c publishes (docs/bounds.md, "What
 * the defaults give") and the unit tests that hold a bounds file to them. */
#ifndef REALISTIC_RUN_H
#define REALISTIC_RUN_H

#include <stddef.h>

#include "bounds.h"

/* The measures a realistic run has, and its requests. */
#define REALISTIC_MEASURES 7
#define REALISTIC_REQUESTS 500

/* The generator restarts from seed. */
void realistic_seed(unsigned long long seed);
/* One comparison of n runs a side under bounds, with
 * --fail-on-inconclusive, the head reading plus_reads more per request:
 * 1 passed (exit 0), 0 not, -1 not made; *caught (when not NULL): which
 * clock measures regressed (bit 0 the constant one, bit 1 the varying). */
int realistic_one(struct cp_bounds *bounds, size_t n, double plus_reads, int *caught);
/* Judges `pairs` comparisons of n runs a side under bounds, with
 * --fail-on-inconclusive, the head reading plus_reads more per request
 * (0: an A/A comparison); returns how many passed (exit 0), or -1 when
 * a comparison could not be made. Judging counts the rules' matches in
 * bounds. The generator restarts from seed. */
int realistic_passes(struct cp_bounds *bounds, size_t n, double plus_reads, int pairs,
		     unsigned long long seed);

#endif
