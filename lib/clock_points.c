/* clock_points.c - see clock_points.h: the C library functions and PLT
 * stubs of one ELF file where its clock reads can be uprobed. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock_names.h"
#include "clock_points.h"
#include "elf_symbols.h"
#include "error.h"
#include "grow.h"

/* Names of real clock functions (not IFUNCs) a C library or a static
 * executable defines, and the read each one is. */
static const struct {
	const char *name;
	int entry;
	int clock;
} clock_functions[] = {
	{ "clock_gettime", CP_ENTRY_CLOCK_GETTIME, CP_CLOCK_FROM_ARG },
	{ "__clock_gettime", CP_ENTRY_CLOCK_GETTIME, CP_CLOCK_FROM_ARG },
	{ "__clock_gettime64", CP_ENTRY_CLOCK_GETTIME, CP_CLOCK_FROM_ARG },
	{ "gettimeofday", CP_ENTRY_GETTIMEOFDAY, 0 },
	{ "__gettimeofday", CP_ENTRY_GETTIMEOFDAY, 0 },
	{ "time", CP_ENTRY_TIME, 0 },
};

/* Imports whose calls go straight to the vDSO (glibc IFUNCs): seen at the
 * importer's PLT stub. clock_gettime is seen in the C library itself. */
static const struct {
	const char *name;
	int entry;
} vdso_imports[] = {
	{ "gettimeofday", CP_ENTRY_GETTIMEOFDAY },
	{ "time", CP_ENTRY_TIME },
};

int cp_clock_points_add(struct cp_clock_points *cp, uint64_t offset, int entry,
			int clock, int site, const char *what)
{
	struct cp_clock_point *pt;

	for (size_t i = 0; i < cp->n; i++)
		if (cp->points[i].offset == offset)
			return 0;	/* an alias: one probe, one count */
	if (cp_grow(&cp->points, &cp->cap, cp->n + 1, sizeof(*cp->points)))
		return -1;
	pt = &cp->points[cp->n++];
	memset(pt, 0, sizeof(*pt));
	pt->offset = offset;
	pt->entry = (uint8_t)entry;
	pt->clock = (int8_t)clock;
	pt->site = (uint8_t)site;
	snprintf(pt->what, sizeof(pt->what), "%s", what);
	return 0;
}

void cp_clock_points_free(struct cp_clock_points *cp)
{
	free(cp->points);
	memset(cp, 0, sizeof(*cp));
}

/* A symbol's name without its version: clock_gettime@@GLIBC_2.17. */
static bool same_name(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(sym, name, n) && (sym[n] == '\0' || sym[n] == '@');
}

/* What the finders need of one file. */
struct elf_view {
	Elf *elf;
	const char *path;
	GElf_Addr clock_gettime_at[4];	/* defined clock_gettime aliases */
	int nclock_gettime;
};

static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* Whether the function at [addr, addr + size) calls or jumps (rel32) to
 * the file's own clock_gettime: musl's gettimeofday and time do, and are
 * then counted there, once. */
static bool calls_clock_gettime(const struct elf_view *v, GElf_Addr addr, GElf_Xword size)
{
	GElf_Shdr sh;
	Elf_Scn *text = section_named(v->elf, ".text", &sh);
	Elf_Data *d = text ? elf_getdata(text, NULL) : NULL;

	if (!d || addr < sh.sh_addr || addr + size > sh.sh_addr + d->d_size)
		return false;
	const uint8_t *code = (const uint8_t *)d->d_buf + (addr - sh.sh_addr);

	for (GElf_Xword i = 0; i + 5 <= size; i++) {
		int32_t rel;

		if (code[i] != 0xE8 && code[i] != 0xE9)
			continue;
		memcpy(&rel, code + i + 1, sizeof(rel));
		for (int k = 0; k < v->nclock_gettime; k++)
			if (addr + i + 5 + (int64_t)rel == v->clock_gettime_at[k])
				return true;
	}
	return false;
}

/* Calls fn for every defined function symbol of .symtab and .dynsym. */
static int for_each_function(struct elf_view *v, struct cp_clock_points *out,
			     int (*fn)(struct elf_view *, const GElf_Sym *, const char *,
				       struct cp_clock_points *))
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(v->elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value ||
			    !(name = elf_strptr(v->elf, sh.sh_link, sym.st_name)))
				continue;
			if (fn(v, &sym, name, out))
				return -1;
		}
	}
	return 0;
}

static int note_clock_gettime(struct elf_view *v, const GElf_Sym *sym, const char *name,
			      struct cp_clock_points *out)
{
	(void)out;
	for (size_t i = 0; i < 3; i++)	/* the clock_gettime names */
		if (same_name(name, clock_functions[i].name) && v->nclock_gettime < 4)
			v->clock_gettime_at[v->nclock_gettime++] = sym->st_value;
	return 0;
}

static int add_function(struct elf_view *v, const GElf_Sym *sym, const char *name,
			struct cp_clock_points *out)
{
	uint64_t off;

	if (same_name(name, "syscall") &&
	    !cp_elf_vaddr_to_offset_in(v->elf, sym->st_value, &off))
		out->syscall_offset = off;

