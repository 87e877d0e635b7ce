/* anatomy_record.h - what the anatomy's BPF program (anatomy.bpf.c) records for
 * user space (lib/probe/window/anatomy_collect.c): a syscall or a switch
 * of a thread whose current request is sampled (--anatomy). */
#ifndef CP_ANATOMY_RECORD_H
#define CP_ANATOMY_RECORD_H

#ifndef __bpf__
#include <linux/types.h>	/* BPF programs get __u64 from vmlinux.h */
#endif

#define CP_ANATOMY_REC_SYSCALL 1	/* what: the syscall's number */
#define CP_ANATOMY_REC_SWITCH 2		/* what: 1 voluntary, 0 preempted */
#define CP_ANATOMY_REC_READ 3		/* (the uprobe mechanism) what: the
					 * read's entry | its clock << 8 */

struct cp_anatomy_record {
	__u64 t_ns;			/* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u64 seq;			/* the slot's log (CP_PB_AN_SEQ) */
	__u32 slot;			/* the thread's slot in the patch table */
	__u32 kind;			/* CP_ANATOMY_REC_* */
	__u32 what;
	__u32 tid;			/* in clockprof's pid namespace */
};

#endif
