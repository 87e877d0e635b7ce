/* vdso.h - where the target's vDSO clock entries are.
 *
 * The vDSO is not file-backed, so its image is read from the target's memory
 * (/proc/PID/mem) and its dynamic symbol table parsed with libelf. The
 * entries are the addresses on which the hardware breakpoints are placed. */
#ifndef CP_VDSO_H
#define CP_VDSO_H

#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "clockreads.h"

struct cp_error;

struct cp_vdso {
	uint64_t start, end;		/* the [vdso] mapping */
	uint64_t entry[CP_ENTRY_MAX];	/* 0 when the vDSO lacks that entry */
};

/* Finds the vDSO of pid and its clock entries. */
int cp_vdso_locate(pid_t pid, struct cp_vdso *vdso, struct cp_error *err);

#endif
