/* foreign_uprobes.c - see foreign_uprobes.h. */
#include <bpf/bpf.h>
#include <dirent.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "foreign_uprobes.h"
#include "grow.h"
#include "monotonic.h"
#include "procfs.h"

/* One uprobe another process holds: its file, offset and holder. */
struct foreign {
	dev_t dev;
	ino_t ino;
	uint64_t offset;
	pid_t pid;
};

static struct {
	double at; /* when listed; 0: never */
	struct foreign *v;
	size_t n, cap;
} listed;

/* The uprobe behind pid's file descriptor fd, if it is one with a BPF
 * program, added to the list. Its path is the holder's: looked up through
 * its root. */
static void add_fd(pid_t pid, int fd)
{
	char path[PATH_MAX], rooted[PATH_MAX + 32];
	__u32 len = sizeof(path), prog_id, type;
	__u64 offset, addr;
	struct stat st;

	if (bpf_task_fd_query(pid, fd, 0, path, &len, &prog_id, &type, &offset, &addr) ||
	    (type != BPF_FD_TYPE_UPROBE && type != BPF_FD_TYPE_URETPROBE))
		return;
	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, path);
	if ((stat(rooted, &st) && stat(path, &st)) ||
	    cp_grow(&listed.v, &listed.cap, listed.n + 1, sizeof(*listed.v)))
		return;
	listed.v[listed.n++] = (struct foreign){ st.st_dev, st.st_ino, offset, pid };
}

/* pid's perf-event file descriptors. */
static void add_process(pid_t pid)
{
	char dir[32], link[64], target[64];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%.16s", dir, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = 0, !strcmp(target, "anon_inode:[perf_event]")))
			add_fd(pid, atoi(e->d_name));
	}
	closedir(d);
}

static void list_all(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc");

	listed.n = 0;
	listed.at = cp_monotonic_s();
	while (d && (e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid > 0 && pid != getpid())
			add_process(pid);
	}
	if (d)
		closedir(d);
}

int cp_foreign_uprobe_in(const struct stat *st, uint64_t lo, uint64_t hi, char *who, size_t wholen)
{
	if (!listed.at || cp_monotonic_s() - listed.at > 1.0)
		list_all();
	for (size_t i = 0; i < listed.n; i++) {
		const struct foreign *f = &listed.v[i];
		char comm[32] = "?";

		if (f->dev != st->st_dev || f->ino != st->st_ino || f->offset < lo ||
		    f->offset >= hi)
			continue;
		cp_proc_comm(f->pid, comm, sizeof(comm));
		snprintf(who, wholen, "process %d (%s)", (int)f->pid, comm);
		return 1;
	}
	return 0;
}