	for (size_t i = 0; i < sizeof(clock_functions) / sizeof(clock_functions[0]); i++) {
		if (!same_name(name, clock_functions[i].name) ||
		    cp_elf_vaddr_to_offset_in(v->elf, sym->st_value, &off))
			continue;
		if (clock_functions[i].entry != CP_ENTRY_CLOCK_GETTIME &&
		    calls_clock_gettime(v, sym->st_value, sym->st_size))
			return 0;
		return cp_clock_points_add(out, off, clock_functions[i].entry,
					   clock_functions[i].clock, CP_SITE_STACK_TOP,
					   clock_functions[i].name);
	}
	return 0;
}

/* The GOT slot a PLT stub jumps through: `jmp *disp32(%rip)` (ff 25),
 * possibly after endbr64 and a bnd prefix. 0 when the stub has none. */
static GElf_Addr stub_got_slot(const uint8_t *stub, size_t len, GElf_Addr at)
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

/* A relocation of gettimeofday/time: its GOT slot and the read it is. */
struct import {
	GElf_Addr got;
	int entry;
	bool via_stub;		/* JUMP_SLOT: calls go through a PLT stub */
	bool matched;
};

static int collect_imports(Elf *elf, struct import *imp, int max)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int n = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Shdr symsh;
		Elf_Scn *symscn;
		Elf_Data *symd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)) || !(symscn = elf_getscn(elf, sh.sh_link)) ||
		    !gelf_getshdr(symscn, &symsh) || !(symd = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && n < max; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			int type;

			if (!gelf_getrela(d, (int)i, &r))
				continue;
			type = (int)GELF_R_TYPE(r.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    !gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym) ||
			    sym.st_shndx != SHN_UNDEF ||
			    !(name = elf_strptr(elf, symsh.sh_link, sym.st_name)))
				continue;
			for (size_t k = 0; k < sizeof(vdso_imports) / sizeof(vdso_imports[0]); k++)
				if (same_name(name, vdso_imports[k].name))
					imp[n++] = (struct import){ r.r_offset, vdso_imports[k].entry,
								    type == R_X86_64_JUMP_SLOT, false };
		}
	}
	return n;
}

/* Every stub of one PLT section that jumps through an imported slot. */
static int add_stubs(Elf *elf, const char *section, struct import *imp, int nimp,
		     struct cp_clock_points *out)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_named(elf, section, &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t step = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;

	if (!d || !d->d_buf)
		return 0;
	for (size_t at = 0; at + step <= d->d_size; at += step) {
		GElf_Addr got = stub_got_slot((const uint8_t *)d->d_buf + at, step,
					      sh.sh_addr + at);
		uint64_t off;
		char what[96];

		for (int k = 0; got && k < nimp; k++) {
			if (imp[k].got != got || cp_elf_vaddr_to_offset_in(elf, sh.sh_addr + at, &off))
				continue;
			imp[k].matched = true;
			snprintf(what, sizeof(what), "%s@plt", cp_entry_name(imp[k].entry));
			if (cp_clock_points_add(out, off, imp[k].entry, 0, CP_SITE_STACK_TOP, what))
				return -1;
		}
	}
	return 0;
}

/* PLT stubs of gettimeofday/time, matched to their relocations by the GOT
 * slot each stub jumps through (the layout differs between .plt with and
 * without .plt.sec, and .plt.got). A GLOB_DAT import with no stub is
 * reached by GOT-indirect calls or function pointers: not seen. */
static int add_plt_stubs(Elf *elf, struct cp_clock_points *out)
{
	static const char *const sections[] = { ".plt.sec", ".plt", ".plt.got" };
	struct import imp[16];
	int nimp = collect_imports(elf, imp, 16);

	for (size_t s = 0; s < 3 && nimp; s++)
		if (add_stubs(elf, sections[s], imp, nimp, out))
			return -1;
	for (int k = 0; k < nimp; k++)
		if (!imp[k].via_stub && !strstr(out->unseen, cp_entry_name(imp[k].entry)))
			snprintf(out->unseen + strlen(out->unseen),
				 sizeof(out->unseen) - strlen(out->unseen), "%s%s",
				 out->unseen[0] ? ", " : "", cp_entry_name(imp[k].entry));
	return 0;
}

int cp_clock_points_find(const char *path, struct cp_clock_points *out,
			 struct cp_error *err)
{
	struct elf_view v = { .path = path };
	int fd, rc;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	v.elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!v.elf || elf_kind(v.elf) != ELF_K_ELF) {
		if (v.elf)
			elf_end(v.elf);
		if (fd >= 0)
			close(fd);
		return cp_fail(err, CP_EXIT_PROFILE, "%s: cannot read it as an ELF file", path);
	}
	rc = for_each_function(&v, out, note_clock_gettime);
	if (!rc)
		rc = for_each_function(&v, out, add_function);
	if (!rc)
		rc = add_plt_stubs(v.elf, out);
	elf_end(v.elf);
	close(fd);
	if (!rc)
		rc = cp_go_clock_points_find(path, out);
	if (rc) {
		cp_clock_points_free(out);
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	}
	return 0;
}
