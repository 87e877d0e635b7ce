/* proc_maps.c - see proc_maps.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "grow.h"
#include "proc_maps.h"

int cp_proc_map_parse(const char *line, struct cp_proc_map *m)
{
	unsigned long long start, end, off, ino;
	int n = 0;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end,
		   m->perms, &off, &m->dev_major, &m->dev_minor, &ino, &n) < 7)
		return -1;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->ino = ino;
	snprintf(m->path, sizeof(m->path), "%s", line + n);
	len = strlen(m->path);
	while (len && (m->path[len - 1] == '\n' || m->path[len - 1] == ' '))
		m->path[--len] = '\0';
	if (len > 10 && strcmp(m->path + len - 10, " (deleted)") == 0) {
		m->path[len - 10] = '\0';
		m->deleted = true;
	}
	return 0;
}

int cp_proc_maps_read(pid_t pid, struct cp_proc_map **maps, size_t *count)
{
	char path[64], *line = NULL;
	size_t cap = 0, n = 0, linecap = 0;
	struct cp_proc_map *v = NULL;
	FILE *f;

	*maps = NULL;
	*count = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (getline(&line, &linecap, f) > 0) {
		if (cp_grow(&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			v = NULL;
			break;
		}
		if (cp_proc_map_parse(line, &v[n]) == 0)
			n++;
	}
	free(line);
	fclose(f);
	if (v && n == 0) {
		free(v);
		v = NULL;
		errno = ESRCH;
	}
	if (!v)
		return -1;
	*maps = v;
	*count = n;
	return 0;
}

void cp_proc_map_shown_path(const struct cp_proc_map *m, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", m->path, m->deleted ? " (deleted)" : "");
}

/* Only the one line is parsed: a parsed line takes ~4 KiB (its path), and
 * building the whole array of a long map (clockprof's own, a fork of it:
 * the patch's self-test) took ~1 ms, twice per attach. */
int cp_proc_maps_find_vdso(pid_t pid, uint64_t *start, uint64_t *end)
{
	char path[64], *line = NULL;
	size_t linecap = 0;
	struct cp_proc_map m;
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (rc && getline(&line, &linecap, f) > 0)
		if (strstr(line, "[vdso]") && cp_proc_map_parse(line, &m) == 0 &&
		    !strcmp(m.path, "[vdso]")) {
			*start = m.start;
			*end = m.end;
			rc = 0;
		}
	free(line);
	fclose(f);
	return rc;
}

pid_t cp_proc_maps_other_user(const char *path, pid_t except, const pid_t *also, size_t nalso)
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
			    maps[i].dev_major == major(st.st_dev) && maps[i].dev_minor == minor(st.st_dev))
				found = pid;
		free(maps);
	}
	closedir(d);
	return found;
}
