/* symbolize.c - addresses of a live process to names, with libdwfl; see
 * symbolize.h. The modules those names come from are reported to libdwfl
 * by symbol_modules.c; here an address is named (its symbol, then its
 * file, line and inlined functions from DWARF) and the names are cached. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_ranges.h"
#include "demangle.h"
#include "error.h"
#include "plt_stubs.h"
#include "symbolize.h"
#include "symbolizer_internal.h"

/* ---- names ------------------------------------------------------------ */

char *cp_symbol_display_name(const char *name)
{
	const char *at;
	char *bare, *out;

	if (!name)
		return NULL;
	/* glibc's .symtab names carry their version: clock_gettime@@GLIBC_2.17 */
	at = strchr(name, '@');
	bare = at && at != name ? strndup(name, (size_t)(at - name)) : strdup(name);
	if (!bare)
		return NULL;
	out = cp_demangle(bare);
	if (!out)
		return bare;
	free(bare);
	return out;
}

size_t cp_symbolizer_modules(const struct cp_symbolizer *s)
{
	return s ? s->n_mods : 0;
}

struct cp_symbolizer *cp_symbolizer_open(pid_t pid, struct cp_error *err)
{
	struct cp_symbolizer *s;

	if (pid <= 0) {
		cp_fail(err, CP_EXIT_USAGE, "invalid process id %d", (int)pid);
		return NULL;
	}
	elf_version(EV_CURRENT);
	s = calloc(1, sizeof(*s));
	if (!s) {
		cp_fail(err, CP_EXIT_PROFILE, "out of memory");
		return NULL;
	}
	s->pid = pid;
	s->start_time = cp_sym_proc_start_time(pid);
	if (!s->start_time) {
		free(s);
		cp_fail(err, CP_EXIT_PROFILE, "no such process: %d", (int)pid);
		return NULL;
	}
	/* Debug files: next to the file (in the target's root), its .debug/,
	 * and by build-id or path under the host's and the target's
	 * /usr/lib/debug. */
	if (asprintf(&s->debuginfo_path, ":.debug:/usr/lib/debug:/proc/%d/root/usr/lib/debug",
		     (int)pid) < 0) {
		free(s);
		cp_fail(err, CP_EXIT_PROFILE, "out of memory");
		return NULL;
	}
	s->cb.find_elf = dwfl_linux_proc_find_elf;
	s->cb.find_debuginfo = cp_sym_find_debuginfo;
	s->cb.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->cb);
	if (!s->dwfl) {
		cp_fail(err, CP_EXIT_PROFILE, "libdwfl: %s", dwfl_errmsg(-1));
		free(s->debuginfo_path);
		free(s);
		return NULL;
	}
	if (cp_sym_report_maps(s, false, err) != 0) {
		cp_symbolizer_close(s);
		return NULL;
	}
	return s;
}

/* ---- symbolization ------------------------------------------------------ */

static struct cache_entry *cache_get(struct cp_symbolizer *s, uint64_t addr)
{
	if (!s->cap)
		return NULL;
	for (size_t i = (addr * 0x9E3779B97F4A7C15ull) >> 40 & (s->cap - 1);;
	     i = (i + 1) & (s->cap - 1)) {
		if (s->keys[i] == addr)
			return s->vals[i];
		if (!s->vals[i])
			return NULL;
	}
}

static int cache_put(struct cp_symbolizer *s, uint64_t addr, struct cache_entry *e)
{
	if ((s->count + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		struct cache_entry **vals = calloc(cap, sizeof(*vals));
		uint64_t *ok = s->keys;
		struct cache_entry **ov = s->vals;
		size_t ocap = s->cap;

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		s->keys = keys;
		s->vals = vals;
		s->cap = cap;
		s->count = 0;
		for (size_t i = 0; i < ocap; i++)
			if (ov[i])
				cache_put(s, ok[i], ov[i]);
		free(ok);
		free(ov);
	}
	for (size_t i = (addr * 0x9E3779B97F4A7C15ull) >> 40 & (s->cap - 1);;
	     i = (i + 1) & (s->cap - 1)) {
		if (!s->vals[i]) {
			s->keys[i] = addr;
			s->vals[i] = e;
			s->count++;
			return 0;
		}
	}
}

/* Name of a subprogram or inlined-subroutine DIE, following
 * DW_AT_abstract_origin/specification; the linkage name when there is one,
 * so that C++ names carry their classes and templates. */
static char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name ? cp_symbol_display_name(name) : NULL;
}

