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
#include "plt_stubs.h"

/* A clock function by name, and the read it is: its CP_ENTRY_*, and the
 * clock id or CP_CLOCK_FROM_ARG (clock_points.h's point). */
struct clock_function {
	const char *name;
	int entry;
	int clock;
};

/* Names of real clock functions (not IFUNCs) a C library or a static
 * executable defines. */
static const struct clock_function clock_functions[] = {
	{ "clock_gettime", CP_ENTRY_CLOCK_GETTIME, CP_CLOCK_FROM_ARG },
	{ "__clock_gettime", CP_ENTRY_CLOCK_GETTIME, CP_CLOCK_FROM_ARG },
	{ "__clock_gettime64", CP_ENTRY_CLOCK_GETTIME, CP_CLOCK_FROM_ARG },
	{ "gettimeofday", CP_ENTRY_GETTIMEOFDAY, 0 },
	{ "__gettimeofday", CP_ENTRY_GETTIMEOFDAY, 0 },
	{ "time", CP_ENTRY_TIME, 0 },
};

/* Imports whose calls go straight to the vDSO (glibc IFUNCs): seen at the
 * importer's PLT stub. clock_gettime is seen in the C library itself. */
static const struct clock_function vdso_imports[] = {
	{ "gettimeofday", CP_ENTRY_GETTIMEOFDAY, 0 },
	{ "time", CP_ENTRY_TIME, 0 },
};

/* A symbol's name without its version: clock_gettime@@GLIBC_2.17. */
static bool same_name(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(sym, name, n) && (sym[n] == '\0' || sym[n] == '@');
}

/* What the finders need of one file. */
struct elf_view {
	Elf *elf;
	bool wrapper;		       /* links against a C library: its clock functions wrap it */
	GElf_Addr clock_gettime_at[4]; /* defined clock_gettime aliases */
	int nclock_gettime;
};

/* Whether the function at [addr, addr + size) calls or jumps (rel32) to
 * the file's own clock_gettime: musl's gettimeofday and time do, and are
 * then counted there, once. */
static bool calls_clock_gettime(const struct elf_view *v, GElf_Addr addr, GElf_Xword size)
{
	GElf_Shdr sh;
	Elf_Scn *text = cp_elf_section_named(v->elf, ".text", &sh);
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

struct function_walk {
	struct elf_view *v;
	struct cp_clock_points *out;
	int (*fn)(struct elf_view *, const GElf_Sym *, const char *, struct cp_clock_points *);
};

static int if_function(const GElf_Sym *sym, const char *name, void *arg)
{
	struct function_walk *w = arg;

	if (sym->st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_value)
		return 0;
	return w->fn(w->v, sym, name, w->out) ? -1 : 0;
}

/* Calls fn for every defined function symbol of .symtab and .dynsym. */
static int for_each_function(struct elf_view *v, struct cp_clock_points *out,
			     int (*fn)(struct elf_view *, const GElf_Sym *, const char *,
				       struct cp_clock_points *))
{
	struct function_walk w = { v, out, fn };

	return cp_elf_each_symbol(v->elf, if_function, &w);
}

static int note_clock_gettime(struct elf_view *v, const GElf_Sym *sym, const char *name,
			      struct cp_clock_points *out)
{
	(void)out;
	for (size_t i = 0; i < sizeof(clock_functions) / sizeof(clock_functions[0]); i++)
		if (clock_functions[i].entry == CP_ENTRY_CLOCK_GETTIME &&
		    same_name(name, clock_functions[i].name) && v->nclock_gettime < 4)
			v->clock_gettime_at[v->nclock_gettime++] = sym->st_value;
	return 0;
}

static int add_function(struct elf_view *v, const GElf_Sym *sym, const char *name,
			struct cp_clock_points *out)
{
	uint64_t off;

	if (v->wrapper)
		return 0;
	if (same_name(name, "syscall") && !cp_elf_vaddr_to_offset_in(v->elf, sym->st_value, &off))
		out->syscall_offset = off;
	for (int e = 0; e < 2; e++)
		if (same_name(name, e ? "execveat" : "execve") &&
		    !cp_elf_vaddr_to_offset_in(v->elf, sym->st_value, &off))
			out->exec_offset[e] = off;

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

/* Whether the file needs a C library (DT_NEEDED libc.so.6, musl's libc.so).
 * The C library itself and static executables do not. A file that does and
 * still defines clock_gettime, gettimeofday, time or syscall is an
 * interposer (LD_PRELOAD wrappers such as libfaketime) that forwards to the
 * real function: probing its definitions too would count each call twice. */
static bool needs_c_library(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED ||
			    !(name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)))
				continue;
			if (!strncmp(name, "libc.so", 7))
				return true;
		}
	}
	return false;
}

