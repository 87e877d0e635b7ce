/* realistic_run.h - A/A and +1 read/op comparisons of a realistic run,
 * drawn at random from a fixed seed: the model tests/bench/bench_gate_stats.c
 * publishes the defaults' figures with (docs/bounds.md, "What the defaults
 * give"), for unit tests that hold a bounds file to those figures. */
#ifndef REALISTIC_RUN_H
#define REALISTIC_RUN_H

#include <stddef.h>

#include "bounds.h"

/* Judges `pairs` comparisons of n runs a side under bounds, with
 * --fail-on-inconclusive, the head reading plus_reads more per request
 * (0: an A/A comparison); returns how many passed (exit 0), or -1 when
 * a comparison could not be made. Judging counts the rules' matches in
 * bounds. The generator restarts from seed. */
int realistic_passes(struct cp_bounds *bounds, size_t n, double plus_reads,
		     int pairs, unsigned long long seed);

#endif
