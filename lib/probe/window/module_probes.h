/* module_probes.h - the target's files, each probed once where its clock
 * reads pass (lib/probe/points/clock_points.h).
 *
 * A process maps its executable, the dynamic linker and its libraries at
 * start, and more later with dlopen. Every file with code is looked at the
 * first time it is seen mapped (by device and inode, so a library mapped
 * twice, or under two names, is probed once) and opened through
 * /proc/PID/map_files, which reaches a file deleted since it was mapped and
 * one in another mount namespace alike. The dynamic linker's debugger hook
 * tells when to look again. A file mapped where another one's code was
 * before (a library dlclose()d, another loaded at its place) is said:
 * call sites are named by address against the maps as they are last
 * read, so the first one's reads there are named in the second. */
#ifndef CP_MODULE_PROBES_H
#define CP_MODULE_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct cp_error;
struct cp_mech;
struct cp_session;

struct cp_module_probes {
	struct cp_module_seen *seen; /* module_probes.c */
	size_t n, cap;
	/* Where each file's code was seen mapped, and by which file: a
	 * library loaded where another one was unloaded from is said. */
	struct cp_module_range *ranges;
	size_t nranges, ranges_cap;
	bool dl_watched;      /* the dynamic linker's hook is probed */
	bool leaderless_said; /* a file mapped after the main thread's exit */
	/* What the last sync's read of the maps took: the cost of each look
	 * again (not the one-off probing of the files it found). */
	double read_s;
	/* Says what a file means for the counts (not readable, calls that
	 * pass no PLT stub); called with a one-line message. */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

/* Probes every file pid maps now that was not probed yet, as mechanism m
 * does, and watches the dynamic linker through session s. Returns the
 * number of files newly probed (0: nothing new), or -1 with err set when a
 * probe could not be placed. */
int cp_module_probes_sync(struct cp_module_probes *mp, struct cp_mech *m, struct cp_session *s,
			  pid_t pid, struct cp_error *err);
void cp_module_probes_free(struct cp_module_probes *mp);

#endif
