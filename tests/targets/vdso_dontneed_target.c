/* vdso_dontneed_target.c - a process that gives its vDSO's pages back to
 * the kernel mid-run, as a process that trims its memory by ranges may
 * do: a private copy of the vDSO (the patched one: the kernel copies the
 * page at a forced write) is dropped and the kernel's own pages come
 * back (test_vdso_dropped.py).
 *
 *   vdso_dontneed_target N          N reads, the madvise, N reads
 *   vdso_dontneed_target signal     reads until SIGUSR1, the madvise,
 *                                   reads until killed */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>

static volatile long sink;
static volatile sig_atomic_t told;

static void on_usr1(int sig)
{
	(void)sig;
	told = 1;
}

static void reads(long n)
{
	struct timespec ts;

	for (long i = 0; (n < 0 || i < n) && (n >= 0 || !told); i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

static int drop_vdso(void)
{
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);

	if (!vdso || madvise((void *)vdso, 8192, MADV_DONTNEED)) {
		perror("vdso_dontneed_target: madvise");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 && strcmp(argv[1], "signal") ? atol(argv[1]) : -1;

	if (n < 0) {
		signal(SIGUSR1, on_usr1);
		printf("ready\n");
		fflush(stdout);
	}
	reads(n > 0 ? n : -1);
	if (drop_vdso())
		return 1;
	for (;;) {
		reads(n > 0 ? n : 1000000);
		if (n > 0)
			break;
	}
	printf("%ld reads\n", 2 * n);
	return 0;
}
