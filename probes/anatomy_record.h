/* anatomy_record.h - what the anatomy's BPF program (anatomy.bpf.c) records for
 * user space (lib/probe/window/anatomy_collect.c): a syscall or a switch
 * of a thread whose current request is sampled (--anatomy). */
#ifndef CP_ANATOMY_RECORD_H
#define CP_ANATOMY_RECORD_H

#ifndef __bpf__
#include <linux/types.h> /* BPF programs get __u64 from vmlinux.h */
#endif

#define CP_ANATOMY_REC_SYSCALL 1 /* what: the syscall's number */
#define CP_ANATOMY_REC_SWITCH 2	 /* what: 1 voluntary, 0 preempted */
#define CP_ANATOMY_REC_READ \
	3		       /* (uprobes) what: the clock (as
					 * anatomy.h's read_id.clock); key */
#define CP_ANATOMY_REC_START 4 /* (uprobes) a request's boundary */
#define CP_ANATOMY_REC_END \
	5 /* (uprobes) its next; what: records
					 * were lost in it */

struct cp_anatomy_record {
	__u64 t_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u64 seq;  /* the slot's log (CP_PB_AN_SEQ) */
	__u32 slot; /* the thread's slot in the patch table */
	__u32 kind; /* CP_ANATOMY_REC_* */
	__u32 what;
	__u32 tid;	  /* in clockprof's pid namespace */
	__u64 key;	  /* READ: its site, as the patch's site
					 * blocks key one (clockreads.h) */
	__u64 callers[2]; /* READ (uprobes): the return addresses
					 * of the frame-pointer chain past the
					 * site's function; 0 unknown */
};

#endif
