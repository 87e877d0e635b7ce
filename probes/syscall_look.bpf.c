// SPDX-License-Identifier: GPL-2.0
/* syscall_look.bpf.c - counts one process's syscalls by number, for the
 * short look that names syscall: boundaries to try when a func: boundary
 * cannot be found (lib/probe/session/syscall_look.c). Apart from the
 * session's program: it is loaded only on that error path. It reads no
 * kernel struct (ctx as plain u64s: args[1] is the number), so there is
 * no CO-RE relocation and it loads without reading the kernel's BTF. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define SYSCALL_LOOK_MAX 512

const volatile __u32 target_tgid;

__u64 counts[SYSCALL_LOOK_MAX];

SEC("raw_tp/sys_enter")
int on_sys_enter(__u64 *ctx)
{
	__u64 nr = ctx[1];

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid || nr >= SYSCALL_LOOK_MAX)
		return 0;
	__sync_fetch_and_add(&counts[nr], 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
