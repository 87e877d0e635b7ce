/* stub_forks.c - see stub_forks.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc_maps.h"
#include "procfs.h"
#include "stub_forks.h"

void cp_stub_window_open(struct cp_stub_window *w)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	w->last_pid = cp_proc_last_pid();
	/* A tick early: a start time is rounded down to its tick. */
	w->tick = (unsigned long long)ts.tv_sec * (unsigned long long)hz +
		  (unsigned long long)ts.tv_nsec / (1000000000ull / (unsigned long long)hz);
	w->tick = w->tick ? w->tick - 1 : 0;
}

int cp_stub_window_forks(pid_t pid, const struct cp_stub_window *w, pid_t **out, size_t *n)
{
	size_t kept = 0;

	*out = NULL;
	*n = 0;
	if (w->last_pid >= 0 && cp_proc_last_pid() == w->last_pid)
		return 0;
	/* the stub's own hold made a thread of clockprof's since: the pids
	 * moved on a host that is otherwise still too */
	if (!cp_proc_has_children(pid))
		return 0;
	if (cp_proc_descendants_born(pid, w->last_pid, out, n))
		return -1;
	for (size_t i = 0; i < *n; i++) {
		struct cp_proc_stat st;

		if (cp_proc_stat_read((*out)[i], &st) == 0 && st.start_time >= w->tick)
			(*out)[kept++] = (*out)[i];
	}
	*n = kept;
	return 0;
}

bool cp_proc_has_wx(pid_t pid)
{
	struct cp_proc_map *maps;
	size_t n;
	bool wx = false;

	if (cp_proc_maps_read(pid, &maps, &n))
		return false;
	for (size_t i = 0; i < n && !wx; i++)
		wx = maps[i].perms[1] == 'w' && maps[i].perms[2] == 'x' &&
		     (maps[i].path[0] == '/' || !strcmp(maps[i].path, "[vdso]"));
	free(maps);
	return wx;
}
