/* warmup.c - see warmup.h. */
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "registrar.h"
#include "uprobe_multi.h"
#include "warmup.h"

/* Asks the kernel whether it makes uprobe_multi links, for the session,
 * which then finds the answer ready; then opens a disabled software event
 * on this thread (the kernel turns the scheduler's perf hooks on while the
 * call blocks) and closes it. */
static void *register_perf_event(void *arg)
{
	struct perf_event_attr attr;
	int fd;

	(void)arg;
	cp_uprobe_multi_supported();
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int start_detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	rc = pthread_create(&thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}

void cp_warmup_start(void)
{
	start_detached(register_perf_event, NULL);
}

void cp_warmup_stop(void)
{
	cp_registrar_warm_stop();
}
