/* pprof_series.c - see pprof_series.h. Only files this series wrote are
 * ever removed: the names are kept, not found by listing the directory. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "grow.h"
#include "pprof_file.h"
#include "pprof_series.h"

#define SUFFIX ".pb.gz"

int cp_pprof_series_init(struct cp_pprof_series *s, const char *path, unsigned keep)
{
	size_t len = strlen(path), sl = strlen(SUFFIX);
	bool has = len > sl && !strcmp(path + len - sl, SUFFIX);

	memset(s, 0, sizeof(*s));
	s->keep = keep ? keep : 1;
	s->stem = strndup(path, has ? len - sl : len);
	s->suffix = strdup(has ? SUFFIX : "");
	s->names = calloc(s->keep, sizeof(*s->names));
	if (!s->stem || !s->suffix || !s->names) {
		cp_pprof_series_free(s);
		return -1;
	}
	return 0;
}

void cp_pprof_series_free(struct cp_pprof_series *s)
{
	cp_free_strings(s->names, s->n);
	free(s->stem);
	free(s->suffix);
	memset(s, 0, sizeof(*s));
}

/* PATH's stem . 20261202T213400.123Z suffix for a time in ms since the
 * epoch (malloc'd; NULL: no memory). */
static char *name_at(const struct cp_pprof_series *s, long long ms)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;
	char stamp[32], *name;

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	if (asprintf(&name, "%s.%s.%03lldZ%s", s->stem, stamp, ms % 1000, s->suffix) < 0)
		return NULL;
	return name;
}

/* The name written joins the kept ones; the oldest beyond keep goes. */
static void remember(struct cp_pprof_series *s, char *name)
{
	if (s->n == s->keep) {
		unlink(s->names[0]); /* gone already: nothing to do */
		free(s->names[0]);
		memmove(s->names, s->names + 1, (s->n - 1) * sizeof(*s->names));
		s->n--;
	}
	s->names[s->n++] = name;
}

int cp_pprof_series_write(struct cp_pprof_series *s, const struct cp_profile *interval,
			  const struct timespec *end, struct cp_error *err)
{
	long long ms = (long long)end->tv_sec * 1000 + end->tv_nsec / 1000000;
	size_t len;
	unsigned char *bytes = cp_pprof_render(interval, &len);
	char *name;
	int rc = -1;

	/* Names sort in the order written, which a reader of the directory
	 * relies on: an interval ending in the millisecond of the last (the
	 * last, partial one right after a full one), or a wall clock stepped
	 * back, is named a millisecond after the last. */
	if (ms <= s->last_ms) /* 0 before the first: never */
		ms = s->last_ms + 1;
	name = name_at(s, ms);
	if (!bytes || !name)
		cp_fail(err, CP_EXIT_PROFILE, "out of memory writing an interval's pprof profile");
	else if ((rc = cp_write_file_atomic(name, bytes, len, err)) == 0) {
		remember(s, name);
		name = NULL;
		s->last_ms = ms;
	}
	free(bytes);
	free(name);
	return rc;
}
