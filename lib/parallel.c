/* parallel.c - see parallel.h. */
#include <pthread.h>
#include <unistd.h>

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
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t workers = cpus > 0 ? (size_t)cpus : 1;

	if (workers > CP_PARALLEL_MAX_WORKERS)
		workers = CP_PARALLEL_MAX_WORKERS;
	if (workers > n)
		workers = n;
	return workers ? workers : 1;
}

void cp_parallel_for(size_t n, cp_parallel_fn fn, void *ctx)
{
	struct parallel_job job = { fn, ctx, n, 0, PTHREAD_MUTEX_INITIALIZER };
	struct parallel_worker workers[CP_PARALLEL_MAX_WORKERS];
	pthread_t threads[CP_PARALLEL_MAX_WORKERS];
	size_t nworkers = cp_parallel_workers(n), started = 0;

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
