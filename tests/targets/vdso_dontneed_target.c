/* vdso_dontneed_target.c - a process that gives its vDSO's pages back to
 * the kernel mid-run: N reads, madvise(vDSO, MADV_DONTNEED), N reads.
 * A private copy of the vDSO (the patched one: the kernel copies the page
 * at a forced write) is dropped and the kernel's own pages come back, as
 * a process that trims its memory by ranges may do
 * (test_vdso_dropped.py).
 *
 *   vdso_dontneed_target N */
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>

static volatile long sink;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	struct timespec ts;

	/* n reads, the copy dropped at the n-th, n more */
	for (long i = 0; i < 2 * n; i++) {
		if (i == n && (!vdso || madvise((void *)vdso, 8192, MADV_DONTNEED))) {
			perror("vdso_dontneed_target: madvise");
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
	printf("%ld reads\n", 2 * n);
	return 0;
}
