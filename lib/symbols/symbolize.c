/* symbolize.c - addresses of a live process to names, with libdwfl; see
 * symbolize.h.
 *
 * Modules are reported to libdwfl one by one (dwfl_report_elf with a file
 * descriptor we opened) rather than with dwfl_linux_proc_report, because we
 * must choose how each file is opened: through /proc/PID/root (containers),
 * checked against the inode in /proc/PID/maps or the build-id in the
 * target's memory, or through /proc/PID/map_files when the file on disk is
 * no longer the one mapped. The vDSO image is copied from /proc/PID/mem
 * into a memfd. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "build_id.h"
#include "code_ranges.h"
#include "demangle.h"
#include "elf_pages.h"
#include "error.h"
#include "grow.h"
#include "local_debuginfo.h"
#include "plt_stubs.h"
#include "proc_maps.h"
#include "procfs.h"
#include "symbolize.h"
#include "symbolizer_internal.h"

#define PAGE_MASK_4K (~(uint64_t)4095)

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

/* ---- /proc ------------------------------------------------------------- */

/* The process's start time, or 0 once it has exited: a zombie still has
 * its /proc/PID/stat, but no longer its files (/proc/PID/root). Its main
 * thread alone may be a zombie (it called pthread_exit) while the others
 * run on: that process is alive. */
static uint64_t proc_start_time(pid_t pid)
{
	struct cp_proc_stat st;
	pid_t *tids = NULL;
	size_t ntids = 0;
	bool others = false;

	if (cp_proc_stat_read(pid, &st))
		return 0;
	if (st.state == 'Z' || st.state == 'X') {
		others = cp_proc_threads(pid, &tids, &ntids) == 0 && ntids > 1;
		free(tids);
		if (!others)
			return 0;
	}
	return st.start_time;
}

/* Load bias of the file open on fd when its offset map_off is mapped at
 * map_start. Returns -1 when fd is not a usable ELF file. */
static int compute_bias(int fd, uint64_t map_start, uint64_t map_off,
			uint64_t *bias, bool *is_exec)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t nph;
	int rc = -1;

	if (!elf)
		return -1;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nph) != 0)
		goto out;
	*is_exec = eh.e_type == ET_EXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t o = ph.p_offset & PAGE_MASK_4K;

		if (map_off >= o && map_off < ph.p_offset + ph.p_filesz) {
			*bias = map_start - map_off + o -
				(ph.p_vaddr & PAGE_MASK_4K);
			rc = 0;
			break;
		}
	}
out:
	elf_end(elf);
	return rc;
}

/* ---- module capture -------------------------------------------------- */

static struct sym_module *find_module_by_range(struct cp_symbolizer *s,
					       uint64_t addr)
{
	for (size_t i = 0; i < s->n_mods; i++)
		if (addr >= s->mods[i]->start && addr < s->mods[i]->end)
			return s->mods[i];
	return NULL;
}

static bool module_known(struct cp_symbolizer *s, const char *path,
			 uint64_t map0_start)
{
	for (size_t i = 0; i < s->n_mods; i++)
		if (s->mods[i]->map0_start == map0_start &&
		    strcmp(s->mods[i]->path, path) == 0)
			return true;
	return false;
}

/* Whether a module of this file is already reported at this bias. A
 * non-PIE executable's code mapped a second time elsewhere (Node moves part
 * of its text to remap it on huge pages) is reported at bias 0 again: libdwfl
 * refuses the overlap and marks the first module for removal, which would
 * leave a dangling module behind. */
static bool reported_at_bias(struct cp_symbolizer *s, const struct sym_module *m)
{
	for (size_t i = 0; i < s->n_mods; i++)
		if (s->mods[i]->mod && s->mods[i]->bias == m->bias &&
		    s->mods[i]->file_ino == m->file_ino &&
		    s->mods[i]->file_dev == m->file_dev &&
		    strcmp(s->mods[i]->path, m->path) == 0)
			return true;
	return false;
}

static int add_module(struct cp_symbolizer *s, struct sym_module *m)
{
	if (cp_grow(&s->mods, &s->cap_mods, s->n_mods + 1, sizeof(*s->mods)))
		return -1;
	s->mods[s->n_mods++] = m;
	return 0;
}

