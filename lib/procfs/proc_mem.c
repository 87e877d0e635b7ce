/* proc_mem.c - reading and writing a process's memory through
 * /proc/PID/mem (and process_vm_readv/writev), and pinning the image a
 * write may reach. A process whose main thread has exited shows no
 * memory there: it is reached through a live thread's instead
 * (cp_proc_live_tid).
 *
 * Each access opens /proc/PID/mem anew, and an open reaches the program
 * the pid runs at that instant. A write meant for a program that has
 * since exec()ed another would land in the new one at the same address:
 * without address randomization (setarch -R, a debugger,
 * kernel.randomize_va_space=0) its stack, its heap or its vDSO lie where
 * the old program's did. A pin opens /proc/PID/mem once; the open file
 * holds the memory of the program run then, and the kernel refuses every
 * access through it once that program is gone (an exec, an exit, the pid
 * given to another process). Writes go through the pin named (a
 * patch's own), else a pid's newest pin; reads, which harm nothing, open
 * anew, so that what follows a program into its exec reads the new
 * one. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procfs.h"

/* Pins at once: a target, its followed processes and the self-test's
 * child; one over this is refused (its writes open anew, as unpinned). */
#define PINS 256

struct pin {
	pid_t pid;	/* 0: a free entry */
	int fd;		/* /proc/PID/mem, read-write */
	unsigned seq;	/* the newest of a pid's pins is used */
	unsigned users; /* accesses through fd in flight */
	bool ended;	/* unpinned: closed once no access uses it */
};

static struct pin pins[PINS];
static unsigned pin_seq;
static pthread_mutex_t pins_lock = PTHREAD_MUTEX_INITIALIZER;

/* The pin to write pid through, taken (users); NULL: none. Locked. */
static struct pin *take_newest(pid_t pid)
{
	struct pin *best = NULL;

	for (size_t i = 0; i < PINS; i++)
		if (pins[i].pid == pid && !pins[i].ended && (!best || pins[i].seq > best->seq))
			best = &pins[i];
	if (best)
		best->users++;
	return best;
}

/* The token that names no pin but pid's newest (cp_proc_mem_write). */
#define NEWEST_PIN (-2)

/* The pin to write pid through, taken: token's, if it is pid's (or
 * NEWEST_PIN's); NULL: none. */
static struct pin *take(int token, pid_t pid)
{
	struct pin *p = NULL;

	pthread_mutex_lock(&pins_lock);
	if (token == NEWEST_PIN) {
		p = take_newest(pid);
	} else if (token >= 0 && token < PINS && pins[token].pid == pid && !pins[token].ended) {
		p = &pins[token];
		p->users++;
	}
	pthread_mutex_unlock(&pins_lock);
	return p;
}

/* Closes an ended pin no access uses. Locked. */
static void close_if_done(struct pin *p)
{
	if (!p->ended || p->users)
		return;
	close(p->fd);
	*p = (struct pin){ 0 };
}

int cp_proc_mem_pin(pid_t pid)
{
	char path[64];
	int fd, token = -1;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if (pid <= 0 || (fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return -1;
	pthread_mutex_lock(&pins_lock);
	for (int i = 0; i < PINS && token < 0; i++)
		if (!pins[i].pid) {
			pins[i] = (struct pin){ .pid = pid, .fd = fd, .seq = ++pin_seq };
			token = i;
		}
	pthread_mutex_unlock(&pins_lock);
	if (token < 0)
		close(fd);
	return token;
}

void cp_proc_mem_unpin(int token)
{
	if (token < 0 || token >= PINS)
		return;
	pthread_mutex_lock(&pins_lock);
	if (pins[token].pid) {
		pins[token].ended = true;
		close_if_done(&pins[token]);
	}
	pthread_mutex_unlock(&pins_lock);
}

static ssize_t io_at(const char *dir, uint64_t addr, void *buf, size_t len, bool write)
{
	char path[96];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/mem", dir);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n;
}

/* One access through a fresh open of /proc/PID/mem, or of a live
 * thread's when the main thread's has no memory (it exited: its mem will
 * not open, ESRCH). A bad address (EIO) asks nothing more. */
static ssize_t io_fresh(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	char dir[64];
	ssize_t n;
	pid_t tid;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	n = io_at(dir, addr, buf, len, write);
	if (n > 0 || len == 0 || (n < 0 && errno != ESRCH) || (tid = cp_proc_live_tid(pid)) == pid)
		return n;
	snprintf(dir, sizeof(dir), "/proc/%d/task/%d", (int)pid, (int)tid);
	return io_at(dir, addr, buf, len, write);
}

typedef ssize_t vm_io_fn(pid_t, const struct iovec *, unsigned long, const struct iovec *,
			 unsigned long, unsigned long);

static ssize_t vm_io(vm_io_fn *io, pid_t pid, const struct iovec *local, unsigned long nlocal,
		     const struct iovec *remote, unsigned long nremote)
{
	ssize_t n = io(pid, local, nlocal, remote, nremote, 0);
	pid_t tid;

	if (n < 0 && errno == ESRCH && (tid = cp_proc_live_tid(pid)) != pid)
		n = io(tid, local, nlocal, remote, nremote, 0);
	return n;
}

ssize_t cp_proc_vm_read(pid_t pid, const struct iovec *local, unsigned long nlocal,
			const struct iovec *remote, unsigned long nremote)
{
	return vm_io(process_vm_readv, pid, local, nlocal, remote, nremote);
}

ssize_t cp_proc_vm_write(pid_t pid, const struct iovec *local, unsigned long nlocal,
			 const struct iovec *remote, unsigned long nremote)
{
	return vm_io(process_vm_writev, pid, local, nlocal, remote, nremote);
}

int cp_proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return io_fresh(pid, addr, buf, len, false) == (ssize_t)len ? 0 : -1;
}

int cp_proc_exec_random(pid_t pid, uint8_t out[16])
{
	uint64_t at;

	return cp_proc_auxv(pid, AT_RANDOM, &at) ? -1 : cp_proc_mem_read(pid, at, out, 16);
}

int cp_proc_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	return cp_proc_mem_write_pinned(NEWEST_PIN, pid, addr, buf, len);
}

int cp_proc_mem_write_pinned(int token, pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct pin *p = take(token, pid);
	ssize_t n;

	if (!p)
		return io_fresh(pid, addr, (void *)buf, len, true) == (ssize_t)len ? 0 : -1;
	n = pwrite(p->fd, buf, len, (off_t)addr);
	pthread_mutex_lock(&pins_lock);
	p->users--;
	close_if_done(p);
	pthread_mutex_unlock(&pins_lock);
	return n == (ssize_t)len ? 0 : -1;
}
