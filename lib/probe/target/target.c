/* target.c - see target.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id.h"
#include "error.h"
#include "grow.h"
#include "proc_maps.h"
#include "procfs.h"
#include "target.h"
#include "utf8.h"

#define PF_KTHREAD 0x00200000

/* How many arguments end in buf[0..n) (NUL bytes); *last: its last byte. */
static int count_ends(const char *buf, size_t n, char *last)
{
	int ends = 0;

	for (size_t i = 0; i < n; i++)
		ends += buf[i] == '\0';
	if (n)
		*last = buf[n - 1];
	return ends;
}

/* A process that wrote a title over its command line (setproctitle:
 * redis, postgres) zeroes the rest of that area, which then reads as empty
 * arguments it was never given ("redis-server 127.0.0.1:6379" and 73 "").
 * Two or more empty arguments at the end are taken for that padding and
 * dropped (one may be an argument given: prog ''); argc_total is then what
 * is left, as the original count is gone. */
static void drop_title_padding(struct cp_target *t)
{
	int end = t->argc;

	if (t->argc < t->argc_total)
		return; /* cut: its end was not read */
	while (end > 0 && t->argv[end - 1] && !t->argv[end - 1][0])
		end--;
	if (t->argc - end < 2)
		return;
	for (int i = end; i < t->argc; i++) {
		free(t->argv[i]);
		t->argv[i] = NULL;
	}
	t->argc = t->argc_total = end;
	t->cmdline_rewritten = true;
}

void cp_target_cmdline_parse(struct cp_target *t, char *buf, size_t n, bool whole, int argc_total)
{
	char last = '\0';
	int kept = count_ends(buf, n, &last);

	t->argc_total = argc_total;
	/* The last argument may lack its NUL (a process that rewrote its
	 * command line): whole when the file ended inside buf, else cut. */
	if (whole && n && buf[n - 1] != '\0') {
		buf[n++] = '\0';
		kept++;
	}
	if (!(t->argv = calloc((size_t)kept + 1, sizeof(char *))))
		return;
	for (size_t i = 0; t->argc < kept; i += strlen(buf + i) + 1)
		t->argv[t->argc++] = cp_utf8_dup(buf + i);
	drop_title_padding(t);
}

/* The command line, whole arguments up to CP_CMDLINE_KEEP bytes in all:
 * it can be megabytes (ARG_MAX), which run.json has no use for. Every
 * argument is counted (argc_total), so that a cut is known and said. */
static void read_cmdline(pid_t pid, struct cp_target *t)
{
	char path[64], buf[CP_CMDLINE_KEEP + 1], rest[4096], last = '\0';
	size_t n = 0, beyond = 0;
	ssize_t got;
	int fd, ends;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	while (n < CP_CMDLINE_KEEP && (got = read(fd, buf + n, CP_CMDLINE_KEEP - n)) > 0)
		n += (size_t)got;
	ends = count_ends(buf, n, &last);
	while ((got = read(fd, rest, sizeof(rest))) > 0) {
		ends += count_ends(rest, (size_t)got, &last);
		beyond += (size_t)got;
	}
	close(fd);
	cp_target_cmdline_parse(t, buf, n, !beyond, ends + (last != '\0'));
}

/* Permitted capabilities of pid (self for 0) from /proc/PID/status. */
static int cap_permitted(pid_t pid, unsigned long long *caps)
{
	char path[64], line[256];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), pid ? "/proc/%d/status" : "/proc/self/status", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapPrm: %llx", caps) == 1) {
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

/* /proc/PID/exe was refused: say why. Root is refused too when the
 * target holds capabilities that clockprof lacks (the kernel's ptrace
 * access check), as a container's init often does. */
static int access_denied(pid_t pid, struct cp_error *err)
{
	unsigned long long theirs, ours;

	if (geteuid() != 0)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"cannot read /proc/%d/exe: permission denied (run as root, or with CAP_SYS_PTRACE)",
			pid);
	if (!cap_permitted(pid, &theirs) && !cap_permitted(0, &ours) && (theirs & ~ours))
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"cannot inspect process %d even as root: it holds capabilities clockprof lacks (CapPrm %llx, clockprof's %llx), so the kernel refuses access; run clockprof with at least the same capabilities",
			pid, theirs, ours);
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"cannot inspect process %d even as root: the kernel refuses access (a security module such as AppArmor or SELinux, or a process of another user namespace)",
		pid);
}

