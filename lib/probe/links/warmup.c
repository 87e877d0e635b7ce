/* warmup.c - see warmup.h. */
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "registrar.h"
#include "uprobe_multi.h"
#include "warmup.h"

/* The warm-up's perf event, held open until cp_warmup_events_open:
 * closed at once, it let the hooks go off again mid-start-up where an earlier
 * clockprof's last event had been closed about a second before (the
 * kernel turns them off a second after the last one goes), and the
 * target's task-clock waited 8-14 ms for a grace period of its own. */
static struct {
	pthread_mutex_t lock;
	int fd;
	bool stopped; /* cp_warmup_events_open came: one opened later goes */
} held = { PTHREAD_MUTEX_INITIALIZER, -1, false };

/* Opens a disabled software event on this thread (the kernel turns the
 * scheduler's perf hooks on while the call blocks) and keeps it, unless
 * start-up is over by then or one is kept already. */
static void *register_perf_event(void *arg)
{
	struct perf_event_attr attr;
	int fd;

	(void)arg;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	pthread_mutex_lock(&held.lock);
	if (fd >= 0 && !held.stopped && held.fd < 0) {
		held.fd = fd;
		fd = -1;
	}
	pthread_mutex_unlock(&held.lock);
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

/* Asks the kernel whether it makes uprobe_multi links, for the session,
 * which then finds the answer ready. */
static void *ask_uprobe_multi(void *arg)
{
	(void)arg;
	cp_uprobe_multi_supported();
	return NULL;
}

/* Each on a thread of its own: one after the other, the perf event waited
 * for the question's grace period first. */
void cp_warmup_start(void)
{
	pthread_mutex_lock(&held.lock);
	held.stopped = false;
	pthread_mutex_unlock(&held.lock);
	start_detached(register_perf_event, NULL);
	start_detached(ask_uprobe_multi, NULL);
}

void cp_warmup_events_open(void)
{
	pthread_mutex_lock(&held.lock);
	held.stopped = true;
	if (held.fd >= 0)
		close(held.fd);
	held.fd = -1;
	pthread_mutex_unlock(&held.lock);
}

void cp_warmup_stop(void)
{
	cp_warmup_events_open();
	cp_registrar_warm_stop();
}
