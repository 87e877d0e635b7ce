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
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->stem);
	free(s->suffix);
	memset(s, 0, sizeof(*s));
}

/* PATH's stem . 20261202T213400.123Z suffix (malloc'd; NULL: no memory). */
static char *name_at(const struct cp_pprof_series *s, const struct timespec *end)
{
	struct tm tm;
	char stamp[32], *name;

	gmtime_r(&end->tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	if (asprintf(&name, "%s.%s.%03ldZ%s", s->stem, stamp, end->tv_nsec / 1000000,
		     s->suffix) < 0)
		return NULL;
	return name;
}

/* The name written joins the kept ones; the oldest beyond keep goes. */
static void remember(struct cp_pprof_series *s, char *name)
{
	if (s->n == s->keep) {
		unlink(s->names[0]);	/* gone already: nothing to do */
		free(s->names[0]);
		memmove(s->names, s->names + 1, (s->n - 1) * sizeof(*s->names));
		s->n--;
	}
	s->names[s->n++] = name;
}

int cp_pprof_series_write(struct cp_pprof_series *s, const struct cp_profile *interval,
			  const struct timespec *end, struct cp_error *err)
{
	size_t len;
	unsigned char *bytes = cp_pprof_render(interval, &len);
	char *name = name_at(s, end);
	int rc = -1;

	/* Two intervals ending in one millisecond (the last, partial one
	 * right after a full one): the later is named a millisecond on. */
	if (name && s->n && strcmp(s->names[s->n - 1], name) >= 0) {
		struct timespec later = { end->tv_sec, end->tv_nsec + 1000000 };

		if (later.tv_nsec >= 1000000000) {
			later.tv_sec++;
			later.tv_nsec -= 1000000000;
		}
		free(name);
		name = name_at(s, &later);
	}
	if (!bytes || !name)
		cp_fail(err, CP_EXIT_PROFILE, "out of memory writing an interval's pprof profile");
	else if ((rc = cp_write_file_atomic(name, bytes, len, err)) == 0) {
		remember(s, name);
		name = NULL;
	}
	free(bytes);
	free(name);
	return rc;
}
