/* target_cpu.c - see target_cpu.h. */
#include <stdlib.h>

#include "counters.h"
#include "target_cpu.h"

static double clock_s(clockid_t clock, bool *ok)
{
	struct timespec ts;

	*ok = *ok && clock_gettime(clock, &ts) == 0;
	return *ok ? (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 : 0;
}

void cp_target_cpu_open(struct cp_target_cpu *c, pid_t pid, bool with_counter)
{
	struct cp_event_spec *spec = NULL;
	size_t n;

	c->counter = NULL;
	c->start_s = 0;
	c->clock_ok = false;
	if (!with_counter) {
		c->clock_ok = clock_getcpuclockid(pid, &c->clock) == 0;
		return;
	}
	if (cp_events_parse("task-clock", &spec, &n, NULL) == 0 &&
	    cp_counters_open(&c->counter, pid, spec, n, NULL))
		c->counter = NULL;
	free(spec);
}

void cp_target_cpu_start(struct cp_target_cpu *c)
{
	if (c->counter)
		cp_counters_enable(c->counter);
	else
		c->start_s = clock_s(c->clock, &c->clock_ok);
}

double cp_target_cpu_read_s(struct cp_target_cpu *c)
{
	struct cp_counter_value v;
	double now;

	if (!c->counter) {
		now = clock_s(c->clock, &c->clock_ok);
		return c->clock_ok ? now - c->start_s : 0;
	}
	if (cp_counters_disable(c->counter) || cp_counters_read(c->counter, &v) || !v.supported)
		return 0;
	return v.value / 1e9;
}

void cp_target_cpu_close(struct cp_target_cpu *c)
{
	cp_counters_close(c->counter);
	c->counter = NULL;
}
