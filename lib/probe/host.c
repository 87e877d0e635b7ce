/* host.c - see host.h. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "counters.h"
#include "host.h"

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
