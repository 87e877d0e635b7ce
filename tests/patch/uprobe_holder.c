/* uprobe_holder.c - another tool's uprobe, for the tests of clockprof's
 * redirects (tests/integration/test_redirects.py): a uprobe on FILE at
 * OFFSET for every process, with a BPF program on it, as bpftrace places
 * one (a perf event of the uprobe PMU, BPF_TASK_FD_QUERY lists it as
 * `bpftool perf show` does). It says "holding" once placed and holds the
 * uprobe until its stdin ends.
 *
 *   uprobe-holder FILE OFFSET */
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct perf_event_attr attr = { .size = sizeof(attr) };
	char type[16] = "", c;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int prog, ev;

	if (argc != 3 || !f || !fgets(type, sizeof(type), f)) {
		fprintf(stderr, "usage: uprobe-holder FILE OFFSET (and the uprobe PMU)\n");
		return 2;
	}
	fclose(f);
	attr.type = (unsigned)atoi(type);
	attr.config1 = (unsigned long)argv[1];
	attr.config2 = strtoull(argv[2], NULL, 0);
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "holder", "GPL", ret0, 2, NULL);
	ev = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (prog < 0 || ev < 0 || ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog) ||
	    ioctl(ev, PERF_EVENT_IOC_ENABLE, 0)) {
		perror("uprobe-holder");
		return 1;
	}
	printf("holding\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
