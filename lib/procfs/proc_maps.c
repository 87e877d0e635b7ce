/* proc_maps.c - see proc_maps.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "grow.h"
#include "proc_maps.h"
#include "procfs.h"

int cp_proc_map_parse(char *line, struct cp_proc_map *m)
{
	unsigned long long start, end, off, ino;
	int n = 0;
	char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, m->perms, &off,
		   &m->dev_major, &m->dev_minor, &ino, &n) < 7)
		return -1;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->ino = ino;
	path = line + n;
	len = strlen(path);
	while (len && (path[len - 1] == '\n' || path[len - 1] == ' '))
		path[--len] = '\0';
	m->deleted = len > 10 && strcmp(path + len - 10, " (deleted)") == 0;
	if (m->deleted)
		path[len - 10] = '\0';
	m->path = path;
	return 0;
}

/* The whole text of a maps file, NUL-terminated, *len bytes before the
 * NUL (malloc'd); NULL when it cannot be opened. A read that fails ends
 * the text, as the end of the file would. */
static char *maps_file_text(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n = 0;
	ssize_t got = 1;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	while (got > 0) {
		if (cp_grow(&buf, &cap, n + 4096 + 1, 1)) {
			free(buf);
			close(fd);
			return NULL;
		}
		if ((got = read(fd, buf + n, cap - n - 1)) > 0)
			n += (size_t)got;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The maps file that shows pid's memory when its own reads empty: a
 * live thread's, when its main thread has exited (cp_proc_live_dir).
 * False when there is none other than its own. Asked only then: the
 * common read costs nothing more. */
static bool live_maps_path(pid_t pid, char *path, size_t size)
{
	pid_t tid = cp_proc_live_tid(pid);

	snprintf(path, size, "/proc/%d/task/%d/maps", (int)pid, (int)tid);
	return tid != pid;
}

/* The whole text of pid's memory map (maps_file_text). */
static char *maps_text(pid_t pid, size_t *len)
{
	char path[96], *text;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	text = maps_file_text(path, len);
	if (text && *len == 0 && live_maps_path(pid, path, sizeof(path))) {
		free(text);
		text = maps_file_text(path, len);
	}
	return text;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (const char *p = text; *p; n++) {
		const char *nl = strchr(p, '\n');

		p = nl ? nl + 1 : p + strlen(p);
	}
	return n;
}

/* One block: the entries first (free() of the array frees all), then the
 * text, each line parsed in place so the entries' paths point into it. */
int cp_proc_maps_read(pid_t pid, struct cp_proc_map **maps, size_t *count)
{
	size_t len, lines, head, n = 0;
	char *text = maps_text(pid, &len), *block, *line;
	struct cp_proc_map *v;

	*maps = NULL;
	*count = 0;
	if (!text)
		return -1;
	lines = count_lines(text);
	head = lines * sizeof(*v);
	if (!(block = realloc(text, head + len + 1))) {
		free(text);
		return -1;
	}
	memmove(block + head, block, len + 1);
	v = (struct cp_proc_map *)(void *)block;
	for (line = block + head; *line;) {
		char *nl = strchr(line, '\n'), *next = nl ? nl + 1 : line + strlen(line);

		if (nl)
			*nl = '\0';
		if (n < lines && cp_proc_map_parse(line, &v[n]) == 0)
			n++;
		line = next;
	}
	if (n == 0) {
		free(block);
		errno = ESRCH;
		return -1;
	}
	*maps = v;
	*count = n;
	return 0;
}

void cp_proc_mapped_file(pid_t pid, uint64_t lo, uint64_t hi, const char *path, unsigned dev_major,
			 unsigned dev_minor, uint64_t ino, char *buf, size_t size)
{
	char dir[64], rooted[PATH_MAX + 96];
	struct stat st;

	snprintf(buf, size, "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)lo,
		 (unsigned long long)hi);
	if (access(buf, R_OK) == 0)
		return;
	cp_proc_live_dir(pid, dir, sizeof(dir));
	if (snprintf(rooted, sizeof(rooted), "%s/root%s", dir, path) < (int)sizeof(rooted) &&
	    stat(rooted, &st) == 0 && st.st_ino == ino && major(st.st_dev) == dev_major &&
	    minor(st.st_dev) == dev_minor && strlen(rooted) < size)
		snprintf(buf, size, "%s", rooted);
}

void cp_proc_map_shown_path(const struct cp_proc_map *m, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", m->path, m->deleted ? " (deleted)" : "");
}

/* Only the [vdso] lines are parsed: no array of a long map (clockprof's
 * own, a fork of it: the patch's self-test) is built for one entry. */
static int scan_vdso_in(const char *path, bool first, uint64_t *start, uint64_t *end, char perms[5])
{
	char *line = NULL;
	size_t linecap = 0;
	struct cp_proc_map m;
	FILE *f;
	int found = 0;

	if (!(f = fopen(path, "re")))
		return -1;
	while (!(first && found) && getline(&line, &linecap, f) > 0)
		if (strstr(line, "[vdso]") && cp_proc_map_parse(line, &m) == 0 &&
		    !strcmp(m.path, "[vdso]")) {
			*start = m.start;
			*end = m.end;
			if (perms)
				memcpy(perms, m.perms, 5);
			found++;
		}
	free(line);
	fclose(f);
	return found;
}

static int scan_vdso(pid_t pid, bool first, uint64_t *start, uint64_t *end, char perms[5])
{
	char path[96];
	int found;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	found = scan_vdso_in(path, first, start, end, perms);
	if (found == 0 && live_maps_path(pid, path, sizeof(path)))
		found = scan_vdso_in(path, first, start, end, perms);
	return found;
}

int cp_proc_maps_find_vdso(pid_t pid, uint64_t *start, uint64_t *end)
{
	return scan_vdso(pid, true, start, end, NULL) == 1 ? 0 : -1;
}

int cp_proc_maps_vdso_whole(pid_t pid, uint64_t *start, uint64_t *end, char perms[5])
{
	return scan_vdso(pid, false, start, end, perms) == 1 ? 0 : -1;
}

/* Whether pid descends from root (its parent's parent's ..., a few dozen
 * generations at most). */
static bool descends_from(pid_t pid, pid_t root)
{
	struct cp_proc_stat st;

	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		if (cp_proc_stat_read(pid, &st))
			return false;
		if (st.ppid == root)
			return true;
		pid = st.ppid;
	}
	return false;
}

pid_t cp_proc_maps_other_user(const char *path, pid_t except, const pid_t *also, size_t nalso,
			      bool descendants)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	pid_t found = 0, self = getpid();

	if (stat(path, &st) || !(d = opendir("/proc")))
		return 0;
	while (!found && (e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		struct cp_proc_map *maps;
		size_t n;
		bool excepted = pid == except || pid == self;

		for (size_t i = 0; i < nalso && !excepted; i++)
			excepted = also[i] == pid;
		if (pid <= 0 || excepted || cp_proc_maps_read(pid, &maps, &n))
			continue;
		for (size_t i = 0; i < n && !found; i++)
			if (maps[i].ino == (uint64_t)st.st_ino &&
			    maps[i].dev_major == major(st.st_dev) &&
			    maps[i].dev_minor == minor(st.st_dev))
				found = pid;
		free(maps);
		/* only a process that maps it is walked up: /proc holds hundreds.
		 * clockprof's own children (its registrar and the registrar's
		 * warm-up child, the restorer, the self-test child) map its
		 * libraries and are no target's */
		if (found &&
		    ((descendants && descends_from(found, except)) || descends_from(found, self)))
			found = 0;
	}
	closedir(d);
	return found;
}
