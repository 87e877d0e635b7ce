/* procfs.c - see procfs.h. */
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "grow.h"
#include "procfs.h"

ssize_t cp_proc_read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1 &&
	       (n = read(fd, buf + total, size - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total;
}

ssize_t cp_proc_comm(pid_t pid, char *buf, size_t size)
{
	char path[64], comm[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((n = cp_proc_read_text(path, comm, sizeof(comm))) <= 0)
		return -1;
	comm[strcspn(comm, "\n")] = 0;
	return snprintf(buf, size, "%s", comm);
}

/* Where AT_EXECFN's string is in pid's memory, from /proc/PID/auxv (a
 * 64-bit process's: type and value pairs of 8 bytes); 0 when not found. */
static uint64_t execfn_address(pid_t pid)
{
	char path[64];
	uint64_t aux[2 * 64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, aux, sizeof(aux));
	close(fd);
	for (ssize_t i = 0; n > 0 && (i + 2) * 8 <= n && aux[i] != AT_NULL; i += 2)
		if (aux[i] == AT_EXECFN)
			return aux[i + 1];
	return 0;
}

ssize_t cp_proc_execfn(pid_t pid, char *buf, size_t size)
{
	uint64_t addr = execfn_address(pid);
	char path[64];
	ssize_t n = -1;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if (!addr || size < 2 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	/* The string ends near the top of the stack: a read may stop short
	 * there, and must hold its NUL. */
	n = pread(fd, buf, size - 1, (off_t)addr);
	close(fd);
	if (n <= 0 || !memchr(buf, '\0', (size_t)n)) {
		buf[0] = '\0';
		return -1;
	}
	return (ssize_t)strlen(buf);
}

/* A stat file's fields (a process's or a thread's); -1 when it is gone. */
static int stat_read_at(const char *path, struct cp_proc_stat *st)
{
	char buf[4096], *p;

	if (cp_proc_read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* comm may hold spaces and parentheses: fields resume after the
	 * last ')'; p + 2 is field 3 (state). */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2,
		   "%c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %lu %lu "
		   "%*d %*d %*d %*d %*d %*d %llu",
		   &st->state, &st->ppid, &st->flags, &st->utime, &st->stime, &st->start_time) != 6)
		return -1;
	return 0;
}

int cp_proc_stat_read(pid_t pid, struct cp_proc_stat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return stat_read_at(path, st);
}

bool cp_proc_status_field(pid_t pid, pid_t tid, const char *key, char *val, size_t size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			snprintf(val, size, "%s", line + klen + 1);
			found = true;
		}
	fclose(f);
	return found;
}

int cp_proc_auxv(pid_t pid, uint64_t type, uint64_t *value)
{
	uint64_t auxv[2 * 64];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, auxv, sizeof(auxv));
	close(fd);
	for (ssize_t i = 0; n > 0 && (i + 2) * 8 <= n && auxv[i] != AT_NULL; i += 2)
		if (auxv[i] == type) {
			*value = auxv[i + 1];
			return 0;
		}
	return -1;
}

int64_t cp_proc_boottime_offset_ns(void)
{
	char buf[256], *at;
	long long sec = 0, nsec = 0;

	if (cp_proc_read_text("/proc/self/timens_offsets", buf, sizeof(buf)) <= 0 ||
	    !(at = strstr(buf, "boottime")) || sscanf(at, "boottime %lld %lld", &sec, &nsec) != 2)
		return 0;
	return (int64_t)sec * 1000000000 + nsec;
}

char cp_proc_thread_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if ((n = cp_proc_read_text(path, buf, sizeof(buf))) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

bool cp_proc_runs_32_bit(pid_t pid)
{
	unsigned char ident[EI_NIDENT] = { 0 };
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, ident, sizeof(ident));
		close(fd);
	}
	return n == EI_NIDENT && ident[EI_CLASS] == ELFCLASS32;
}

bool cp_proc_thread_alive(pid_t pid, pid_t tid)
{
	char state = cp_proc_thread_state(pid, tid);

	return state && state != 'Z' && state != 'X';
}

static long live_thread(pid_t pid, pid_t tid, void *unused)
{
	(void)unused;
	return tid != pid && cp_proc_thread_alive(pid, tid) ? tid : 0;
}

pid_t cp_proc_live_tid(pid_t pid)
{
	struct cp_proc_stat st;
	long tid;

	if (cp_proc_stat_read(pid, &st) == 0 && st.state == 'Z' &&
	    (tid = cp_proc_thread_find(pid, live_thread, NULL)) > 0)
		return (pid_t)tid;
	return pid;
}

/* Whether thread tid runs on: alive, not exiting (PF_EXITING) and not
 * killed (SIGKILL pending: its process's exit_group or a fatal signal
 * reached it, as one blocked in D state at the exit, an fsync's writeback,
 * has until it wakes). */
static long thread_runs_on(pid_t pid, pid_t tid, void *unused)
{
	struct cp_proc_stat st;
	char path[96], pending[32];

	(void)unused;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (tid == pid || stat_read_at(path, &st) || st.state == 'Z' || st.state == 'X' ||
	    (st.flags & 0x4) || /* PF_EXITING */
	    !cp_proc_status_field(pid, tid, "SigPnd", pending, sizeof(pending)))
		return 0;
	return strtoull(pending, NULL, 16) & (1ULL << (SIGKILL - 1)) ? 0 : tid;
}

