/* test_warmup.c - the warm-up's perf event (warmup.h) is held from
 * cp_warmup_start until cp_warmup_events_open: closed at once, it let the
 * kernel's scheduler hooks go off in the middle of a start-up, and the
 * target's task-clock then waited for a grace period of its own. */
#include <dirent.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unit.h"
#include "warmup.h"

/* The perf events this process holds open. */
static int perf_events_held(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], link[64];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = 0;
			n += strcmp(link, "anon_inode:[perf_event]") == 0;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static bool may_open_perf_events(void)
{
	struct perf_event_attr attr = { .size = sizeof(attr),
					.type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_DUMMY,
					.disabled = 1 };
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

TEST(warmup_holds_its_perf_event_until_stopped)
{
	int before = perf_events_held();

	if (!may_open_perf_events()) {
		unit_skip("this process may not open a perf event");
		return;
	}
	cp_warmup_start();
	/* its thread opens it: waited for, 5 s at most */
	for (int i = 0; i < 5000 && perf_events_held() == before; i++)
		usleep(1000);
	CHECK_INT(perf_events_held(), before + 1);
	usleep(20 * 1000);
	CHECK_INT(perf_events_held(), before + 1); /* still held */
	cp_warmup_events_open();
	CHECK_INT(perf_events_held(), before);
	cp_warmup_stop(); /* again: nothing more to close */
	CHECK_INT(perf_events_held(), before);
}
