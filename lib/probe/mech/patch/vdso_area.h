/* vdso_area.h - the layout of what vdso_area.S holds, for the C side that
 * copies it into a target and talks to it through its header. */
#ifndef CP_VDSO_AREA_H
#define CP_VDSO_AREA_H

#include <stddef.h>
#include <stdint.h>

#include "clockreads.h"

#define CP_VDSO_AREA_MAGIC "clockprof-vdsoA"
/* The functions redirected at most: a request boundary (a syscall's: two
 * wrappers, each on two paths), syscall() twice. */
#define CP_VDSO_AREA_MAX_REDIRECTS 6
#define CP_VDSO_AREA_MAX_SITES (CP_ENTRY_MAX + CP_VDSO_AREA_MAX_REDIRECTS)

enum cp_vdso_area_cmd {
	CP_VDSO_CMD_PATCH = 1,	 /* original -> patched */
	CP_VDSO_CMD_RESTORE = 2, /* patched -> original */
};

/* One site the stub switches: the aligned 8 bytes that hold its jump. */
struct cp_vdso_area_site {
	uint64_t qword; /* address */
	uint64_t original, patched;
	uint64_t spare; /* the first two sites': the request
					 * whose stub a thread was sent
					 * through, and that thread (written by
					 * clockprof once it is sent; the stub
					 * reads neither) */
	uint64_t prot;	/* a request boundary's: its page's
					 * protection, made RWX for the switch
					 * and put back; 0: a site in the vDSO */
};

/* The clockprof that holds the patch (patch_owner.h): its pid and start
 * time (/proc/PID/stat's, ticks after boot); zeros: none. */
struct cp_vdso_area_owner {
	uint64_t pid, start;
};

/* The header at the start of the area (vdso_area.S's h_* words). */
struct cp_vdso_area_header {
	char magic[16];
	uint64_t table, table_size;
	uint64_t vdso_base, vdso_len;
	uint64_t cmd, gen_req, gen_done;
	uint64_t status, err; /* 2: mmap failed with -err (the other
					 * results: struct cp_vdso_stub_result) */
	uint64_t nsites;
	uint64_t table_at; /* where to map the table; 0: anywhere */
	uint64_t give_fs;  /* 1: set the thread pointer to zeros */
	uint64_t resume;   /* where cp_vdso_stop sends a held thread on */
	uint64_t pause[2]; /* tests only: a timespec the stub sleeps
					 * with the vDSO writable */
	struct cp_vdso_area_site sites[CP_VDSO_AREA_MAX_SITES];
	struct cp_vdso_area_owner owner;
};

/* The stub's result, in the table at CP_PATCH_STUB_OFF: out of the vDSO
 * page, which a process that denies itself writable code keeps
 * read-only. gen: the request done (written last). */
enum cp_vdso_stub_status {
	CP_VDSO_STUB_OK = 0,
	CP_VDSO_STUB_MMAP = 2, /* the table's mmap (said in the header) */
	CP_VDSO_STUB_CODE = 3, /* the code pages' mprotect: none switched,
					 * the table unmapped but its last pages */
	CP_VDSO_STUB_VDSO = 4, /* the vDSO's mprotect: none switched */
};

struct cp_vdso_stub_result {
	char magic[8];		   /* CP_VDSO_AREA_MAGIC's first 8 bytes */
	uint64_t gen, status, err; /* err: the failed call's -errno */
};

/* The table's layout (counters, wrapper rules, site blocks, a page of
 * zeros, code pages) is shared with the BPF program that reads it at
 * request boundaries: CP_PATCH_* in probes/patch_layout.h. The page of
 * zeros is a thread pointer for a launched static executable until it
 * sets its own; it keeps the mapping's writable part one piece. */
#define CP_VDSO_MAP_SIZE (CP_PATCH_CODE_OFF + CP_PATCH_CODE_SIZE)
#define CP_VDSO_ZERO_PAGE CP_PATCH_MAP_USED

/* The template (vdso_area.S), read-only in clockprof. */
extern const uint8_t cp_vdso_area_start[], cp_vdso_area_end[], cp_vdso_stub[];
extern const uint8_t cp_vdso_stop[];
extern const uint64_t cp_vdso_stub_syscall_ips[18];

_Static_assert(CP_PATCH_STUB_OFF + sizeof(struct cp_vdso_stub_result) <= CP_PATCH_CODE_OFF,
	       "the stub's result is past the page of zeros");

#define CP_VDSO_AREA_SIZE ((size_t)(cp_vdso_area_end - cp_vdso_area_start))
#define CP_VDSO_STUB_OFFSET ((uint64_t)(cp_vdso_stub - cp_vdso_area_start))
#define CP_VDSO_STOP_OFFSET ((uint64_t)(cp_vdso_stop - cp_vdso_area_start))
/* Where cp_vdso_stop's getpid returns to: a held thread is taken back at
 * that syscall's entry. */
#define CP_VDSO_STOP_SYSCALL_OFFSET (cp_vdso_stub_syscall_ips[8])
_Static_assert(CP_VDSO_AREA_MAX_SITES == 9,
	       "vdso_area.S holds a site for each of 3 entries and 6 redirects");

_Static_assert(sizeof(struct cp_vdso_area_header) == 0x200,
	       "vdso_area.S's header and this struct differ");

#endif
