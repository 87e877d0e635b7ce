/* uprobe_removal.c - see uprobe_removal.h. */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "monotonic.h"
#include "proc_maps.h"
#include "uprobe_removal.h"

/* One probed instruction in a process's code, and the byte its file has
 * there: the breakpoint has left once the process reads that byte again. */
struct site {
	pid_t pid;
	uint64_t addr;
	uint8_t byte;
	bool gone;
};

struct sites {
	struct site *v;
	size_t n, cap;
};

static int add_site(struct sites *s, pid_t pid, uint64_t addr, uint8_t byte)
{
	if (cp_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -1;
	s->v[s->n++] = (struct site){ .pid = pid, .addr = addr, .byte = byte };
	return 0;
}

/* Where l's offsets sit in the code l->pid maps from l's file now (a file
 * mapped twice: both places), found by device and inode as the kernel
 * placed them. An offset the process no longer maps has nothing to check. */
static void add_link_sites(struct sites *s, const struct cp_uprobe_link *l,
			   const struct cp_proc_map *maps, size_t nmaps)
{
	struct stat st;
	int fd = open(l->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0) {
		for (size_t i = 0; i < nmaps; i++) {
			const struct cp_proc_map *m = &maps[i];

			if (m->perms[2] != 'x' || m->ino != st.st_ino ||
			    m->dev_major != major(st.st_dev) || m->dev_minor != minor(st.st_dev))
				continue;
			for (size_t k = 0; k < l->n; k++) {
				uint64_t off = l->offsets[k];
				uint8_t byte;

				if (off < m->offset || off - m->offset >= m->end - m->start ||
				    pread(fd, &byte, 1, (off_t)off) != 1)
					continue;
				add_site(s, l->pid, m->start + (off - m->offset), byte);
			}
		}
	}
	close(fd);
}

/* The probed instructions of every handed-over link in another process
 * than ours (clockprof's own code is not the target's). Read from the maps
 * and the files only, so it may run while the kernel removes them. */
static void collect_sites(struct sites *s, const struct cp_uprobe_link *links, size_t n,
			  const bool *handed)
{
	struct cp_proc_map *maps = NULL;
	size_t nmaps = 0;
	pid_t mapped = 0, self = getpid();

	for (size_t i = 0; i < n; i++) {
		if (!handed[i] || links[i].pid == self || links[i].pid <= 0)
			continue;
		if (links[i].pid != mapped) {
			free(maps);
			maps = NULL;
			nmaps = 0;
			mapped = links[i].pid;
			if (cp_proc_maps_read(mapped, &maps, &nmaps))
				continue; /* gone: nothing of it left to check */
		}
		add_link_sites(s, &links[i], maps, nmaps);
	}
	free(maps);
}

/* Marks the sites whose process reads the file's byte again, or no longer
 * maps it (or has exited). Returns how many still hold a breakpoint. It
 * polls, so /proc/PID/mem is opened once a round, not once a byte as
 * cp_proc_mem_read does. */
static size_t check_sites(struct sites *s)
{
	size_t left = 0;
	pid_t open_pid = 0;
	int mem = -1;

	for (size_t i = 0; i < s->n; i++) {
		struct site *t = &s->v[i];
		uint8_t byte;

		if (t->gone)
			continue;
		if (t->pid != open_pid) {
			char path[64];

			if (mem >= 0)
				close(mem);
			snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
			mem = open(path, O_RDONLY | O_CLOEXEC);
			open_pid = t->pid;
		}
		t->gone = mem < 0 || pread(mem, &byte, 1, (off_t)t->addr) != 1 || byte == t->byte;
		left += !t->gone;
	}
	if (mem >= 0)
		close(mem);
	return left;
}

/* Polls until every site is gone or the timeout passes; the remainder. */
static size_t wait_sites_gone(struct sites *s)
{
	const struct timespec pause = { .tv_nsec = 200 * 1000 };
	double deadline = cp_monotonic_s() + CP_UPROBE_REMOVAL_TIMEOUT_S;
	size_t left;

	while ((left = check_sites(s)) > 0 && cp_monotonic_s() < deadline)
		nanosleep(&pause, NULL);
	return left;
}

struct handover {
	struct cp_uprobe_link *links;
	size_t n;
	bool *handed; /* n of them */
	bool any;
};

/* Where the private bpffs goes: any directory will do, since the mount is
 * seen by the handing thread only (not "/": a path is looked up from
 * beneath a mount on the root). */
static const char *const pin_dirs[] = { "/sys/fs/bpf", "/tmp", "/dev" };

/* Runs on a thread of its own, which alone sees the namespace and the
 * bpffs it makes: each link pinned, its fd closed (the pin now holds the
 * last reference) and the pin unlinked, which hands the release to the
 * kernel's workqueue. Links it could not hand over keep their fd. */
static void *hand_over(void *arg)
{
	struct handover *h = arg;
	const char *dir = NULL;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return NULL;
	for (size_t i = 0; !dir && i < sizeof(pin_dirs) / sizeof(pin_dirs[0]); i++)
		if (mount("bpf", pin_dirs[i], "bpf", 0, NULL) == 0)
			dir = pin_dirs[i];
	if (!dir)
		return NULL;
	for (size_t i = 0; i < h->n; i++) {
		char pin[PATH_MAX];

		if (h->links[i].fd < 0)
			continue;
		snprintf(pin, sizeof(pin), "%s/clockprof-link-%zu", dir, i);
		if (bpf_obj_pin(h->links[i].fd, pin))
			continue;
		close(h->links[i].fd);
		h->links[i].fd = -1;
		unlink(pin);
		h->handed[i] = h->any = true;
	}
	umount2(dir, MNT_DETACH);
	return NULL;
}

/* Closes what is left of links[0..n) as before: together, in threads. */
static void close_rest(struct cp_uprobe_link *links, size_t n, bool wait)
{
	int *fds = calloc(n ? n : 1, sizeof(*fds));
	size_t nfds = 0;

	for (size_t i = 0; i < n; i++) {
		if (links[i].fd < 0)
			continue;
		if (fds)
			fds[nfds++] = links[i].fd;
		else
			close(links[i].fd);
		links[i].fd = -1;
	}
	cp_close_together(fds, nfds, wait);
	free(fds);
}

void cp_uprobe_links_remove_begin(struct cp_uprobe_removal *r, struct cp_uprobe_link *links,
				  size_t n, bool wait)
{
	struct handover h = { .links = links, .n = n };
	pthread_t thread;

	*r = (struct cp_uprobe_removal){ .links = links, .n = n, .wait = wait };
	if (!n)
		return;
	h.handed = r->handed = calloc(n, sizeof(*h.handed));
	if (h.handed && pthread_create(&thread, NULL, hand_over, &h) == 0)
		pthread_join(thread, NULL);
	r->any = h.any;
	/* The kernel waits for a grace period before it takes the first
	 * breakpoint out: what to check is found meanwhile. */
	if (r->any && (r->sites = calloc(1, sizeof(struct sites))))
		collect_sites(r->sites, links, n, r->handed);
}

size_t cp_uprobe_links_remove_end(struct cp_uprobe_removal *r)
{
	struct sites *sites = r->sites;
	size_t left = 0;

	if (!r->n)
		return 0;
	close_rest(r->links, r->n, r->wait);
	if (sites) {
		left = wait_sites_gone(sites);
		free(sites->v);
		free(sites);
	}
	free(r->handed);
	for (size_t i = 0; i < r->n; i++)
		cp_uprobe_link_forget(&r->links[i]);
	*r = (struct cp_uprobe_removal){ 0 };
	return left;
}

size_t cp_uprobe_links_remove(struct cp_uprobe_link *links, size_t n, bool wait)
{
	struct cp_uprobe_removal r;

	cp_uprobe_links_remove_begin(&r, links, n, wait);
	return cp_uprobe_links_remove_end(&r);
}