static const char *cu_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* Fills the inline chain of addr (module-relative address pc). */
/* Inlined calls among the scopes around an address, innermost first, up
 * to their subprogram. */
static size_t count_inlined(Dwarf_Die *scopes, int n)
{
	size_t count = 0;

	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag == DW_TAG_inlined_subroutine)
			count++;
	}
	return count;
}

/* One inlined call: the function inlined and where it was called from. */
static void inline_frame(struct cp_inline_frame *f, Dwarf_Die *scope, Dwarf_Die *cu)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;

	f->function = die_function_name(scope);
	if (dwarf_attr(scope, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &w) == 0) {
		const char *file = cu_file(cu, w);

		f->call_file = file ? strdup(file) : NULL;
	}
	if (dwarf_attr(scope, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &w) == 0)
		f->call_line = (int)w;
}

/* Without an ELF symbol, the enclosing subprogram names the function. */
static void enclosing_function(struct cache_entry *e, Dwarf_Die *scopes, int n, Dwarf_Addr pc)
{
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			Dwarf_Addr lo;

			e->info.function = die_function_name(&scopes[i]);
			if (dwarf_lowpc(&scopes[i], &lo) == 0)
				e->info.function_offset = pc - lo;
			return;
		}
}

static void fill_inlines(struct cache_entry *e, Dwarf_Die *cu, Dwarf_Addr pc)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes);
	size_t count;

	if (n <= 0)
		return;
	/* Past the innermost inlined instance, dwarf_getscopes goes on with
	 * its abstract definition's scopes: a helper inlined into a helper
	 * inlined into the function would lose the outer helper (and the
	 * function's own call line). The DIE's own parents are the chain. */
	if (count_inlined(scopes, n)) {
		Dwarf_Die inner = scopes[0], *chain = NULL;
		int m = dwarf_getscopes_die(&inner, &chain);

		if (m > 0) {
			free(scopes);
			scopes = chain;
			n = m;
		}
	}
	count = count_inlined(scopes, n);
	if (count && (e->inl = calloc(count, sizeof(*e->inl)))) {
		/* scopes run innermost first; the chain is stored outermost first */
		size_t k = count;

		for (int i = 0; i < n && k > 0; i++)
			if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
				inline_frame(&e->inl[--k], &scopes[i], cu);
		e->info.inlined = e->inl;
		e->info.n_inlined = count;
	}
	if (!e->info.function)
		enclosing_function(e, scopes, n, pc);
	free(scopes);
}

/* Prefers, among aliases at one address: global over weak over local,
 * then names without a leading underscore, then shorter names (glibc's
 * "clock_gettime" over "__clock_gettime"). */
static int alias_rank(const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);
	int rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1000 : 2000;

	if (name[0] == '_')
		rank += 500;
	return rank + (int)(strlen(name) < 400 ? strlen(name) : 400);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank - y->rank;
}

