/* fn_pointer_clock.c - a unit-test fixture (test_clock_points.c): pointers
 * to gettimeofday and time initialised in data, which position-independent
 * code fills with the functions' addresses (R_X86_64_64 relocations):
 * calls through them reach the vDSO past every PLT stub, unseen by
 * uprobes. gettimeofday is also called directly, through its stub. */
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

volatile long sink;
int (*volatile now_tv)(struct timeval *, void *) =
	(int (*)(struct timeval *, void *))gettimeofday;
time_t (*volatile now_s)(time_t *) = time;

int main(int argc, char **argv)
{
	struct timeval tv;
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < n; i++) {
		now_tv(&tv, NULL);
		gettimeofday(&tv, NULL);
		sink += tv.tv_usec + now_s(NULL);
	}
	return 0;
}