/* Opens the file behind a module so that it is the one mapped. */
static int open_verified(struct cp_symbolizer *s, struct sym_module *m,
			 const struct cp_proc_map *map0, char *file_name, size_t size)
{
	struct stat st;
	int fd;

	if (!map0->deleted) {
		snprintf(file_name, size, "/proc/%d/root%s", (int)s->pid, m->path);
		fd = open(file_name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			char a[128], b[128];

			if (st.st_ino == map0->ino &&
			    major(st.st_dev) == map0->dev_major &&
			    minor(st.st_dev) == map0->dev_minor)
				return fd;
			/* overlayfs reports other device numbers: the
			 * build-id in memory decides */
			if (cp_build_id_of_fd(fd, a, sizeof(a)) == 0 &&
			    cp_build_id_in_memory(s->pid, map0->start, b, sizeof(b)) == 0 &&
			    strcmp(a, b) == 0)
				return fd;
		}
		if (fd >= 0)
			close(fd);
	}
	/* The file on disk is not the one mapped; the kernel still holds the
	 * mapped one (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE). */
	snprintf(file_name, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)s->pid, map0->start, map0->end);
	fd = open(file_name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		m->via_map_files = true;
	return fd;
}

static int vdso_memfd(pid_t pid, const struct cp_proc_map *v)
{
	size_t len = v->end - v->start;
	void *buf = malloc(len);
	int fd = -1;

	if (!buf)
		return -1;
	if (cp_proc_mem_read(pid, v->start, buf, len) == 0) {
		fd = memfd_create("clockprof-vdso", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, buf, len) != (ssize_t)len) {
			close(fd);
			fd = -1;
		}
	}
	free(buf);
	return fd;
}

static void set_module_userdata(struct sym_module *m)
{
	void **ud;

	dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = m;
}

static void module_free(struct sym_module *m)
{
	free(m->build_id);
	free(m->path);
	free(m);
}

/* The mappings of one loaded file are adjacent in the maps: the run of
 * entries from first with its path and inode. Sets m's span and returns
 * the mapping of its lowest file offset; *has_exec when one is code. */
static const struct cp_proc_map *module_span(struct sym_module *m,
					     const struct cp_proc_map *v, size_t n,
					     size_t first, bool *has_exec)
{
	const struct cp_proc_map *map0 = NULL;

	m->start = UINT64_MAX;
	for (size_t i = first; i < n; i++) {
		if (strcmp(v[i].path, v[first].path) != 0 || v[i].ino != v[first].ino)
			break;
		if (v[i].perms[2] == 'x')
			*has_exec = true;
		if (!map0 || v[i].offset < map0->offset)
			map0 = &v[i];
		if (v[i].start < m->start)
			m->start = v[i].start;
		if (v[i].end > m->end)
			m->end = v[i].end;
	}
	return map0;
}

/* The pages of the module's file that reporting it read (its headers and
 * notes, with the kernel's fault-around ~100 KiB a file) are given back
 * at once: a target's modules are all reported before any is read for
 * its symbols, and held together they were ~2 MB of clockprof's peak RSS
 * (elf_pages.h). */
static void release_reported(Dwfl_Module *mod)
{
	GElf_Addr bias;

	cp_elf_release_pages(dwfl_module_getelf(mod, &bias));
}

/* Reports the module's file, open on fd, to libdwfl (which then owns fd).
 * -1 when it is not ELF (a mapped data file with exec rights), or when a
 * module of it is already reported at the same bias. */
static int report_file(struct cp_symbolizer *s, struct sym_module *m,
		       const struct cp_proc_map *map0, int fd, const char *file_name)
{
	struct stat st;
	char hex[128];
	bool is_exec = false;

	if (fstat(fd, &st) == 0) {
		m->file_dev = st.st_dev;
		m->file_ino = st.st_ino;
	}
	if (cp_build_id_of_fd(fd, hex, sizeof(hex)) == 0)
		m->build_id = strdup(hex);
	if (compute_bias(fd, map0->start, map0->offset, &m->bias, &is_exec) != 0) {
		close(fd);
		return -1;
	}
	if (is_exec)
		m->bias = 0;
	if (reported_at_bias(s, m)) {
		/* the addresses of this copy are not the file's */
		close(fd);
		return -1;
	}
	m->mod = dwfl_report_elf(s->dwfl, m->path, file_name, fd, m->bias, true);
	if (m->mod) {
		m->verified = true;
		set_module_userdata(m);
		release_reported(m->mod);
	} else {
		close(fd);
	}
	return 0;
}

