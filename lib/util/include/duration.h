/* duration.h - parsing -d/--duration values: "10" (seconds), "2.5s",
 * "500ms", "1m", "1h". */
#ifndef CP_DURATION_H
#define CP_DURATION_H

struct cp_error;

/* Stores the duration in seconds (> 0). Fails with CP_EXIT_USAGE. */
int cp_parse_duration(const char *text, double *seconds, struct cp_error *err);

#endif
