/* syscall_look.c - see syscall_look.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "syscall_look.h"
#include "syscall_look.skel.h"
#include "syscall_names.h"

#define NSYSCALLS (sizeof(((struct syscall_look_bpf *)0)->bss->counts) / sizeof(__u64))

/* Writes the max most frequent syscalls of counts to out. */
static void most_frequent(const __u64 *counts, int max, char *out, size_t size)
{
	static char taken[NSYSCALLS];
	size_t len = 0;

	memset(taken, 0, sizeof(taken));
	out[0] = '\0';
	for (int k = 0; k < max; k++) {
		int best = -1;

		for (size_t nr = 0; nr < NSYSCALLS; nr++)
			if (!taken[nr] && counts[nr] && (best < 0 || counts[nr] > counts[best]))
				best = (int)nr;
		if (best < 0 || len >= size)
			return;
		taken[best] = 1;
		const char *name = cp_syscall_name(best);

		if (name)
			len += (size_t)snprintf(out + len, size - len, "%s%s %llu", len ? ", " : "",
						name, (unsigned long long)counts[best]);
	}
}

int cp_syscall_look(pid_t pid, int ms, int max, char *out, size_t size)
{
	struct syscall_look_bpf *skel = syscall_look_bpf__open();
	struct timespec pause = { ms / 1000, (long)(ms % 1000) * 1000000L };
	int rc = -1;

	out[0] = '\0';
	if (!skel)
		return -1;
	skel->rodata->target_tgid = (__u32)pid;
	if (syscall_look_bpf__load(skel) == 0 && syscall_look_bpf__attach(skel) == 0) {
		nanosleep(&pause, NULL);
		syscall_look_bpf__detach(skel);
		most_frequent(skel->bss->counts, max, out, size);
		rc = 0;
	}
	syscall_look_bpf__destroy(skel);
	return rc;
}
