/* proc_maps.h - a process's memory map (/proc/PID/maps), read one way for
 * everyone who needs it: the symbolizer (its modules), the probe (files to
 * probe, the vDSO, a library named without a path). */
#ifndef CP_PROC_MAPS_H
#define CP_PROC_MAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. */
struct cp_proc_map {
	uint64_t start, end, offset;
	char perms[5];			/* "r-xp" */
	unsigned dev_major, dev_minor;
	uint64_t ino;			/* 0: anonymous, [heap], [vdso], ... */
	bool deleted;			/* the file was deleted since it was mapped */
	char path[PATH_MAX];		/* without " (deleted)"; "" when anonymous */
};

/* Parses one line; -1 when it is not a maps line. */
int cp_proc_map_parse(const char *line, struct cp_proc_map *m);

/* Reads the whole map of pid into *maps (malloc'd, *n entries). -1 when it
 * cannot be read, or is empty (errno ESRCH: the process has exited). */
int cp_proc_maps_read(pid_t pid, struct cp_proc_map **maps, size_t *n);

/* The path as /proc/PID/maps shows it: with " (deleted)" when it was. */
void cp_proc_map_shown_path(const struct cp_proc_map *m, char *buf, size_t size);

/* Where the vDSO is mapped in pid; -1 when it has none (or has exited). */
int cp_proc_maps_find_vdso(pid_t pid, uint64_t *start, uint64_t *end);

/* A process other than except, also[0..nalso) and clockprof that maps the
 * file at path now, found by its device and inode in every
 * /proc/PID/maps; 0: none. */
pid_t cp_proc_maps_other_user(const char *path, pid_t except, const pid_t *also, size_t nalso);

#endif
