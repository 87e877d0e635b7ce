/* patch_forks_left.c - see patch_forks_left.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "patch_forks_left.h"
#include "proc_maps.h"
#include "procfs.h"
#include "vdso_patch.h"

/* Whether pid's vDSO carries an area header at area; h: it. */
static bool header_at(pid_t pid, uint64_t area, struct cp_vdso_area_header *h)
{
	uint64_t start, end;

	return !cp_proc_maps_find_vdso(pid, &start, &end) && area + sizeof(*h) <= end - start &&
	       !cp_proc_mem_read(pid, start + area, h, sizeof(*h)) &&
	       !memcmp(h->magic, CP_VDSO_AREA_MAGIC, 16);
}

bool cp_patch_carries_area(pid_t pid, uint64_t area)
{
	struct cp_vdso_area_header h;

	return header_at(pid, area, &h);
}

/* Whether pid's vDSO carries, at area, a header copy naming owner. */
static bool copy_of(pid_t pid, uint64_t area, const struct cp_vdso_area_owner *owner)
{
	struct cp_vdso_area_header h;

	return header_at(pid, area, &h) && h.owner.pid == owner->pid &&
	       h.owner.start == owner->start;
}

size_t cp_patch_forks_restore(pid_t root, uint64_t area, const struct cp_vdso_area_owner *owner,
			      pid_t *first)
{
	pid_t *d;
	size_t n, failed = 0;

	*first = 0;
	if (!area || !cp_proc_has_children(root) || cp_proc_descendants(root, &d, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct cp_error err = { 0 };
		struct cp_proc_stat st;

		if (d[i] == getpid() || !copy_of(d[i], area, owner) ||
		    cp_vdso_patch_restore_copy(d[i], &err) == 0 || cp_proc_stat_read(d[i], &st) ||
		    st.state == 'Z' || st.state == 'X')
			continue;
		if (!failed++)
			*first = d[i];
	}
	free(d);
	return failed;
}