static void build_symbols(struct sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t k = 0;

	m->syms_built = true;
	if (n <= 0 || !(m->syms = calloc((size_t)n, sizeof(*m->syms))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
			continue;
		m->syms[k++] = (struct sym_entry){ addr, sym.st_size, name,
						   alias_rank(&sym, name) };
	}
	m->n_syms = k;
	qsort(m->syms, k, sizeof(*m->syms), cmp_sym);
}

/* The function symbol covering addr: a sized symbol containing it, else the
 * nearest unsized symbol before it. */
static const struct sym_entry *lookup_symbol(struct sym_module *m, uint64_t addr)
{
	size_t lo = 0, hi, best_alias;

	if (!m->syms_built)
		build_symbols(m);
	hi = m->n_syms;
	while (lo < hi) { /* first entry with addr > target */
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* walk back over a few candidates: nested or overlapping symbols */
	for (size_t i = lo, steps = 0; i > 0 && steps < 64; i--, steps++) {
		const struct sym_entry *e = &m->syms[i - 1];

		if (e->size && addr < e->addr + e->size) {
			best_alias = i - 1; /* first of its aliases: best rank */
			while (best_alias > 0 && m->syms[best_alias - 1].addr == e->addr &&
			       m->syms[best_alias - 1].size)
				best_alias--;
			return &m->syms[best_alias];
		}
	}
	if (m->syms[lo - 1].size == 0) {
		best_alias = lo - 1;
		while (best_alias > 0 && m->syms[best_alias - 1].addr == m->syms[lo - 1].addr)
			best_alias--;
		return &m->syms[best_alias];
	}
	return NULL;
}

/* A PLT stub has no symbol (the one before it, often _init, would be a
 * wrong name): it is "name@plt", as objdump shows it. */
static bool plt_stub_name(struct cache_entry *e, Dwfl_Module *mod, uint64_t addr)
{
	GElf_Addr bias, stub;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	char name[160];

	if (!elf || !cp_plt_stub_at(elf, addr - bias, name, sizeof(name) - 4, &stub))
		return false;
	strcat(name, "@plt");
	e->info.function = strdup(name);
	e->info.function_offset = addr - bias - stub;
	return e->info.function != NULL;
}

/* The ELF symbol (or PLT stub) covering addr: no DWARF is read, so a
 * module's compressed debug sections are not inflated for it. */
void cp_sym_name_by_symbol(struct cache_entry *e, struct sym_module *m, uint64_t addr)
{
	const struct sym_entry *sym = lookup_symbol(m, addr);

	if (!plt_stub_name(e, m->mod, addr) && sym) {
		e->info.function = cp_symbol_display_name(sym->name);
		e->info.function_offset = addr - sym->addr;
	}
}

/* The line and the inline chain, from the module's DWARF. */
/* The compile unit holding addr: libdwfl's lookup goes by address ranges
 * (.debug_aranges, or the units' own); Go's units have neither in a form
 * it finds ("address out of range"), so each unit is asked in turn. */
static Dwarf_Die *unit_of(Dwfl_Module *mod, uint64_t addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);

	for (Dwarf_Die *u = cu ? NULL : dwfl_module_nextcu(mod, NULL, bias); u && !cu;
	     u = dwfl_module_nextcu(mod, u, bias))
		if (dwarf_haspc(u, addr - *bias) > 0)
			cu = u;
	return cu;
}

void cp_sym_name_by_dwarf(struct cache_entry *e, struct sym_module *m, uint64_t addr)
{
	Dwfl_Module *mod = m->mod;
	Dwarf_Addr dwbias = 0;
	Dwarf_Die *cu = unit_of(mod, addr, &dwbias);
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	Dwarf_Line *unit_line = line || !cu ? NULL : dwarf_getsrc_die(cu, addr - dwbias);
	int lineno = 0, col = 0;
	const char *file = line	     ? dwfl_lineinfo(line, NULL, &lineno, &col, NULL, NULL) :
			   unit_line ? dwarf_linesrc(unit_line, NULL, NULL) :
				       NULL;

	if (unit_line) {
		dwarf_lineno(unit_line, &lineno);
		dwarf_linecol(unit_line, &col);
	}
	if (file) {
		e->info.file = strdup(file);
		e->info.line = lineno;
		e->info.column = col;
	}
	if (cu) {
		Dwarf_Attribute attr;
		const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));

		e->info.comp_dir = dir ? strdup(dir) : NULL;
		fill_inlines(e, cu, addr - dwbias);
	}
}

static struct sym_module *find_module_by_range(struct cp_symbolizer *s, uint64_t addr)
{
	for (size_t i = 0; i < s->n_mods; i++)
		if (addr >= s->mods[i]->start && addr < s->mods[i]->end)
			return s->mods[i];
	return NULL;
}

