/* dlopen_target.c - a reference target that loads a library that reads the
 * clock only after it has served for a while (after clockprof attached).
 *
 *   dlopen_target LIBRARY REQUESTS_BEFORE REQUESTS_AFTER [FIRST]
 *
 * Each request is one call of handle_request(): one clock_gettime
 * (MONOTONIC) in the program, plus, once LIBRARY is loaded, the library's
 * dl_clock_read(): two gettimeofday through the library's own PLT stub and
 * one clock_gettime (REALTIME). So requests read 1 clock before the
 * dlopen and 4 after. It prints "loaded" once the library is in and then
 * pauses 300 ms (its requests are paced anyway) before using it: a profiler
 * that follows dlopen has that long to probe it. FIRST, if given, is
 * loaded 100 ms before LIBRARY (one a profiler may fail to probe). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "dl_requests.h"

int main(int argc, char **argv)
{
	void *h;

	if (argc != 4 && argc != 5) {
		fprintf(stderr,
			"usage: dlopen_target LIBRARY REQUESTS_BEFORE REQUESTS_AFTER [FIRST]\n");
		return 2;
	}
	serve(atol(argv[2]));
	if (argc == 5) {
		if (!dlopen(argv[4], RTLD_NOW)) {
			fprintf(stderr, "dlopen_target: %s\n", dlerror());
			return 1;
		}
		usleep(100000);
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h || !(*(void **)&lib_read = dlsym(h, "dl_clock_read"))) {
		fprintf(stderr, "dlopen_target: %s\n", dlerror());
		return 1;
	}
	printf("loaded\n");
	fflush(stdout);
	usleep(300000);
	serve(atol(argv[3]));
	return 0;
}
