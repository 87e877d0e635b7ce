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
	uint64_t start, end;	      /* the [vdso] mapping */
	uint64_t entry[CP_ENTRY_MAX]; /* 0 when the vDSO lacks that entry */
};

/* Finds the vDSO of pid and its clock entries. */
int cp_vdso_locate(pid_t pid, struct cp_vdso *vdso, struct cp_error *err);

/* One function of a vDSO image, as an offset from the image's start. */
struct cp_vdso_func {
	uint64_t off, size;
	int entry; /* CP_ENTRY_*, or -1 */
};

/* The functions of an image read from memory (dynamic symbol table,
 * aliases once), sorted by offset; malloc'd. -1 when it is no ELF image. */
int cp_vdso_image_functions(char *image, size_t size, struct cp_vdso_func **funcs, size_t *n);

#endif
