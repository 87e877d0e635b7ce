/* test_metrics_sink.c - lib/runfile/metrics_sink: what --metrics-file holds
 * at each interval (the on_interval hook) and at the end. Each interval
 * replaces the file whole with the counts so far, which only grow; a FIFO
 * is left to the final text (a reader would otherwise hold the window at
 * every interval); the sticky site labels carry from one text to the next
 * and into the final one. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "metrics_sink.h"
#include "profile.h"
#include "unit.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *t = calloc(1, 1 << 16);

	if (f && t)
		t[fread(t, 1, (1 << 16) - 1, f)] = '\0';
	if (f)
		fclose(f);
	return t;
}

static long long value_of(const char *text, const char *head)
{
	const char *l = strstr(text, head);

	return l && l[strlen(head)] == ' ' ? strtoll(l + strlen(head) + 1, NULL, 10) : -1;
}

TEST(metrics_sink_interval_replaces_the_file_with_growing_counts)
{
	static struct cp_profile p;
	char dir[] = "/tmp/cp-metrics-XXXXXX", path[64], *t;
	struct cp_call_site site = {
		.function = "f", .file = "a.c", .line = 3, .via = "time", .count = 5
	};
	struct cp_metrics_sink k;
	struct cp_error err = { 0 };
	const char *site_head =
		"clockprof_call_site_reads_total{executable=\"/bin/t\",site=\"f\",location=\"a.c:3\",via=\"time\"}";

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/clockprof.prom", dir);
	memset(&p, 0, sizeof(p));
	p.pause_ms[0] = p.pause_ms[1] = -1;
	snprintf(p.target.exe, sizeof(p.target.exe), "/bin/t");
	p.totals.all.by_entry[CP_ENTRY_TIME] = 5;
	p.call_sites.sites = &site;
	p.call_sites.n = 1;
	cp_metrics_sink_init(&k, path, 10);
	CHECK(k.file_each_interval); /* a new file */
	CHECK_INT(cp_metrics_sink_interval(&k, &p, &err), 0);
	t = slurp(path);
	CHECK(t);
	CHECK_INT(value_of(t, "clockprof_clock_reads_total{executable=\"/bin/t\",entry=\"time\"}"),
		  5);
	CHECK_INT(value_of(t, site_head), 5);
	free(t);
	/* the next interval: more reads; the site not named in this snapshot
	 * keeps its value */
	p.totals.all.by_entry[CP_ENTRY_TIME] = 9;
	p.call_sites.n = 0;
	CHECK_INT(cp_metrics_sink_interval(&k, &p, &err), 0);
	t = slurp(path);
	CHECK(t);
	CHECK_INT(value_of(t, "clockprof_clock_reads_total{executable=\"/bin/t\",entry=\"time\"}"),
		  9);
	CHECK_INT(value_of(t, site_head), 5);
	free(t);
	cp_metrics_sink_release(&k);
	unlink(path);
	rmdir(dir);
}

TEST(metrics_sink_fifo_gets_only_the_final_text)
{
	char dir[] = "/tmp/cp-metrics-XXXXXX", path[64];
	struct cp_metrics_sink k;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(mkfifo(path, 0600) == 0);
	cp_metrics_sink_init(&k, path, 10);
	CHECK(!k.file_each_interval);
	cp_metrics_sink_release(&k);
	cp_metrics_sink_init(&k, "-", 10);
	CHECK(!k.file_each_interval);
	cp_metrics_sink_release(&k);
	unlink(path);
	rmdir(dir);
}