/* The module holding addr, the maps re-read once for one not seen yet. */
static struct sym_module *module_of(struct cp_symbolizer *s, uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	void **ud;

	if (!mod && !find_module_by_range(s, addr)) {
		cp_sym_maybe_refresh(s);
		mod = dwfl_addrmodule(s->dwfl, addr);
	}
	if (!mod)
		return find_module_by_range(s, addr);
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	return *ud;
}

static void entry_free(struct cache_entry *e)
{
	free((char *)e->info.function);
	free((char *)e->info.file);
	free((char *)e->info.comp_dir);
	for (size_t i = 0; i < e->info.n_inlined; i++) {
		free((char *)e->inl[i].function);
		free((char *)e->inl[i].call_file);
	}
	free(e->inl);
	free(e);
}

/* A new entry for addr: its module and symbol, its DWARF when deep. */
static struct cache_entry *entry_new(struct cp_symbolizer *s, uint64_t addr, bool deep)
{
	struct cache_entry *e = calloc(1, sizeof(*e));
	struct sym_module *m;

	if (!e)
		return NULL;
	e->info.addr = addr;
	m = module_of(s, addr);
	if (m) {
		e->info.module = m->path;
		e->info.build_id = m->build_id;
		e->info.module_offset = addr - m->bias;
		e->info.stale = !m->verified;
		if (m->verified)
			cp_sym_name_by_symbol(e, m, addr);
		e->shallow = m->verified;
	}
	if (deep && e->shallow) {
		cp_sym_name_by_dwarf(e, m, addr);
		e->shallow = false;
	}
	return e;
}

/* Both ways of naming share the cache: a shallow entry is deepened in
 * place when a deep name is asked for. */
static int symbolize(struct cp_symbolizer *s, uint64_t addr, struct cp_frame_info *out, bool deep)
{
	struct cache_entry *e = cache_get(s, addr);
	struct sym_module *m;

	if (e && deep && e->shallow && (m = module_of(s, addr))) {
		cp_sym_name_by_dwarf(e, m, addr);
		e->shallow = false;
	}
	if (!e && (!(e = entry_new(s, addr, deep)) || cache_put(s, addr, e) != 0)) {
		/* not cached: still answer, without names */
		memset(out, 0, sizeof(*out));
		out->addr = addr;
		if (e) {
			out->module = e->info.module;
			out->module_offset = e->info.module_offset;
			entry_free(e);
		}
		return -1;
	}
	*out = e->info;
	return e->info.module ? 0 : -1;
}

int cp_symbolize(struct cp_symbolizer *s, uint64_t addr, struct cp_frame_info *out)
{
	return symbolize(s, addr, out, true);
}

int cp_symbolize_symbol(struct cp_symbolizer *s, uint64_t addr, struct cp_frame_info *out)
{
	return symbolize(s, addr, out, false);
}

void cp_frame_label(const struct cp_frame_info *f, bool with_offset, char *buf, size_t size)
{
	if (f->function && with_offset && f->function_offset)
		snprintf(buf, size, "%s+0x%" PRIx64, f->function, f->function_offset);
	else if (f->function)
		snprintf(buf, size, "%s", f->function);
	else if (f->module) {
		const char *base = strrchr(f->module, '/');

		snprintf(buf, size, "%s+0x%" PRIx64, base ? base + 1 : f->module, f->module_offset);
	} else
		snprintf(buf, size, "0x%" PRIx64, f->addr);
}

void cp_symbolizer_close(struct cp_symbolizer *s)
{
	if (!s)
		return;
	cp_code_ranges_free(&s->code);
	for (size_t i = 0; i < s->cap; i++) {
		struct cache_entry *e = s->vals[i];

		if (e)
			entry_free(e);
	}
	free(s->keys);
	free(s->vals);
	cp_sym_modules_free(s);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	if (s->fetch_dwfl)
		dwfl_end(s->fetch_dwfl);
	free(s->debuginfo_path);
	free(s);
}

struct Dwfl *cp_symbolizer_dwfl(struct cp_symbolizer *s)
{
	return s->dwfl;
}
