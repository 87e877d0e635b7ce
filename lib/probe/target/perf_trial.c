/* perf_trial.c - see perf_trial.h. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf_trial.h"

int cp_perf_trial(struct perf_event_attr *attr)
{
	int fd;

	attr->size = sizeof(*attr);
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}
