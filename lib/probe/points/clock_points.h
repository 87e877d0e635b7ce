/* clock_points.h - where the uprobe mechanism watches clock reads.
 *
 * The vDSO is not file-backed, so no uprobe can sit in it. Every read is
 * instead seen one step before it gets there, at a place in an ordinary
 * file of the target:
 *  - a C library's real clock_gettime (glibc's __clock_gettime, musl's
 *    clock_gettime; reached by timespec_get, std::chrono, libc itself);
 *  - the PLT stub of gettimeofday / time in every object that imports them
 *    (glibc resolves these IFUNCs straight to the vDSO: the stub is the last
 *    instruction of the caller's own file that a call passes through);
 *  - a static executable's own clock_gettime, gettimeofday, time;
 *  - a Go executable's runtime vDSO callers (lib/probe/points/go_clock_points.c).
 * Each point says how the BPF program reads the clock id and finds the
 * return address of the read; points are deduplicated by (file, offset),
 * so a function with several names counts once. */
#ifndef CP_CLOCK_POINTS_H
#define CP_CLOCK_POINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clockreads.h"

struct cp_error;

/* One place to put a uprobe. */
struct cp_clock_point {
	uint64_t offset; /* file offset of the probed instruction */
	uint8_t entry;	 /* enum cp_entry: what kind of read it is */
	int8_t clock;	 /* the clock id, or CP_CLOCK_FROM_ARG */
	uint8_t site;	 /* enum cp_site_mode */
	char what[96];	 /* for messages: "gettimeofday@plt",
				 * "__clock_gettime", "time.now+114" */
};

/* Everything one ELF file holds, for one process's view of it. */
struct cp_clock_points {
	struct cp_clock_point *points;
	size_t n, cap;
	/* The file's syscall() (a C library's, a static executable's): where
	 * direct clock syscalls are seen, with either mechanism. 0: none. */
	uint64_t syscall_offset;
	/* The file's execve and execveat: where the vDSO patch's counters are
	 * summed before an exec takes the old image (and them) away. 0: none. */
	uint64_t exec_offset[2];
	/* Imports of gettimeofday/time that pass no PLT stub (-fno-plt
	 * GOT-indirect calls, function pointers): reads through them reach
	 * the vDSO unseen. "" when there are none. */
	char unseen[160];
};

/* What a mechanism wants of a file. */
enum cp_points_want {
	/* Every point, and the vDSO's entries' names looked for in the
	 * file's data, which a program that calls the vDSO through its own
	 * pointer holds (into unseen): a scan of tens of MB in a large
	 * program, wanted only where reads are seen at stubs (uprobes). */
	CP_POINTS_AT_STUBS,
	/* Every point. */
	CP_POINTS_ALL,
	/* The C library's syscall() and execve, and Go's callers: all a
	 * mechanism that counts the vDSO's reads itself wants. A file that
	 * links against the C library has none of the first two: its
	 * symbols and PLT stubs are not read (~0.5 ms a large library,
	 * mostly page faults of its tables). */
	CP_POINTS_C_LIBRARY,
};

/* Finds the clock points of the ELF file at path. 0 on success (possibly
 * with no point: most libraries read no clock), -1 when the file cannot
 * be read as ELF (err says which). */
int cp_clock_points_find(const char *path, enum cp_points_want want, struct cp_clock_points *out,
			 struct cp_error *err);
void cp_clock_points_free(struct cp_clock_points *cp);

/* Appends one point (used by the finders). 0, or -1 out of memory. */
int cp_clock_points_add(struct cp_clock_points *cp, uint64_t offset, int entry, int clock, int site,
			const char *what);

/* The Go runtime's vDSO callers in a Go executable, appended to out; 0
 * when path is not a Go executable or none were found. */
int cp_go_clock_points_find(const char *path, struct cp_clock_points *out);

#endif
