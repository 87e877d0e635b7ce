/* uprobe_warmup.h - the first uprobe of a start-up registered while the
 * BPF programs are still being loaded.
 *
 * The kernel registers every uprobe with dup_mmap_sem held for writing, a
 * per-CPU rw-semaphore whose writers first wait for an RCU grace period
 * unless another writer came within about one grace period before (its
 * rcu_sync stays "passed" that long). So the first uprobe clockprof
 * placed waited a whole grace period (7-12 ms on these VMs, measured),
 * after the programs it needs had loaded, and the others placed right
 * after it did not wait at all. A uprobe with no program (a perf event on
 * a function of clockprof's own that is never called), registered from a
 * thread of its own as soon as the session starts, waits that grace
 * period while the programs load instead: the target's probes placed
 * after the load find the semaphore's grace period passed. It probes
 * nothing of the target and counts nothing. */
#ifndef CP_UPROBE_WARMUP_H
#define CP_UPROBE_WARMUP_H

#include <pthread.h>
#include <stdbool.h>

struct cp_uprobe_warmup {
	pthread_t thread;
	bool started;
	int fd;		/* the perf event, -1 when it could not be opened */
};

/* Registers the warm-up uprobe from a new thread; best effort (nothing
 * happens where it cannot: start-up is only slower). */
void cp_uprobe_warmup_start(struct cp_uprobe_warmup *w);

/* Once the target's probes are placed: removes the warm-up uprobe without
 * waiting for its removal's grace period (it finishes in the background;
 * clockprof's exit waits for it, well within any window). */
void cp_uprobe_warmup_end(struct cp_uprobe_warmup *w);

#endif
