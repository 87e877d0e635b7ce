/* host.c - see host.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "host.h"
#include "perf_trial.h"

static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

static void read_cpu_model(char *buf, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(buf, size, "%s", "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, size, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static bool sysfs_has_cpu_pmu(void)
{
	static const char *const fixed[] = { "cpu", "cpu_core", "cpu_atom" };
	char path[300];
	DIR *d;
	struct dirent *de;
	bool found = false;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", fixed[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	/* arm64 names its core PMUs armv8_pmuv3_0, armv8_cortex_a72, ... */
	d = opendir("/sys/bus/event_source/devices");
	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = !strncmp(de->d_name, "armv", 4);
	closedir(d);
	return found;
}

bool cp_host_has_pmu(void)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_HARDWARE,
					.config = PERF_COUNT_HW_INSTRUCTIONS };
	int refused = cp_perf_trial(&attr);

	if (!refused)
		return true;
	if (refused == ENOENT || refused == ENODEV || refused == EOPNOTSUPP)
		return false;
	/* Not permitted (or another refusal): the trial says nothing about
	 * the hardware, the PMU device in sysfs does. */
	return sysfs_has_cpu_pmu();
}

void cp_host_inspect(struct cp_host *h)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	read_cpu_model(h->cpu, sizeof(h->cpu));
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  h->clocksource, sizeof(h->clocksource));
	h->pmu = cp_host_has_pmu();
}

bool cp_clocksource_in_vdso(const char *clocksource)
{
	return !strcmp(clocksource, "tsc") || !strcmp(clocksource, "kvm-clock") ||
	       !strcmp(clocksource, "hyperv_clocksource_tsc_page");
}