/* Reports the modules of one path (all its vmas in v[]). */
static void capture_module(struct cp_symbolizer *s, const struct cp_proc_map *v,
			   size_t n, size_t first)
{
	const struct cp_proc_map *map0;
	struct sym_module *m;
	char file_name[PATH_MAX + 64];
	bool has_exec = false;
	int fd;

	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	map0 = module_span(m, v, n, first, &has_exec);
	if (!has_exec || module_known(s, v[first].path, map0->start)) {
		free(m);
		return;
	}
	m->path = strdup(v[first].path);
	m->debuginfo_path = s->debuginfo_path;
	m->map0_start = map0->start;
	m->map0_end = map0->end;
	m->ino = map0->ino;
	if (!m->path) {
		free(m);
		return;
	}
	m->is_vdso = strcmp(m->path, "[vdso]") == 0;
	if (m->is_vdso) {
		fd = vdso_memfd(s->pid, map0);
		snprintf(file_name, sizeof(file_name), "[vdso]");
	} else {
		fd = open_verified(s, m, map0, file_name, sizeof(file_name));
	}
	if ((fd >= 0 && report_file(s, m, map0, fd, file_name)) || add_module(s, m))
		module_free(m);
}

/* The executable mappings of the maps just read, kept in place of the
 * last ones (those stay when out of memory). */
static void keep_code(struct cp_symbolizer *s, const struct cp_proc_map *v, size_t n)
{
	struct cp_code_ranges code;

	if (cp_code_ranges_from_maps(v, n, &code))
		return;
	cp_code_ranges_free(&s->code);
	s->code = code;
	s->have_code = true;
}

static int report_maps(struct cp_symbolizer *s, bool adding,
		       struct cp_error *err)
{
	size_t n = 0;
	struct cp_proc_map *v;

	if (cp_proc_maps_read(s->pid, &v, &n))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "cannot read the memory map of process %d: %s",
			       (int)s->pid, strerror(errno));
	keep_code(s, v, n);
	if (adding)
		dwfl_report_begin_add(s->dwfl);
	else
		dwfl_report_begin(s->dwfl);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && strcmp(v[j].path, v[i].path) == 0 &&
		       v[j].ino == v[i].ino)
			j++;
		if (v[i].path[0] == '/' || strcmp(v[i].path, "[vdso]") == 0)
			capture_module(s, v, n, i);
		i = j;
	}
	free(v);
	dwfl_report_end(s->dwfl, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &s->last_refresh);
	return 0;
}

/* The standard search for a module's debug file where one is on this
 * machine (local_debuginfo.h: never libdebuginfod), and never for the
 * vDSO: its image carries the symbols we name it by (its exported
 * entries). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct sym_module *m = *userdata;

	if (modname && !strcmp(modname, "[vdso]"))
		return -1;
	if (m && !cp_local_debuginfo_may_exist(m->debuginfo_path, file_name, debuglink_file,
					       m->build_id))
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
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
	s->start_time = proc_start_time(pid);
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
	s->cb.find_debuginfo = find_debuginfo;
	s->cb.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->cb);
	if (!s->dwfl) {
		cp_fail(err, CP_EXIT_PROFILE, "libdwfl: %s", dwfl_errmsg(-1));
		free(s->debuginfo_path);
		free(s);
		return NULL;
	}
	if (report_maps(s, false, err) != 0) {
		cp_symbolizer_close(s);
		return NULL;
	}
	return s;
}

/* Picks up modules mapped since the last look (dlopen), at most every
 * 20 ms so that addresses outside any module (JIT code) stay cheap. */
static void maybe_refresh(struct cp_symbolizer *s)
{
	struct timespec now;
	int64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - s->last_refresh.tv_sec) * 1000 +
	     (now.tv_nsec - s->last_refresh.tv_nsec) / 1000000;
	if (ms < 20 || proc_start_time(s->pid) != s->start_time)
		return;
	report_maps(s, true, NULL);
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