/* A killed thread takes its SIGKILL off its pending set a moment before
 * it marks itself exiting: preempted in between (a loaded host), it
 * looked as if it ran on, and a process on its way out was said
 * leaderless. It must run on at LEADERLESS_LOOKS looks, LEADERLESS_LOOK_US
 * apart. */
#define LEADERLESS_LOOKS 4
#define LEADERLESS_LOOK_US 5000

static bool leaderless_now(pid_t pid)
{
	struct cp_proc_stat st;

	return cp_proc_stat_read(pid, &st) == 0 && st.state == 'Z' &&
	       cp_proc_thread_find(pid, thread_runs_on, NULL) > 0;
}

bool cp_proc_leaderless(pid_t pid)
{
	bool yes = leaderless_now(pid);

	for (int look = 1; yes && look < LEADERLESS_LOOKS; look++) {
		usleep(LEADERLESS_LOOK_US);
		yes = leaderless_now(pid);
	}
	return yes;
}

bool cp_proc_alive(pid_t pid)
{
	return cp_proc_thread_alive(pid, pid) || cp_proc_live_tid(pid) != pid;
}

void cp_proc_live_dir(pid_t pid, char *buf, size_t size)
{
	pid_t tid = cp_proc_live_tid(pid);

	if (tid != pid)
		snprintf(buf, size, "/proc/%d/task/%d", (int)pid, (int)tid);
	else
		snprintf(buf, size, "/proc/%d", (int)pid);
}

pid_t cp_proc_stopped_thread(pid_t pid)
{
	pid_t *tids = NULL, stopped = 0;
	size_t n = 0;

	if (cp_proc_threads(pid, &tids, &n))
		return 0;
	for (size_t i = 0; i < n && !stopped; i++)
		if (cp_proc_thread_state(pid, tids[i]) == 'T')
			stopped = tids[i];
	free(tids);
	return stopped;
}

int cp_proc_threads(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	size_t cap = 16;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	*n = 0;
	*tids = malloc(cap * sizeof(pid_t));
	while (*tids && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (cp_grow(tids, &cap, *n + 1, sizeof(**tids)))
			break;
		(*tids)[(*n)++] = atoi(e->d_name);
	}
	closedir(d);
	return *tids ? 0 : -1;
}

long cp_proc_thread_find(pid_t pid, long (*fn)(pid_t pid, pid_t tid, void *arg), void *arg)
{
	pid_t *tids;
	size_t n;
	long found = 0;

	if (cp_proc_threads(pid, &tids, &n))
		return 0;
	for (size_t i = 0; !found && i < n; i++)
		found = fn(pid, tids[i], arg);
	free(tids);
	return found;
}

bool cp_tid_in(const pid_t *tids, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* Whether thread tid of pid has a child now; 1 when it cannot be told. */
static long thread_has_children(pid_t pid, pid_t tid, void *arg)
{
	char path[96];
	FILE *f;
	bool any;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	if (!(f = fopen(path, "re")))
		return 1; /* no such file in this kernel: scan */
	any = fgetc(f) != EOF;
	fclose(f);
	return any;
}

bool cp_proc_has_children(pid_t pid)
{
	return cp_proc_thread_find(pid, thread_has_children, NULL) != 0;
}

long cp_proc_last_pid(void)
{
	char buf[32];

	return cp_proc_read_text("/proc/sys/kernel/ns_last_pid", buf, sizeof(buf)) > 0 ? atol(buf) :
											 -1;
}

/* Whether the kernel gave out p after pid `after` and up to `last`,
 * counting round past pid_max as it does; after < 0: any pid. */
static bool given_between(pid_t p, long after, long last)
{
	if (after < 0)
		return true;
	return after <= last ? p > after && p <= last : p > after || p <= last;
}

/* The processes listed in /proc now (malloc'd, *n of them). */
static int list_pids(pid_t **out, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	*out = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		pid_t p = (pid_t)atoi(e->d_name);

		if (p > 0 && !cp_grow(out, &cap, *n + 1, sizeof(**out)))
			(*out)[(*n)++] = p;
	}
	closedir(d);
	return 0;
}

int cp_proc_descendants_born(pid_t pid, long after, pid_t **out, size_t *n)
{
	struct {
		pid_t pid, ppid;
	} *all = NULL;
	size_t nall = 0, cap = 0, ncap = 0, nlisted;
	pid_t *listed;
	long last = 0;

	*out = NULL;
	*n = 0;
	if (list_pids(&listed, &nlisted))
		return -1;
	/* read once they are listed: each has a pid given out by then */
	if (after >= 0 && (last = cp_proc_last_pid()) < 0)
		after = -1;
	for (size_t i = 0; i < nlisted; i++) {
		struct cp_proc_stat st;

		if (given_between(listed[i], after, last) &&
		    cp_proc_stat_read(listed[i], &st) == 0 &&
		    !cp_grow(&all, &cap, nall + 1, sizeof(*all)))
			all[nall++] = (typeof(*all)){ listed[i], st.ppid };
	}
	free(listed);
	/* breadth first: each found process's children join the list */
	for (size_t i = 0; i <= *n; i++) {
		pid_t parent = i ? (*out)[i - 1] : pid;

		for (size_t j = 0; j < nall; j++)
			if (all[j].ppid == parent && !cp_grow(out, &ncap, *n + 1, sizeof(**out)))
				(*out)[(*n)++] = all[j].pid;
	}
	free(all);
	return 0;
}

int cp_proc_descendants(pid_t pid, pid_t **out, size_t *n)
{
	return cp_proc_descendants_born(pid, -1, out, n);
}
