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
#include "target.h"
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

static int parse_image(char *image, size_t size, struct cp_vdso *vdso)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t nph;
	uint64_t link_base = UINT64_MAX;
	int found = 0;

	elf_version(EV_CURRENT);
	elf = elf_memory(image, size);
	if (!elf)
		return -1;
	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < link_base)
				link_base = ph.p_vaddr;
	if (link_base == UINT64_MAX)
		link_base = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			int e;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (e = entry_of_symbol(name)) < 0)
				continue;
			vdso->entry[e] = vdso->start + sym.st_value - link_base;
			found++;
		}
	}
	elf_end(elf);
	return found ? 0 : -1;
}

int cp_vdso_locate(pid_t pid, struct cp_vdso *vdso, struct cp_error *err)
{
	char path[64];
	char *image;
	size_t size;
	int fd, rc;

	memset(vdso, 0, sizeof(*vdso));
	if (cp_target_find_vdso(pid, &vdso->start, &vdso->end))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d has no vDSO mapped (exited?)", pid);
	size = vdso->end - vdso->start;
	image = malloc(size);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!image || fd < 0 ||
	    pread(fd, image, size, (off_t)vdso->start) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		free(image);
		return cp_fail(err, CP_EXIT_PROFILE,
			       "cannot read the vDSO of process %d from %s (needs root or CAP_SYS_PTRACE)",
			       pid, path);
	}
	close(fd);
	rc = parse_image(image, size, vdso);
	free(image);
	if (rc)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO of process %d exports no clock entry", pid);
	return 0;
}