/* The PLT stubs of gettimeofday/time (lib/symbols/include/plt_stubs.h). An import that
 * is also reached without a stub (GLOB_DAT: -fno-plt GOT-indirect calls,
 * a function pointer in position-independent code) is named in unseen. */
static int add_plt_stubs(Elf *elf, struct cp_clock_points *out)
{
	struct cp_plt_import *imp;
	size_t nimp;
	bool unseen[sizeof(vdso_imports) / sizeof(vdso_imports[0])] = { false };
	int rc = 0;

	if (cp_plt_imports(elf, &imp, &nimp))
		return -1;
	for (size_t i = 0; i < nimp && !rc; i++) {
		for (size_t k = 0; k < sizeof(vdso_imports) / sizeof(vdso_imports[0]); k++) {
			uint64_t off;
			char what[96];

			if (strcmp(imp[i].name, vdso_imports[k].name))
				continue;
			unseen[k] |= !imp[i].jump_slot;
			if (!imp[i].stub || cp_elf_vaddr_to_offset_in(elf, imp[i].stub, &off))
				continue;
			snprintf(what, sizeof(what), "%s@plt", vdso_imports[k].name);
			rc = cp_clock_points_add(out, off, vdso_imports[k].entry,
						 vdso_imports[k].clock, CP_SITE_STACK_TOP, what);
		}
	}
	free(imp);
	for (size_t k = 0; k < sizeof(unseen) / sizeof(unseen[0]); k++) {
		size_t used = strlen(out->unseen);

		if (unseen[k])
			snprintf(out->unseen + used, sizeof(out->unseen) - used, "%s%s",
				 used ? " and " : "", vdso_imports[k].name);
	}
	return rc;
}

/* The vDSO's reading entries, by the names a program looks them up by
 * (dlsym on "linux-vdso.so.1", its own ELF walk of AT_SYSINFO_EHDR). */
static const char *const vdso_entry_names[] = {
	"__vdso_clock_gettime",
	"__vdso_gettimeofday",
	"__vdso_time",
};

/* Those of the vDSO's entries whose names the file's data holds, into
 * unseen ("" when none): a program linked against a C library that
 * names them calls the vDSO through a pointer of its own, past every
 * uprobe (the C library, which looks them up itself, and a static
 * executable, which holds one, need none: their callers are probed). */
static void vdso_entries_named(Elf *elf, char *unseen, size_t size)
{
	bool named[sizeof(vdso_entry_names) / sizeof(vdso_entry_names[0])] = { false };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
			named[k] |= memmem(d->d_buf, d->d_size, vdso_entry_names[k],
					   strlen(vdso_entry_names[k]) + 1) != NULL;
	}
	for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++) {
		size_t used = strlen(unseen);

		if (named[k])
			snprintf(unseen + used, size - used, "%s%s", used ? " and " : "",
				 vdso_entry_names[k]);
	}
}

/* The file's own points, read from its symbols and PLT stubs. */
static int own_points(struct elf_view *v, enum cp_points_want want, struct cp_clock_points *out,
		      char *vdso_named, size_t size)
{
	int rc;

	if (want == CP_POINTS_C_LIBRARY && v->wrapper)
		return 0;
	rc = for_each_function(v, out, note_clock_gettime);
	if (!rc)
		rc = for_each_function(v, out, add_function);
	if (!rc && want != CP_POINTS_C_LIBRARY)
		rc = add_plt_stubs(v->elf, out);
	if (want == CP_POINTS_AT_STUBS && v->wrapper && !out->unseen[0])
		vdso_entries_named(v->elf, vdso_named, size);
	return rc;
}

int cp_clock_points_find(const char *path, enum cp_points_want want, struct cp_clock_points *out,
			 struct cp_error *err)
{
	char vdso_named[96] = "";
	size_t before_go;
	struct elf_view v = { 0 };
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
	v.wrapper = needs_c_library(v.elf);
	rc = own_points(&v, want, out, vdso_named, sizeof(vdso_named));
	elf_end(v.elf);
	close(fd);
	before_go = out->n;
	if (!rc)
		rc = cp_go_clock_points_find(path, out);
	/* a Go program names them for its runtime, whose calls are probed */
	if (!rc && vdso_named[0] && out->n == before_go && !out->unseen[0])
		snprintf(out->unseen, sizeof(out->unseen), "the vDSO's %s (looked up by name)",
			 vdso_named);
	if (rc) {
		cp_clock_points_free(out);
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	}
	return 0;
}