static int cache_put(struct cp_symbolizer *s, uint64_t addr,
		     struct cache_entry *e)
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
static void enclosing_function(struct cache_entry *e, Dwarf_Die *scopes, int n,
			       Dwarf_Addr pc)
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
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr,
							   &shndx, NULL, NULL);
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
	while (lo < hi) {	/* first entry with addr > target */
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
			best_alias = i - 1;	/* first of its aliases: best rank */
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
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, &col, NULL, NULL) :
			   unit_line ? dwarf_linesrc(unit_line, NULL, NULL) : NULL;

	if (unit_line) {
		dwarf_lineno(unit_line, &lineno);
		dwarf_linecol(unit_line, &col);
	}
	if (file) {
		e->info.file = strdup(file);
		e->info.line = lineno;
		e->info.column = col;
	}
	if (cu)
		fill_inlines(e, cu, addr - dwbias);
}

/* The module holding addr, the maps re-read once for one not seen yet. */
static struct sym_module *module_of(struct cp_symbolizer *s, uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	void **ud;

	if (!mod && !find_module_by_range(s, addr)) {
		maybe_refresh(s);
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
static int symbolize(struct cp_symbolizer *s, uint64_t addr, struct cp_frame_info *out,
		     bool deep)
{
	struct cache_entry *e = cache_get(s, addr);

	if (e && deep && e->shallow) {
		cp_sym_name_by_dwarf(e, module_of(s, addr), addr);
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

void cp_frame_label(const struct cp_frame_info *f, bool with_offset,
		    char *buf, size_t size)
{
	if (f->function && with_offset && f->function_offset)
		snprintf(buf, size, "%s+0x%" PRIx64, f->function,
			 f->function_offset);
	else if (f->function)
		snprintf(buf, size, "%s", f->function);
	else if (f->module) {
		const char *base = strrchr(f->module, '/');

		snprintf(buf, size, "%s+0x%" PRIx64, base ? base + 1 : f->module,
			 f->module_offset);
	} else
		snprintf(buf, size, "0x%" PRIx64, f->addr);
}

/* ---- staleness ----------------------------------------------------------- */

/* Whether the file behind m was replaced on disk since it was opened: a
 * new inode with other contents (*hex: its build-id now, "" unreadable). */
static bool module_replaced(const struct cp_symbolizer *s, const struct sym_module *m,
			    char *hex, size_t size)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)s->pid, m->path);
	if (stat(path, &st) == 0 && st.st_dev == m->file_dev && st.st_ino == m->file_ino)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	hex[0] = '\0';
	if (fd >= 0) {
		cp_build_id_of_fd(fd, hex, size);
		close(fd);
	}
	return !(m->build_id && strcmp(hex, m->build_id) == 0);	/* same contents */
}

int cp_symbolizer_check_stale(struct cp_symbolizer *s, struct cp_error *err)
{
	uint64_t now = proc_start_time(s->pid);
	int rc = 0;

	if (now && now != s->start_time)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d is not the process that was profiled "
			       "(the pid was reused); call sites cannot be named",
			       (int)s->pid);
	for (size_t i = 0; i < s->n_mods; i++)
		if (!s->mods[i]->verified)
			return cp_fail(err, CP_EXIT_PROFILE,
				       "%s was replaced on disk before it could be "
				       "read (reading /proc/%d/map_files needs "
				       "CAP_SYS_ADMIN); its call sites are left unnamed",
				       s->mods[i]->path, (int)s->pid);
	if (!now)
		return 0;	/* exited: what was captured is all there is */
	for (size_t i = 0; i < s->n_mods; i++) {
		struct sym_module *m = s->mods[i];
		char hex[128];

		if (m->is_vdso || m->via_map_files || !module_replaced(s, m, hex, sizeof(hex)))
			continue;
		cp_fail(err, CP_EXIT_OK,
			"%s was replaced on disk after attach (build-id %s, now %s); "
			"call sites are named from the copy opened at attach",
			m->path, m->build_id ? m->build_id : "none",
			hex[0] ? hex : "unreadable");
		rc = 1;
	}
	return rc;
}

int cp_symbolizer_code(struct cp_symbolizer *s, struct cp_code_ranges *out)
{
	*out = (struct cp_code_ranges){ 0 };
	/* Read again while the process is the one captured: what it maps now,
	 * the libraries it loaded since (reported to libdwfl too) and without
	 * those it unloaded. */
	if (proc_start_time(s->pid) == s->start_time)
		report_maps(s, true, NULL);
	return s->have_code ? cp_code_ranges_copy(&s->code, out) : -1;
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
	for (size_t i = 0; i < s->n_mods; i++) {
		free(s->mods[i]->syms);
		free(s->mods[i]->path);
		free(s->mods[i]->build_id);
		free(s->mods[i]);
	}
	free(s->mods);
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

