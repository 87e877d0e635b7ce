/* bare_uprobe.c - the baselines clockprof is judged against: a bare kernel
 * uprobe counter (perf_event_open on the uprobe PMU, counting mode, no BPF)
 * on the C library's clock_gettime.
 *
 *   bare_uprobe N     per read, in this process: prints "<ns per read
 *                     without a probe> <ns with> <hits>", each the best of
 *                     five rounds of N reads.
 *   bare_uprobe offset LIBC
 *                     prints clock_gettime's file offset in LIBC.
 *   bare_uprobe live PID LIBC OFFSET MS
 *                     start-up floor: the counter opened on PID at once,
 *                     "live" printed, MS ms counted, "hits N" printed. From
 *                     spawn to "live" is what any uprobe tool pays on this
 *                     host before its first probe counts: exec, and the
 *                     grace period the kernel waits for before it registers
 *                     a first uprobe (the bench measures it side by side with
 *                     clockprof and bpftrace). */
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdbool.h>
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

/* A counter on PATH at OFFSET for pid (0: this process), enabled or not. */
static int open_uprobe_counter(pid_t pid, const char *path, uint64_t offset, bool enabled)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)uprobe_pmu_type();
	attr.config1 = (uint64_t)(uintptr_t)path;
	attr.config2 = offset;
	attr.disabled = !enabled;
	return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int libc_path(char *path, size_t size)
{
	Dl_info info;

	if (!dladdr((void *)clock_gettime, &info) || !info.dli_fname)
		return -1;
	snprintf(path, size, "%s", info.dli_fname);
	return 0;
}

static int clock_gettime_in(const char *libc, struct cp_elf_function *fn)
{
	if (cp_elf_find_function(libc, libc, "clock_gettime", fn, NULL)) {
		fprintf(stderr, "bare_uprobe: cannot find clock_gettime in %s\n", libc);
		return -1;
	}
	return 0;
}

static int per_read(long n)
{
	struct cp_elf_function fn;
	char libc[4096];
	double bare, probed;
	uint64_t hits = 0;
	int fd;

	if (libc_path(libc, sizeof(libc)) || clock_gettime_in(libc, &fn))
		return 1;
	bare = loop_ns(n);
	fd = open_uprobe_counter(0, libc, fn.offset, false);
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

static int live(pid_t pid, const char *libc, uint64_t offset, long ms)
{
	uint64_t hits = 0;
	int fd = open_uprobe_counter(pid, libc, offset, true);

	if (fd < 0) {
		perror("bare_uprobe: perf_event_open(uprobe)");
		return 1;
	}
	printf("live\n");
	fflush(stdout);
	usleep((useconds_t)ms * 1000);
	if (read(fd, &hits, sizeof(hits)) != sizeof(hits))
		hits = 0;
	close(fd);
	printf("hits %llu\n", (unsigned long long)hits);
	return 0;
}

int main(int argc, char **argv)
{
	struct cp_elf_function fn;

	if (argc == 6 && !strcmp(argv[1], "live"))
		return live(atoi(argv[2]), argv[3], strtoull(argv[4], NULL, 0), atol(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "offset")) {
		if (clock_gettime_in(argv[2], &fn))
			return 1;
		printf("%llu\n", (unsigned long long)fn.offset);
		return 0;
	}
	return per_read(argc > 1 ? atol(argv[1]) : 20000);
}
