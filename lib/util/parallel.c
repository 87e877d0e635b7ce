/* parallel.c - see parallel.h. */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "cpu_quota.h"
#include "parallel.h"

struct parallel_job {
	cp_parallel_fn fn;
	void *ctx;
	size_t n, next;
	pthread_mutex_t lock;
};

struct parallel_worker {
	struct parallel_job *job;
	size_t index;
};

static void *run_worker(void *arg)
{
	struct parallel_worker *w = arg;
	struct parallel_job *job = w->job;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&job->lock);
		i = job->next++;
		pthread_mutex_unlock(&job->lock);
		if (i >= job->n)
			return NULL;
		job->fn(job->ctx, i, w->index);
	}
}

size_t cp_parallel_workers(size_t n)
{
	cpu_set_t allowed;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	size_t workers = online > 0 ? (size_t)online : 1, quota = cp_cpu_quota_cpus();

	/* A CI container pinned to fewer CPUs than the host has must not
	 * get more threads than it can run. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0)
		workers = (size_t)CPU_COUNT(&allowed);

	/* nor more than its cgroup's CPU limit lets it run at once */
	if (quota && quota < workers)
		workers = quota;
	if (workers > CP_PARALLEL_MAX_WORKERS)
		workers = CP_PARALLEL_MAX_WORKERS;
	if (workers > n)
		workers = n;
	return workers ? workers : 1;
}

void cp_parallel_for(size_t n, size_t nworkers, cp_parallel_fn fn, void *ctx)
{
	struct parallel_job job = { fn, ctx, n, 0, PTHREAD_MUTEX_INITIALIZER };
	struct parallel_worker workers[CP_PARALLEL_MAX_WORKERS] = { 0 };
	pthread_t threads[CP_PARALLEL_MAX_WORKERS];
	size_t started = 0;

	if (nworkers > CP_PARALLEL_MAX_WORKERS)
		nworkers = CP_PARALLEL_MAX_WORKERS;
	if (nworkers > n)
		nworkers = n;
	if (nworkers == 0)
		nworkers = 1;

	for (size_t w = 0; w < nworkers; w++)
		workers[w] = (struct parallel_worker){ &job, w };
	/* Helpers get indices 1..; a helper that fails to start leaves its
	 * index unused, which is harmless: indices only pick scratch. */
	for (size_t w = 1; w < nworkers; w++)
		if (pthread_create(&threads[started], NULL, run_worker, &workers[w]) == 0)
			started++;
	run_worker(&workers[0]);
	for (size_t t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	pthread_mutex_destroy(&job.lock);
}
