/* parallel.h - running independent pieces of work on every CPU.
 * compare loads 60 run files and judges 1,000 measures; each piece is
 * independent, so a plain work queue over the online CPUs halves the
 * wall time of a CI gate on a two-core runner. */
#ifndef CP_PARALLEL_H
#define CP_PARALLEL_H

#include <stddef.h>

/* The most threads cp_parallel_for runs, the caller's included. */
#define CP_PARALLEL_MAX_WORKERS 8

/* Called once per item i in [0, n); worker in [0, workers) tells which
 * thread runs it, so callers can give each its own scratch. Items are
 * taken in order, one at a time, by whichever thread is free. */
typedef void (*cp_parallel_fn)(void *ctx, size_t i, size_t worker);

/* How many threads are worth using for n items: the CPUs this process may
 * run on (its affinity, and its cgroup's CPU limit: cpu_quota.h), at most
 * CP_PARALLEL_MAX_WORKERS and at most n (at least 1). */
size_t cp_parallel_workers(size_t n);

/* Runs fn over [0, n) on `workers` threads (a value cp_parallel_workers()
 * returned; clamped to [1, CP_PARALLEL_MAX_WORKERS]) and returns when
 * every item is done. Callers size per-worker scratch by the same value.
 * The calling thread works too; if no helper can be started it does all. */
void cp_parallel_for(size_t n, size_t workers, cp_parallel_fn fn, void *ctx);

#endif
