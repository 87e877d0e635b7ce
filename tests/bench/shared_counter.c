/* shared_counter.c - the figure behind probes/clockreads.bpf.c's two
 * counting patterns: nanoseconds per increment of a per-CPU counter (plain
 * add) and of one counter shared by every CPU (an atomic add, what the BPF
 * JIT emits for __sync_fetch_and_add), from one CPU and from two
 * contending for it. A figure, not a test. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define N 20000000UL

static volatile uint64_t shared __attribute__((aligned(64)));
static struct {
	volatile uint64_t v;
	char pad[56];
} own[2] __attribute__((aligned(64)));
static int atomic_mode;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void *count(void *arg)
{
	long cpu = (long)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (uint64_t i = 0; i < N; i++) {
		if (atomic_mode)
			__sync_fetch_and_add(&shared, 1);
		else
			own[cpu].v++;
	}
	return NULL;
}

/* ns per increment per thread. */
static double trial(int atomic, int threads)
{
	pthread_t t[2];
	double t0 = now_s();

	atomic_mode = atomic;
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, count, (void *)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return (now_s() - t0) * 1e9 / N;
}

int main(void)
{
	for (int r = 0; r < 3; r++)
		printf("shared_counter: per-CPU add %.1f ns (1 CPU) %.1f ns (2 CPUs); "
		       "shared atomic add %.1f ns (1 CPU) %.1f ns (2 CPUs contending)\n",
		       trial(0, 1), trial(0, 2), trial(1, 1), trial(1, 2));
	return 0;
}
