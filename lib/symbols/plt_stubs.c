/* plt_stubs.c - see plt_stubs.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_symbols.h"
#include "grow.h"
#include "plt_stubs.h"

static const char *const plt_sections[] = { ".plt.sec", ".plt", ".plt.got" };

/* The GOT slot a stub jumps through: `jmp *disp32(%rip)` (ff 25), possibly
 * after endbr64 and a bnd prefix. 0 when the stub has none (PLT0). */
static GElf_Addr stub_got_slot(const unsigned char *stub, size_t len, GElf_Addr at)
{
	for (size_t i = 0; i + 6 <= len; i++) {
		int32_t disp;

		if (stub[i] != 0xFF || stub[i + 1] != 0x25)
			continue;
		memcpy(&disp, stub + i + 2, sizeof(disp));
		return at + i + 6 + (int64_t)disp;
	}
	return 0;
}

/* Calls fn for each stub of each PLT section; stops when it returns true. */
static bool
for_each_stub(Elf *elf, bool (*fn)(GElf_Addr stub, size_t len, GElf_Addr got, void *arg), void *arg)
{
	for (size_t s = 0; s < sizeof(plt_sections) / sizeof(plt_sections[0]); s++) {
		GElf_Shdr sh;
		Elf_Scn *scn = cp_elf_section_named(elf, plt_sections[s], &sh);
		Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
		size_t step = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;

		for (size_t at = 0; d && d->d_buf && at + step <= d->d_size; at += step) {
			GElf_Addr got = stub_got_slot((const unsigned char *)d->d_buf + at, step,
						      sh.sh_addr + at);

			if (got && fn(sh.sh_addr + at, step, got, arg))
				return true;
		}
	}
	return false;
}

static int add_relocations(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct cp_plt_import **out,
			   size_t *n, size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL), *symd;
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;

	if (!d || !symscn || !gelf_getshdr(symscn, &symsh) || !(symd = elf_getdata(symscn, NULL)))
		return 0;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getrela(d, (int)i, &r))
			continue;
		type = (int)GELF_R_TYPE(r.r_info);
		/* R_X86_64_64: the function's address stored in data, a
		 * pointer initialised with it in position-independent code
		 * (int (*now)(...) = gettimeofday): called through it, never
		 * through a stub, as a GLOB_DAT import is */
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
		     type != R_X86_64_64) ||
		    !gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym) ||
		    sym.st_shndx != SHN_UNDEF || GELF_ST_TYPE(sym.st_info) == STT_OBJECT ||
		    !(name = elf_strptr(elf, symsh.sh_link, sym.st_name)) || !*name)
			continue;
		if (cp_grow(out, cap, *n + 1, sizeof(**out)))
			return -1;
		(*out)[*n] = (struct cp_plt_import){ .got = r.r_offset,
						     .jump_slot = type == R_X86_64_JUMP_SLOT };
		snprintf((*out)[*n].name, sizeof((*out)[*n].name), "%.*s", (int)strcspn(name, "@"),
			 name);
		(*n)++;
	}
	return 0;
}

struct stub_match {
	struct cp_plt_import *imp;
	size_t n;
};

static bool match_stub(GElf_Addr stub, size_t len, GElf_Addr got, void *arg)
{
	struct stub_match *m = arg;

	(void)len;
	for (size_t i = 0; i < m->n; i++)
		if (m->imp[i].got == got && !m->imp[i].stub)
			m->imp[i].stub = stub;
	return false;
}

int cp_plt_imports(Elf *elf, struct cp_plt_import **out, size_t *n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t cap = 0;
	struct stub_match m;

	*out = NULL;
	*n = 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && sh.sh_entsize &&
		    add_relocations(elf, scn, &sh, out, n, &cap)) {
			free(*out);
			*out = NULL;
			*n = 0;
			return -1;
		}
	m = (struct stub_match){ *out, *n };
	for_each_stub(elf, match_stub, &m);
	return 0;
}

struct stub_find {
	GElf_Addr vaddr, stub, got;
};

static bool find_stub(GElf_Addr stub, size_t len, GElf_Addr got, void *arg)
{
	struct stub_find *f = arg;

	if (f->vaddr < stub || f->vaddr >= stub + len)
		return false;
	f->stub = stub;
	f->got = got;
	return true;
}

bool cp_plt_stub_at(Elf *elf, GElf_Addr vaddr, char *name, size_t size, GElf_Addr *stub)
{
	struct stub_find f = { .vaddr = vaddr };
	struct cp_plt_import *imp;
	size_t n;
	bool found = false;

	if (!for_each_stub(elf, find_stub, &f) || cp_plt_imports(elf, &imp, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++)
		if (imp[i].got == f.got) {
			snprintf(name, size, "%s", imp[i].name);
			*stub = f.stub;
			found = true;
		}
	free(imp);
	return found;
}
