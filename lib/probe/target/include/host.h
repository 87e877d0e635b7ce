/* host.h - the machine fingerprint written into run.json: compare refuses
 * to trust timings across a different clocksource or PMU. */
#ifndef CP_HOST_H
#define CP_HOST_H

#include <stdbool.h>

struct cp_host {
	char kernel[128];
	char cpu[128];
	char clocksource[64];
	bool pmu; /* a hardware PMU (cycles, instructions) is usable */
};

void cp_host_inspect(struct cp_host *h);

/* A hardware PMU is present and usable: the sysfs PMU device (cpu, cpu_core,
 * cpu_atom, armv*) or a trial "instructions:u" on ourselves. */
bool cp_host_has_pmu(void);

/* Whether the vDSO reads this clocksource itself (tsc, kvm-clock, Hyper-V's
 * TSC page). With any other clocksource, high-resolution clock reads fall
 * back to the clock_gettime syscall inside the vDSO. */
bool cp_clocksource_in_vdso(const char *clocksource);

#endif
