/* bare_uprobe.c - the baseline clockprof's per-read cost is judged against:
 * a bare kernel uprobe counter (perf_event_open on the uprobe PMU, counting
 * mode, no BPF) on the C library's clock_gettime, in this process.
 *
 *   bare_uprobe N     prints "<ns per read without a probe> <ns with> <hits>"
 * Each figure is the best of five rounds of N reads. */
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "elf_symbols.h"

static double loop_ns(long n)
{
	struct timespec t0, t1, ts;
	double best = 1e300;
	volatile long sink = 0;

	for (int round = 0; round < 5; round++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (long i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n;
		if (ns < best)
			best = ns;
	}
	return best;
}

static int uprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

static int libc_path(char *path, size_t size)
{
	Dl_info info;

	if (!dladdr((void *)clock_gettime, &info) || !info.dli_fname)
		return -1;
	snprintf(path, size, "%s", info.dli_fname);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	struct cp_elf_function fn;
	struct perf_event_attr attr;
	char libc[4096];
	double bare, probed;
	uint64_t hits = 0;
	int fd;

	if (libc_path(libc, sizeof(libc)) ||
	    cp_elf_find_function(libc, libc, "clock_gettime", &fn, NULL)) {
		fprintf(stderr, "bare_uprobe: cannot find clock_gettime in the C library\n");
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)uprobe_pmu_type();
	attr.config1 = (uint64_t)(uintptr_t)libc;
	attr.config2 = fn.offset;
	attr.disabled = 1;
	bare = loop_ns(n);
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		perror("bare_uprobe: perf_event_open(uprobe)");
		return 1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	probed = loop_ns(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &hits, sizeof(hits)) != sizeof(hits))
		hits = 0;
	close(fd);
	printf("%.1f %.1f %llu\n", bare, probed, (unsigned long long)hits);
	return 0;
}