int cp_target_inspect(pid_t pid, struct cp_target *t, struct cp_error *err)
{
	char path[64], *valid;
	struct cp_proc_stat st;
	ssize_t n;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (pid <= 0)
		return cp_fail(err, CP_EXIT_USAGE, "invalid pid %d", pid);
	if (cp_proc_stat_read(pid, &st))
		return cp_fail(err, CP_EXIT_PROFILE, "no such process %d (check the pid with ps)",
			       pid);
	t->start_time = st.start_time;
	if (st.flags & PF_KTHREAD)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d is a kernel thread: it never reads the clock from user space",
			pid);
	cp_proc_comm(pid, t->comm, sizeof(t->comm));
	if ((valid = cp_utf8_dup(t->comm))) { /* 15 bytes: fits when tripled */
		snprintf(t->comm, sizeof(t->comm), "%s", valid);
		free(valid);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	if (n < 0 && (errno == EACCES || errno == EPERM))
		return access_denied(pid, err);
	if (n < 0 && cp_proc_leaderless(pid))
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d's main thread has exited (pthread_exit) while others run on: clockprof attaches to a process only while its main thread lives (run it under clockprof run, or attach before)",
			pid);
	if (n < 0)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d has no executable (exited, or a zombie)", pid);
	t->exe[n] = '\0';
	snprintf(t->exe_access, sizeof(t->exe_access), "/proc/%d/exe", pid);
	if (cp_proc_runs_32_bit(pid))
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d is a 32-bit program: clockprof counts x86-64 programs only (the vDSO patch's code is x86-64; uprobes counted each of its vDSO reads twice and none of its clock syscalls)",
			pid);
	read_cmdline(pid, t);
	cp_proc_execfn(pid, t->exec_path, sizeof(t->exec_path));
	if (cp_proc_maps_find_vdso(pid, &t->vdso_start, &t->vdso_end))
		t->vdso_start = t->vdso_end = 0;
	return 0;
}

void cp_target_identify(struct cp_target *t)
{
	cp_build_id_of_path(t->exe_access, t->build_id, sizeof(t->build_id));
}

void cp_target_release(struct cp_target *t)
{
	for (int i = 0; t->argv && i < t->argc; i++)
		free(t->argv[i]);
	free(t->argv);
	t->argv = NULL;
	t->argc = 0;
}

static int module_matches(const char *mapped, const char *file)
{
	const char *base = strrchr(mapped, '/');
	size_t len = strlen(file);

	base = base ? base + 1 : mapped;
	if (!strcmp(base, file))
		return 1;
	return !strncmp(base, file, len) && (base[len] == '.' || base[len] == '-');
}

/* FILE with a '/' but not absolute (./server, build/libfoo.so): a path
 * from the target's working directory, as a shell there would take it. */
static int relative_file(pid_t pid, const char *file, char *path, size_t size, char *shown,
			 size_t shown_size, struct cp_error *err)
{
	char cwd_link[64], cwd[PATH_MAX];
	ssize_t n;

	snprintf(cwd_link, sizeof(cwd_link), "/proc/%d/cwd", pid);
	n = readlink(cwd_link, cwd, sizeof(cwd) - 1);
	if (n < 0)
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read %s: %s", cwd_link,
			       strerror(errno));
	cwd[n] = '\0';
	while (!strncmp(file, "./", 2))
		file += 2;
	snprintf(path, size, "%s/%s", cwd_link, file);
	snprintf(shown, shown_size, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", file);
	if (access(path, R_OK) != 0)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: no such file in the target's working directory (%s)", file,
			       cwd);
	return 0;
}

int cp_target_resolve_file(pid_t pid, const char *file, char *path, size_t size, char *shown,
			   size_t shown_size, struct cp_error *err)
{
	struct cp_proc_map *maps;
	size_t n;

	if (file[0] == '/') {
		snprintf(path, size, "/proc/%d/root%s", pid, file);
		snprintf(shown, shown_size, "%s", file);
		if (access(path, R_OK) != 0)
			return cp_fail(err, CP_EXIT_USAGE,
				       "%s: no such file in the target's file system", file);
		return 0;
	}
	if (strchr(file, '/'))
		return relative_file(pid, file, path, size, shown, shown_size, err);
	if (cp_proc_maps_read(pid, &maps, &n))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read /proc/%d/maps", pid);
	for (size_t i = 0; i < n; i++) {
		char mapped[PATH_MAX + 16];

		if (maps[i].path[0] != '/')
			continue;
		cp_proc_map_shown_path(&maps[i], mapped, sizeof(mapped));
		if (module_matches(mapped, file)) {
			snprintf(path, size, "/proc/%d/root%s", pid, mapped);
			snprintf(shown, shown_size, "%s", mapped);
			free(maps);
			return 0;
		}
	}
	free(maps);
	return cp_fail(err, CP_EXIT_USAGE,
		       "no module '%s' is mapped by process %d; give an absolute path", file, pid);
}
