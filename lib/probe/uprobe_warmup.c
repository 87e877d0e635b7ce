/* uprobe_warmup.c - see uprobe_warmup.h. */
#include <linux/perf_event.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "own_code.h"
#include "uprobe_multi.h"
#include "uprobe_warmup.h"

/* Where the warm-up uprobe sits: never called, so it never fires. */
__attribute__((noinline)) static void never_called(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The kernel's perf PMU for uprobes, as sysfs numbers it; -1 without. */
static int uprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/* Opens a counting perf event on a uprobe at never_called, for this
 * process only: the kernel registers the uprobe while the call blocks. */
static void *register_warmup(void *arg)
{
	struct cp_uprobe_warmup *w = arg;
	struct perf_event_attr attr;
	char path[PATH_MAX];
	uint64_t offset;
	int type = uprobe_pmu_type();

	if (type < 0 || cp_own_code_offset((const void *)never_called, path, sizeof(path), &offset))
		return NULL;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (__u32)type;
	attr.config1 = (__u64)(uintptr_t)path;	/* uprobe_path */
	attr.config2 = offset;			/* probe_offset */
	w->fd = (int)syscall(SYS_perf_event_open, &attr, getpid(), -1, -1, PERF_FLAG_FD_CLOEXEC);
	return NULL;
}

void cp_uprobe_warmup_start(struct cp_uprobe_warmup *w)
{
	w->fd = -1;
	w->started = pthread_create(&w->thread, NULL, register_warmup, w) == 0;
}

void cp_uprobe_warmup_end(struct cp_uprobe_warmup *w)
{
	if (!w->started)
		return;
	pthread_join(w->thread, NULL);
	w->started = false;
	cp_close_together(&w->fd, w->fd >= 0 ? 1 : 0, false);
	w->fd = -1;
}
