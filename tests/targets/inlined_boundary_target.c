/* inlined_boundary_target: a request function the compiler copied.
 *
 *   inlined_boundary_target N
 *
 * step() reads the clock once per call and is called N times: directly
 * from main, where -O2 inlines it, and every 4th time through a function
 * pointer, which reaches its own symbol. handle() reads twice per call,
 * and -O3 clones it (handle.constprop.0) for its direct calls, once per
 * request; every 4th request also calls it through a pointer (1 read).
 * A func: boundary on either symbol sees only the pointer's calls: its
 * "requests" hold several calls each, which clockprof must say. */
#include <stdlib.h>
#include <time.h>

volatile long sink;

void step(int i)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec + i;
}

__attribute__((noinline)) void handle(int i, int k)
{
	struct timespec ts;

	for (int j = 0; j < k; j++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec + i;
	}
}

void (*volatile step_ptr)(int) = step;
void (*volatile handle_ptr)(int, int) = handle;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;

	for (long i = 0; i < n; i++) {
		step((int)i);
		handle((int)i, 2);
		if (i % 4 == 0) {
			step_ptr((int)i);
			handle_ptr((int)i, 1);
		}
	}
	return 0;
}
