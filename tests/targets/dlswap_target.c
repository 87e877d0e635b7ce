/* dlswap_target.c - a library unloaded and another loaded in its place:
 *
 *   dlswap_target LIB_A LIB_B N
 *
 * dlopens LIB_A, waits 0.2 s, calls its dl_clock_read() N times (3
 * reads each: tests/targets/dl_clock.c), dlcloses it (unmapped: nothing
 * else holds it), dlopens LIB_B, which the loader maps at the address
 * LIB_A left when both are copies of one file, waits 0.2 s, calls its
 * dl_clock_read() 2N times and exits 0.5 s later, LIB_B loaded. Call
 * sites at the same addresses in two files, one after the other
 * (test_dlclose_sites.py). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void calls(const char *lib, long n, int unload)
{
	void *h = dlopen(lib, RTLD_NOW);
	void (*read)(void) = h ? (void (*)(void))dlsym(h, "dl_clock_read") : NULL;

	if (!read) {
		fprintf(stderr, "dlswap_target: %s\n", dlerror());
		exit(1);
	}
	printf("%s at %p\n", lib, (void *)read);
	fflush(stdout);
	usleep(200000); /* as a plugin serves a while: clockprof looks meanwhile */
	for (long i = 0; i < n; i++)
		read();
	if (unload)
		dlclose(h);
}

int main(int argc, char **argv)
{
	long n = argc > 3 ? atol(argv[3]) : 0;

	if (n <= 0) {
		fprintf(stderr, "usage: dlswap_target LIB_A LIB_B N\n");
		return 2;
	}
	calls(argv[1], n, 1);
	calls(argv[2], 2 * n, 0);
	usleep(500000); /* as a server goes on: its maps read meanwhile */
	return 0;
}
