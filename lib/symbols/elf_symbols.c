/* elf_symbols.c - see elf_symbols.h. */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demangle.h"
#include "elf_symbols.h"
#include "error.h"
#include "grow.h"
#include "suggest.h"

struct elf_file {
	int fd;
	Elf *elf;
};

static int elf_file_open(const char *path, struct elf_file *f)
{
	elf_version(EV_CURRENT);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		if (f->elf)
			elf_end(f->elf);
		close(f->fd);
		return -1;
	}
	return 0;
}

static void elf_file_close(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

int cp_elf_vaddr_to_offset_in(Elf *elf, uint64_t vaddr, uint64_t *offset)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*offset = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

int cp_elf_each_symbol(Elf *elf, int (*fn)(const GElf_Sym *sym, const char *name, void *arg),
		       void *arg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int rc;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if ((rc = fn(&sym, name ? name : "", arg)))
				return rc;
		}
	}
	return 0;
}

Elf_Scn *cp_elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh)
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

int cp_elf_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *offset)
{
	struct elf_file f;
	int rc;

	if (elf_file_open(path, &f))
		return -1;
	rc = cp_elf_vaddr_to_offset_in(f.elf, vaddr, offset);
	elf_file_close(&f);
	return rc;
}

/* Where a demangled name's function begins: past the return type that
 * the Itanium ABI encodes, and libiberty prints, for function templates
 * ("long app::serve<app::Req<int> >(app::Req<int>)"), which a user does
 * not write. The return type ends at the last space outside <> and ()
 * before the parameter list. */
static const char *past_return_type(const char *dem)
{
	const char *start = dem;
	int depth = 0;

	for (const char *c = dem; *c; c++) {
		if (*c == '(' && depth == 0 && c != dem)
			break;
		if (*c == '<' || *c == '(')
			depth++;
		else if ((*c == '>' || *c == ')') && depth > 0)
			depth--;
		else if (*c == ' ' && depth == 0)
			start = c + 1;
	}
	return start;
}

/* Does demangled name `dem` begin with the first wlen characters of
 * `wanted`, followed by its end or its parameter list? "> >", as the
 * demangler writes nested template arguments, also answers to ">>", as
 * C++11 code writes them. */
static int demangled_matches(const char *dem, const char *wanted, size_t wlen)
{
	size_t i = 0;

	for (; i < wlen; i++, dem++) {
		if (i > 0 && *dem == ' ' && dem[-1] == '>' && dem[1] == '>' && wanted[i] == '>')
			dem++;
		if (*dem != wanted[i])
			return 0;
	}
	return *dem == '\0' || *dem == '(';
}

/* Does symbol `sym` answer to `wanted`? A version the user wrote
 * (clock_gettime@GLIBC_2.2.5) is not part of the symbol table's name, and
 * all versions of one name found here are deduplicated by offset anyway.
 * A demangled name answers with or without its return type. */
static int name_matches(const char *sym, const char *wanted)
{
	size_t wlen = strcspn(wanted, "@");
	char *dem;
	int match = 0;

	if (!strncmp(sym, wanted, wlen) && (sym[wlen] == '\0' || sym[wlen] == '@'))
		return 1;
	dem = cp_demangle(sym);
	if (dem) {
		match = demangled_matches(dem, wanted, wlen) ||
			demangled_matches(past_return_type(dem), wanted, wlen);
		free(dem);
	}
	return match;
}

/* Names shown in suggestions: demangled, without return type, parameters
 * or version: what func:SYMBOL takes. */
static char *display_name(const char *sym)
{
	char *dem = cp_demangle(sym), *cut;

	if (dem) {
		memmove(dem, past_return_type(dem), strlen(past_return_type(dem)) + 1);
	} else {
		dem = strdup(sym);
	}
	if (dem && (cut = strchr(dem, '@')))
		*cut = '\0';
	if (dem && (cut = strchr(dem, '(')))
		*cut = '\0';
	return dem;
}

struct search {
	const char *wanted; /* NULL: names only (cp_elf_function_names) */
	struct cp_elf_function found[8];
	int nfound;
	char **names; /* every function name, for suggestions */
	size_t nnames, capnames;
};

static void add_name(struct search *s, const char *sym)
{
	char *name;

	if (cp_grow(&s->names, &s->capnames, s->nnames + 1, sizeof(*s->names)))
		return;
	name = display_name(sym);
	if (name)
		s->names[s->nnames++] = name;
}

