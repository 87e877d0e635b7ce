/* perf_trial.h - whether this kernel takes a perf event, tried on
 * clockprof's own thread before a target's counters depend on it. */
#ifndef CP_PERF_TRIAL_H
#define CP_PERF_TRIAL_H

#include <linux/perf_event.h>

/* Opens attr (its type, config and what the caller set; made disabled,
 * user-space only, its size filled in) on the calling thread, and closes
 * it again: 0 when the kernel took it, else the errno it refused with. A
 * user-space-only event is allowed at any perf_event_paranoid below 3. */
int cp_perf_trial(struct perf_event_attr *attr);

#endif
