/* uprobe_removal.h - uprobe_multi links removed without waiting for the
 * kernel to free them, and the proof that their breakpoints have left the
 * target's code.
 *
 * Closing a uprobe_multi link's last fd does two things in close(): it
 * takes the breakpoints out of every process (after one RCU grace period,
 * for dup_mmap_sem), then waits for an RCU Tasks Trace and an SRCU grace
 * period before the kernel may free the link. On these VMs the second part
 * took 20-80 ms (measured, make bench), most of clockprof's time beyond its
 * window, while the target already ran unprobed. A link whose last
 * reference is a bpffs pin is released by the kernel's workqueue when the
 * pin is unlinked: the same removal and the same waits, off clockprof's
 * path. The promise that clockprof has returned only once its probes are
 * out of the target is then checked, not assumed: every probed instruction
 * of the target reads again as its file has it.
 *
 * The pin lives in a bpffs mounted in the mount namespace of one
 * short-lived thread: nothing shows in the host's mounts and nothing
 * outlives the thread. Where this cannot be done (no CAP_SYS_ADMIN, no
 * bpffs), the links are closed as before (cp_close_together). */
#ifndef CP_UPROBE_REMOVAL_H
#define CP_UPROBE_REMOVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "uprobe_multi.h"

/* How long the target's code may keep a breakpoint once its removal has
 * begun: far beyond the one grace period the removal waits for; reached
 * only when something else keeps one there (another tool's uprobe on the
 * same instruction). */
#define CP_UPROBE_REMOVAL_TIMEOUT_S 2.0

/* Removes links[0..n) and empties them. Handed to the kernel: returns once
 * the breakpoints of those that probe another process than clockprof have
 * left its code, or after CP_UPROBE_REMOVAL_TIMEOUT_S. Closed instead:
 * returns at once, or once closed when wait is set. Returns the number of
 * probed instructions still holding a breakpoint (0: all gone). */
size_t cp_uprobe_links_remove(struct cp_uprobe_link *links, size_t n, bool wait);

/* The same in two halves, so that the kernel's removal (its grace period)
 * runs while the caller does other work: begin hands the links to the
 * kernel and finds what to check; end closes those that could not be
 * handed over, waits as cp_uprobe_links_remove does, empties the links
 * and frees *r. r is the caller's; links must live until end. */
struct cp_uprobe_removal {
	struct cp_uprobe_link *links;
	size_t n;
	bool wait, any;
	bool *handed;
	void *sites;
};
void cp_uprobe_links_remove_begin(struct cp_uprobe_removal *r, struct cp_uprobe_link *links,
				  size_t n, bool wait);
size_t cp_uprobe_links_remove_end(struct cp_uprobe_removal *r);

#endif