/* layout: the file the probe goes into, whose program headers turn an
 * address into a file offset (a separate debug file has the same addresses
 * but not the same layout). */
static void consider(struct search *s, Elf *layout, const GElf_Sym *sym, const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info);
	uint64_t offset;

	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym->st_shndx == SHN_UNDEF ||
	    sym->st_value == 0)
		return;
	add_name(s, name);
	if (!s->wanted || !name_matches(name, s->wanted) ||
	    cp_elf_vaddr_to_offset_in(layout, sym->st_value, &offset))
		return;
	for (int i = 0; i < s->nfound; i++) {
		if (s->found[i].offset == offset) {
			s->found[i].aliases++;
			return;
		}
	}
	if (s->nfound == 8)
		return;
	struct cp_elf_function *f = &s->found[s->nfound++];

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->vaddr = sym->st_value;
	f->offset = offset;
	f->size = sym->st_size;
	f->ifunc = type == STT_GNU_IFUNC;
}

struct scan {
	struct search *s;
	Elf *layout;
};

static int consider_named(const GElf_Sym *sym, const char *name, void *arg)
{
	struct scan *sc = arg;

	if (*name)
		consider(sc->s, sc->layout, sym, name);
	return 0;
}

static void scan_symbols(struct search *s, Elf *elf, Elf *layout)
{
	struct scan sc = { s, layout };

	cp_elf_each_symbol(elf, consider_named, &sc);
}

Dwfl *cp_elf_dwfl_offline(const char *path, Dwfl_Module **mod)
{
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	Dwfl *dwfl = dwfl_begin(&callbacks);

	*mod = dwfl ? dwfl_report_offline(dwfl, "", path, -1) : NULL;
	if (*mod && dwfl_report_end(dwfl, NULL, NULL))
		*mod = NULL;
	return dwfl;
}

/* A stripped file's full symbol table lives in its separate debug file. */
static void scan_debug_file(struct search *s, const char *path, Elf *layout)
{
	Dwfl_Module *mod;
	Dwfl *dwfl = cp_elf_dwfl_offline(path, &mod);
	const char *debug = NULL;
	struct elf_file f;
	Dwarf_Addr bias;

	if (mod) {
		dwfl_module_getdwarf(mod, &bias);
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	}
	if (debug && elf_file_open(debug, &f) == 0) {
		scan_symbols(s, f.elf, layout);
		elf_file_close(&f);
	}
	if (dwfl)
		dwfl_end(dwfl);
}

int cp_elf_find_function(const char *path, const char *shown, const char *name,
			 struct cp_elf_function *out, struct cp_error *err)
{
	struct search s = { .wanted = name };
	struct elf_file f;
	struct cp_suggest sug;
	char hint[700];
	int rc = 0;

	if (elf_file_open(path, &f))
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot read it as an ELF file", shown);
	scan_symbols(&s, f.elf, f.elf);
	if (s.nfound == 0)
		scan_debug_file(&s, path, f.elf);
	elf_file_close(&f);
	if (s.nfound == 1) {
		*out = s.found[0];
	} else if (s.nfound == 0) {
		cp_suggest_init(&sug, name);
		for (size_t i = 0; i < s.nnames; i++)
			cp_suggest_add(&sug, s.names[i]);
		cp_suggest_format(&sug, hint, sizeof(hint));
		rc = cp_fail(err, CP_EXIT_USAGE, "no function '%s' in %s%s", name, shown,
			     s.nnames ? hint : " (it has no symbol table)");
	} else {
		rc = cp_fail(
			err, CP_EXIT_USAGE,
			"'%s' names %d different functions in %s (e.g. %s and %s); give the mangled name",
			name, s.nfound, shown, s.found[0].name, s.found[1].name);
	}
	cp_free_strings(s.names, s.nnames);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cp_elf_function_names(const char *path, void (*fn)(const char *name, void *arg), void *arg)
{
	struct search s = { 0 };
	struct elf_file f;

	if (elf_file_open(path, &f))
		return -1;
	scan_symbols(&s, f.elf, f.elf);
	if (s.nnames == 0)
		scan_debug_file(&s, path, f.elf);
	elf_file_close(&f);
	if (s.nnames)
		qsort(s.names, s.nnames, sizeof(*s.names), by_name);
	for (size_t i = 0; i < s.nnames; i++) {
		if (i == 0 || strcmp(s.names[i], s.names[i - 1]))
			fn(s.names[i], arg);
	}
	cp_free_strings(s.names, s.nnames);
	return 0;
}
