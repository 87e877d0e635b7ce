/* warmup.c - see warmup.h. */
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "own_code.h"
#include "uprobe_multi.h"
#include "uprobe_removal.h"
#include "warmup.h"

/* Where the warm-up uprobe sits: never called, so it never fires. */
__attribute__((noinline)) static void never_called(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Until cp_warmup_stop (or WARM_MAX_S), the uprobe is placed again every
 * WARM_EVERY_US: measured here, a placement within 16 ms of the last
 * writer took 0.02-0.15 ms, one 24-50 ms after it 9-15 ms (the grace
 * period). The vDSO patch's programs take ~20 ms to load (their
 * verifier's ~12 ms with the self-test's child beside it): its first
 * uprobe in the target came after that gap and waited for a grace period
 * on the main thread, where the uprobe mechanism's did not. Each link is
 * handed back as soon as it is placed (its removal is a writer too):
 * links kept until the end, one more on the same instruction every 4 ms,
 * held back the following of a launched command's exec by 0.5-1 s (60
 * of them; 2 or 8 did not). */
#define WARM_EVERY_US 4000
#define WARM_MAX_S 1.0

static volatile int warm_stop;

void cp_warmup_stop(void)
{
	__atomic_store_n(&warm_stop, 1, __ATOMIC_RELEASE);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Places the uprobe (the kernel registers it while the call blocks, grace
 * period included) and hands it back to the kernel at once (it is on our
 * own code: nothing to wait for), again while start-up goes on (above);
 * its program loaded here too, so that the main thread goes straight on. Nothing is asked first: a kernel without
 * uprobe_multi links refuses this one at once. */
static void *register_uprobe(void *arg)
{
	struct cp_uprobe_link link;
	char path[PATH_MAX];
	uint64_t offset;
	double until = now_s() + WARM_MAX_S;
	int prog;

	(void)arg;
	if (cp_own_code_offset((const void *)never_called, path, sizeof(path), &offset) ||
	    (prog = cp_uprobe_multi_noop_prog()) < 0)
		return NULL;
	while (cp_uprobe_link_attach(&link, prog, getpid(), false, path, &offset, NULL, 1) == 0) {
		cp_uprobe_links_remove(&link, 1, false);
		if (__atomic_load_n(&warm_stop, __ATOMIC_ACQUIRE) || now_s() >= until)
			break;
		usleep(WARM_EVERY_US);
	}
	close(prog);
	return NULL;
}

/* Asks the kernel whether it makes uprobe_multi links, for the session,
 * which then finds the answer ready; then opens a disabled software event
 * on this thread (the kernel turns the scheduler's perf hooks on while the
 * call blocks) and closes it. The question comes first here, not on the
 * uprobe's thread: the first uprobe is needed before the first counter. */
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
	start_detached(register_uprobe, NULL);
	start_detached(register_perf_event, NULL);
}
