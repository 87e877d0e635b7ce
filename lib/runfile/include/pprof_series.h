/* pprof_series.h - `--pprof PATH` with `--interval`: one profile per
 * interval beside PATH, named by the interval's end (UTC, to the
 * millisecond): PATH "clock.pb.gz" gives "clock.20261202T213400.123Z.pb.gz"
 * (a PATH not ending in .pb.gz gets ".TIME" appended), each written
 * atomically, the last K kept: a continuous run's directory holds K files
 * whatever its length, and what Pyroscope's or Parca's uploader picks up
 * is always whole. PATH itself still gets the whole window at the end. */
#ifndef CP_PPROF_SERIES_H
#define CP_PPROF_SERIES_H

#include <stddef.h>
#include <time.h>

struct cp_error;
struct cp_profile;

#define CP_PPROF_KEEP_DEFAULT 10
#define CP_PPROF_KEEP_DEFAULT_TEXT "10"
#define CP_PPROF_KEEP_MAX 100000

struct cp_pprof_series {
	char *stem, *suffix; /* PATH split where the time goes */
	unsigned keep;	     /* files kept, the newest */
	char **names;	     /* those written and kept, oldest first */
	size_t n;
	long long last_ms; /* the newest name's time, ms since the epoch; 0: none */
};

/* 0, or -1: no memory. */
int cp_pprof_series_init(struct cp_pprof_series *s, const char *path, unsigned keep);
void cp_pprof_series_free(struct cp_pprof_series *s);

/* Writes the profile of one interval (a profile view holding only what
 * the interval counted) under the name of its end, then removes the
 * oldest file this series wrote beyond keep. Names sort in the order
 * written, even where the wall clock steps back. 0, or -1 with err. */
int cp_pprof_series_write(struct cp_pprof_series *s, const struct cp_profile *interval,
			  const struct timespec *end, struct cp_error *err);

#endif
