/* uprobe_multi.c - see uprobe_multi.h. */
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uprobe_multi.h"

/* BPF_LINK_CREATE's attributes for a uprobe_multi link: the layout of
 * union bpf_attr's link_create (include/uapi/linux/bpf.h, Linux 6.6+),
 * which the installed kernel headers predate. */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
};

int cp_uprobe_multi_link_create(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
				const uint64_t *cookies, size_t n)
{
	/* The kernel checks that the bytes past the fields it knows are zero. */
	union {
		struct link_create_uprobe_multi a;
		union bpf_attr whole;
	} attr;

	memset(&attr, 0, sizeof(attr));
	attr.a.prog_fd = (uint32_t)prog_fd;
	attr.a.attach_type = CP_BPF_TRACE_UPROBE_MULTI;
	attr.a.path = (uint64_t)(uintptr_t)path;
	attr.a.offsets = (uint64_t)(uintptr_t)offsets;
	attr.a.cookies = (uint64_t)(uintptr_t)cookies;
	attr.a.cnt = (uint32_t)n;
	attr.a.pid = (uint32_t)pid;
	return (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

int cp_uprobe_link_adopt(struct cp_uprobe_link *l, int fd, pid_t pid, const char *path,
			 const uint64_t *offsets, size_t n)
{
	*l = (struct cp_uprobe_link){ .fd = -1, .pid = pid, .n = n };
	l->path = strdup(path);
	l->offsets = malloc((n ? n : 1) * sizeof(*offsets));
	if (!l->path || !l->offsets) {
		cp_uprobe_link_forget(l);
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	memcpy(l->offsets, offsets, n * sizeof(*offsets));
	l->fd = fd;
	return 0;
}

void cp_uprobe_link_forget(struct cp_uprobe_link *l)
{
	free(l->path);
	free(l->offsets);
	*l = (struct cp_uprobe_link){ .fd = -1 };
}

/* With the bpf() syscall, not libbpf: libbpf's feature cache and memlock
 * bump are process-wide state without locks, and this runs on the warm-up
 * thread while the session loads its programs with libbpf. */
int cp_uprobe_multi_noop_prog(void)
{
	struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (uint64_t)(uintptr_t)ret0;
	attr.insn_cnt = sizeof(ret0) / sizeof(ret0[0]);
	attr.license = (uint64_t)(uintptr_t) "GPL";
	attr.expected_attach_type = CP_BPF_TRACE_UPROBE_MULTI;
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

/* A kernel with uprobe_multi refuses a directory as the probed file
 * (EBADF); one without refuses the attach type itself (EINVAL). */
static bool probe_kernel(void)
{
	uint64_t offset = 0;
	int prog, link, e;

	prog = cp_uprobe_multi_noop_prog();
	if (prog < 0)
		return false;
	link = cp_uprobe_multi_link_create(prog, 0, "/", &offset, NULL, 1);
	e = errno;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && e == EBADF;
}

static bool supported;

static void ask_kernel(void)
{
	const char *env = getenv("CLOCKPROF_UPROBE_MULTI");

	supported = !(env && !strcmp(env, "0")) && probe_kernel();
}

bool cp_uprobe_multi_supported(void)
{
	static pthread_once_t asked = PTHREAD_ONCE_INIT;

	pthread_once(&asked, ask_kernel);
	return supported;
}

static void *close_one(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

void cp_close_together(const int *fds, size_t n, bool wait)
{
	pthread_t *threads = calloc(n ? n : 1, sizeof(*threads));
	pthread_attr_t attr;
	size_t started = 0;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr,
				    wait ? PTHREAD_CREATE_JOINABLE : PTHREAD_CREATE_DETACHED);
	/* close() needs little stack. */
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (size_t i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		if (threads && pthread_create(&threads[started], &attr, close_one,
					      (void *)(intptr_t)fds[i]) == 0)
			started++;
		else
			close(fds[i]);
	}
	pthread_attr_destroy(&attr);
	for (size_t i = 0; wait && i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
}
