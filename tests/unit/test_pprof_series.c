/* test_pprof_series.c - lib/runfile/pprof_series: --pprof's profile per
 * interval is named by the interval's end beside PATH (before .pb.gz, or
 * after a PATH without it), and only the newest K files this series wrote
 * stay; a file it did not write is never removed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "pprof_series.h"
#include "profile.h"
#include "unit.h"

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

TEST(pprof_series_names_by_time_and_keeps_the_newest)
{
	static struct cp_profile p;
	struct cp_pprof_series s;
	struct cp_error err = { 0 };
	char dir[] = "/tmp/cp-series-XXXXXX", path[128], name[160], other[160];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/clock.pb.gz", dir);
	snprintf(other, sizeof(other), "%s/clock.20000101T000000.000Z.pb.gz", dir);
	fclose(fopen(other, "w")); /* someone else's: stays */
	CHECK(cp_pprof_series_init(&s, path, 2) == 0);
	for (int i = 0; i < 3; i++) {
		struct timespec end = { 1796218200 + i, 123000000 }; /* 2026-12-02 */

		CHECK(cp_pprof_series_write(&s, &p, &end, &err) == 0);
	}
	snprintf(name, sizeof(name), "%s/clock.20261202T133000.123Z.pb.gz", dir);
	CHECK(!exists(name)); /* the oldest of three, K = 2 */
	snprintf(name, sizeof(name), "%s/clock.20261202T133001.123Z.pb.gz", dir);
	CHECK(exists(name));
	unlink(name);
	snprintf(name, sizeof(name), "%s/clock.20261202T133002.123Z.pb.gz", dir);
	CHECK(exists(name));
	unlink(name);
	CHECK(exists(other));
	unlink(other);
	cp_pprof_series_free(&s);

	snprintf(path, sizeof(path), "%s/profile", dir);
	CHECK(cp_pprof_series_init(&s, path, 1) == 0);
	CHECK(cp_pprof_series_write(&s, &p, &(struct timespec){ 1796218200, 5000000 }, &err) == 0);
	snprintf(name, sizeof(name), "%s/profile.20261202T133000.005Z", dir);
	CHECK(exists(name));
	unlink(name);
	cp_pprof_series_free(&s);
	CHECK(rmdir(dir) == 0);
}

/* The names sort in the order written: a second interval in the same
 * millisecond, and one whose wall clock stepped back, are named a
 * millisecond after the last. */
TEST(pprof_series_names_sort_in_the_order_written)
{
	static struct cp_profile p;
	struct timespec ends[] = { { 1796218200, 123400000 },
				   { 1796218200, 123900000 },
				   { 1796218100, 0 } };
	const char *stamps[] = { "133000.123", "133000.124", "133000.125" };
	struct cp_pprof_series s;
	struct cp_error err = { 0 };
	char dir[] = "/tmp/cp-series-XXXXXX", path[128], name[160];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/clock.pb.gz", dir);
	CHECK(cp_pprof_series_init(&s, path, 3) == 0);
	for (int i = 0; i < 3; i++)
		CHECK(cp_pprof_series_write(&s, &p, &ends[i], &err) == 0);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s/clock.20261202T%sZ.pb.gz", dir, stamps[i]);
		CHECK(exists(name));
		unlink(name);
	}
	cp_pprof_series_free(&s);
	CHECK(rmdir(dir) == 0);
}
