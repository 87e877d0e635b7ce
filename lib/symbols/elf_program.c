/* elf_program.c - see elf_program.h. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "elf_program.h"

/* Whether the dynamic section says a position-independent executable:
 * DF_1_PIE, or (older linkers) an interpreter and no DT_SONAME. */
static bool dynamic_says_program(Elf *elf, bool interp)
{
	Elf_Scn *scn = NULL;
	bool soname = false;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)i, &dyn))
				break;
			if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
				return true;
			soname |= dyn.d_tag == DT_SONAME;
		}
	}
	return interp && !soname;
}

bool cp_elf_is_program(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	GElf_Ehdr eh;
	bool program = false, interp = false;
	size_t n;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) || !gelf_getehdr(elf, &eh))
		goto out;
	program = eh.e_type == ET_EXEC;
	if (!program && eh.e_type == ET_DYN && !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			interp |= gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP;
		}
		program = dynamic_says_program(elf, interp);
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return program;
}
