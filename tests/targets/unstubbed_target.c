/* unstubbed_target.c - clock reads that pass no PLT stub and no C library
 * wrapper, known by construction, for the vDSO patch (test_vdso_patch.py):
 * what uprobes cannot see.
 *
 *   unstubbed_target REQUESTS
 *
 * Each request, one call of handle_request (the boundary), makes 4 reads:
 * __vdso_clock_gettime(CLOCK_MONOTONIC) called directly through the
 * vDSO's own symbol, twice; gettimeofday through a pointer from dlsym; and
 * clock_gettime(CLOCK_REALTIME) the ordinary way. 1 ms between requests. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*vdso_gettime)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, void *);

static vdso_gettime vdso_clock_gettime;
static gtod_fn gtod;

__attribute__((noinline)) static void handle_request(void)
{
	struct timespec ts;
	struct timeval tv;

	vdso_clock_gettime(CLOCK_MONOTONIC, &ts);
	vdso_clock_gettime(CLOCK_MONOTONIC, &ts);
	gtod(&tv, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
}

int main(int argc, char **argv)
{
	void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	int n = argc > 1 ? atoi(argv[1]) : 100;

	vdso_clock_gettime = vdso ? (vdso_gettime)dlsym(vdso, "__vdso_clock_gettime") : NULL;
	gtod = (gtod_fn)dlsym(RTLD_DEFAULT, "gettimeofday");
	if (!vdso_clock_gettime || !gtod) {
		fprintf(stderr, "unstubbed_target: no vDSO symbol to call\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		handle_request();
		usleep(1000);
	}
	return 0;
}
