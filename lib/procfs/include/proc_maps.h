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

/* One line of /proc/PID/maps. Small (no path buffer of its own): an array
 * of a long map spans a few pages, not one per line, and each page first
 * touched costs a fault (tens of microseconds in a guest whose page tables
 * the hypervisor keeps). */
struct cp_proc_map {
	uint64_t start, end, offset;
	uint64_t ino;	  /* 0: anonymous, [heap], [vdso], ... */
	const char *path; /* without " (deleted)"; "" when anonymous */
	unsigned dev_major, dev_minor;
	char perms[5]; /* "r-xp" */
	bool deleted;  /* the file was deleted since it was mapped */
};

/* Parses one line in place: the line is cut at the end of its path, and
 * m->path points into it (valid while the line is). -1 when it is not a
 * maps line. */
int cp_proc_map_parse(char *line, struct cp_proc_map *m);

/* Reads the whole map of pid into *maps, *n entries: one malloc'd block
 * that holds their paths too (free(*maps) frees all; an entry copied out
 * of it must not use its path after). -1 when it cannot be read, or is
 * empty (errno ESRCH: the process has exited). */
int cp_proc_maps_read(pid_t pid, struct cp_proc_map **maps, size_t *n);

/* The path as /proc/PID/maps shows it: with " (deleted)" when it was. */
void cp_proc_map_shown_path(const struct cp_proc_map *m, char *buf, size_t size);

/* A path that opens the file pid maps at [lo, hi), into buf:
 * /proc/PID/map_files/LO-HI, the very file mapped; or, where those are
 * gone (the main thread exited: cp_proc_live_dir), path under a live
 * thread's root when that is still the file mapped (its device and
 * inode). The first when neither opens: its error is the one to say. */
void cp_proc_mapped_file(pid_t pid, uint64_t lo, uint64_t hi, const char *path, unsigned dev_major,
			 unsigned dev_minor, uint64_t ino, char *buf, size_t size);

/* Where the vDSO is mapped in pid; -1 when it has none (or has exited). */
int cp_proc_maps_find_vdso(pid_t pid, uint64_t *start, uint64_t *end);
/* The vDSO's range and permissions ("r-xp") when it is one mapping; -1
 * when it is none, or split in parts (a part of it mprotected). */
int cp_proc_maps_vdso_whole(pid_t pid, uint64_t *start, uint64_t *end, char perms[5]);

/* A process other than except, also[0..nalso), clockprof and any process
 * descended from clockprof (its helpers: the registrar maps clockprof's
 * libraries) (and, given descendants, other than any process descended
 * from except: those a followed target forks) that maps the file at path
 * now, found by its device and inode in every /proc/PID/maps; 0: none. */
pid_t cp_proc_maps_other_user(const char *path, pid_t except, const pid_t *also, size_t nalso,
			      bool descendants);

#endif
