/* monotonic.h - one clock for the probe's deadlines and figures, from the
 * links' removal below to the window above (moved out of the window, so
 * that the rooms beneath it need not include it). */
#ifndef CP_MONOTONIC_H
#define CP_MONOTONIC_H

/* CLOCK_MONOTONIC in seconds. */
double cp_monotonic_s(void);

#endif
