/* pprof_file.h - `--pprof FILE`: a run as a gzip-compressed pprof
 * profile.proto, the format `go tool pprof`, Grafana Pyroscope and Parca
 * read, so that the tools fleets already run can show where clocks are
 * read (docs/pprof.md).
 *
 * Two sample types, both counts: `clock_reads` (every read of the clock
 * window, counted, not sampled: period 1) at each call site (or, with
 * --stacks, each whole stack), and `requests` (complete requests) at the
 * boundary function of a func: boundary. Locations carry function,
 * file:line and inlined functions; mappings the file and its build-id.
 * Strings from the target go in as data, made valid UTF-8. */
#ifndef CP_PPROF_FILE_H
#define CP_PPROF_FILE_H

#include <stddef.h>
#include <stdio.h>

struct cp_error;
struct cp_profile;

/* The profile's bytes, gzip-compressed (malloc'd, *len bytes); NULL when
 * out of memory. */
unsigned char *cp_pprof_render(const struct cp_profile *p, size_t *len);

/* Writes them to f (an output of output_set.h); fails with
 * CP_EXIT_PROFILE when out of memory (a stream error is the caller's). */
int cp_pprof_write(FILE *f, const struct cp_profile *p, struct cp_error *err);

#endif
