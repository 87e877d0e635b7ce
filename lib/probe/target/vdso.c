/* vdso.c - see vdso.h. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock_names.h"
#include "error.h"
#include "proc_maps.h"
#include "procfs.h"
#include "vdso.h"

/* The vDSO exports each entry twice (clock_gettime and __vdso_clock_gettime)
 * at one address; either name will do. */
static int entry_of_symbol(const char *name)
{
	if (!strncmp(name, "__vdso_", 7))
		name += 7;
	for (int i = 0; i < CP_ENTRY_MAX; i++)
		if (!strcmp(name, cp_entry_name(i)))
			return i;
	return -1;
}

/* The image's link-time base: its lowest PT_LOAD address (0: none). */
static uint64_t link_base_of(Elf *elf)
{
	uint64_t base = UINT64_MAX;
	GElf_Phdr ph;
	size_t nph;

	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < base)
				base = ph.p_vaddr;
	return base == UINT64_MAX ? 0 : base;
}

/* Adds one dynamic symbol table's functions to *funcs. */
static int add_dynsym(Elf *elf, Elf_Data *data, const GElf_Shdr *sh, uint64_t link_base,
		      struct cp_vdso_func **funcs, size_t *n)
{
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Sym sym;
		const char *name;
		struct cp_vdso_func *f;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!(f = realloc(*funcs, (*n + 1) * sizeof(**funcs))))
			return -1;
		*funcs = f;
		f[*n].off = sym.st_value - link_base;
		f[*n].size = sym.st_size;
		f[*n].entry = name ? entry_of_symbol(name) : -1;
		(*n)++;
	}
	return 0;
}

static int by_offset(const void *a, const void *b)
{
	const struct cp_vdso_func *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return y->entry - x->entry; /* the entry's name first among aliases */
}

/* Sorted, one function per offset (the vDSO names each twice). */
static void sort_unique(struct cp_vdso_func *funcs, size_t *n)
{
	size_t kept = 0;

	qsort(funcs, *n, sizeof(*funcs), by_offset);
	for (size_t i = 0; i < *n; i++)
		if (!kept || funcs[kept - 1].off != funcs[i].off)
			funcs[kept++] = funcs[i];
	*n = kept;
}

int cp_vdso_image_functions(char *image, size_t size, struct cp_vdso_func **funcs, size_t *n)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t link_base;
	int rc = 0;

	*funcs = NULL;
	*n = 0;
	elf_version(EV_CURRENT);
	elf = elf_memory(image, size);
	if (!elf)
		return -1;
	link_base = link_base_of(elf);
	while (!rc && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		rc = add_dynsym(elf, data, &sh, link_base, funcs, n);
	}
	elf_end(elf);
	if (rc || !*n) {
		free(*funcs);
		*funcs = NULL;
		return -1;
	}
	sort_unique(*funcs, n);
	return 0;
}

static int parse_image(char *image, size_t size, struct cp_vdso *vdso)
{
	struct cp_vdso_func *funcs;
	size_t n;
	int found = 0;

	if (cp_vdso_image_functions(image, size, &funcs, &n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (funcs[i].entry >= 0) {
			vdso->entry[funcs[i].entry] = vdso->start + funcs[i].off;
			found++;
		}
	free(funcs);
	return found ? 0 : -1;
}

int cp_vdso_locate(pid_t pid, struct cp_vdso *vdso, struct cp_error *err)
{
	char *image;
	size_t size;
	int rc;

	memset(vdso, 0, sizeof(*vdso));
	if (cp_proc_maps_find_vdso(pid, &vdso->start, &vdso->end))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has no vDSO mapped (exited?)",
			       pid);
	size = vdso->end - vdso->start;
	image = malloc(size);
	if (!image || cp_proc_mem_read(pid, vdso->start, image, size)) {
		free(image);
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"cannot read the vDSO of process %d from /proc/%d/mem (needs root or CAP_SYS_PTRACE)",
			pid, pid);
	}
	rc = parse_image(image, size, vdso);
	free(image);
	if (rc)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO of process %d exports no clock entry", pid);
	return 0;
}
