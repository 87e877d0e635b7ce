/* symbol_modules.c - the target's modules as libdwfl sees them; see
 * symbolizer_internal.h.
 *
 * Modules are reported to libdwfl one by one (dwfl_report_elf with a file
 * descriptor we opened) rather than with dwfl_linux_proc_report, because we
 * must choose how each file is opened: through /proc/PID/root (containers),
 * checked against the inode in /proc/PID/maps or the build-id in the
 * target's memory, or through /proc/PID/map_files when the file on disk is
 * no longer the one mapped. The vDSO image is copied from /proc/PID/mem
 * into a memfd. Reported again when the target maps more (dlopen), and
 * checked after the window: the same process, the same files. */
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
#include "elf_pages.h"
#include "error.h"
#include "grow.h"
#include "local_debuginfo.h"
#include "proc_maps.h"
#include "procfs.h"
#include "symbolizer_internal.h"

#define PAGE_MASK_4K (~(uint64_t)4095)

/* ---- /proc ------------------------------------------------------------- */

/* The process's start time, or 0 once it has exited: a zombie still has
 * its /proc/PID/stat, but no longer its files (/proc/PID/root). Its main
 * thread alone may be a zombie (it called pthread_exit) while the others
 * run on: that process is alive. */
uint64_t cp_sym_proc_start_time(pid_t pid)
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
static int compute_bias(int fd, uint64_t map_start, uint64_t map_off, uint64_t *bias, bool *is_exec)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t nph;
	int rc = -1;

	if (!elf)
		return -1;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph) != 0)
		goto out;
	*is_exec = eh.e_type == ET_EXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t o = ph.p_offset & PAGE_MASK_4K;

		if (map_off >= o && map_off < ph.p_offset + ph.p_filesz) {
			*bias = map_start - map_off + o - (ph.p_vaddr & PAGE_MASK_4K);
			rc = 0;
			break;
		}
	}
out:
	elf_end(elf);
	return rc;
}

/* ---- module capture -------------------------------------------------- */

static bool module_known(struct cp_symbolizer *s, const char *path, uint64_t map0_start)
{
	for (size_t i = 0; i < s->n_mods; i++)
		if (s->mods[i]->map0_start == map0_start && strcmp(s->mods[i]->path, path) == 0)
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
		    s->mods[i]->file_ino == m->file_ino && s->mods[i]->file_dev == m->file_dev &&
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
		snprintf(file_name, size, "%s%s", s->root, m->path);
		fd = open(file_name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			char a[128], b[128];

			if (st.st_ino == map0->ino && major(st.st_dev) == map0->dev_major &&
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
	snprintf(file_name, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)s->pid,
		 map0->start, map0->end);
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
static const struct cp_proc_map *module_span(struct sym_module *m, const struct cp_proc_map *v,
					     size_t n, size_t first, bool *has_exec)
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
static void capture_module(struct cp_symbolizer *s, const struct cp_proc_map *v, size_t n,
			   size_t first)
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

void cp_sym_find_root(struct cp_symbolizer *s)
{
	char dir[64];

	cp_proc_live_dir(s->pid, dir, sizeof(dir));
	snprintf(s->root, sizeof(s->root), "%s/root", dir);
}

int cp_sym_report_maps(struct cp_symbolizer *s, bool adding, struct cp_error *err)
{
	size_t n = 0;
	struct cp_proc_map *v;

	cp_sym_find_root(s);
	if (cp_proc_maps_read(s->pid, &v, &n))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the memory map of process %d: %s",
			       (int)s->pid, strerror(errno));
	keep_code(s, v, n);
	if (adding)
		dwfl_report_begin_add(s->dwfl);
	else
		dwfl_report_begin(s->dwfl);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && strcmp(v[j].path, v[i].path) == 0 && v[j].ino == v[i].ino)
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
int cp_sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct sym_module *m = *userdata;

	if (modname && !strcmp(modname, "[vdso]"))
		return -1;
	if (m && !cp_local_debuginfo_may_exist(m->debuginfo_path, file_name, debuglink_file,
					       m->build_id))
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

/* Picks up modules mapped since the last look (dlopen), at most every
 * 20 ms so that addresses outside any module (JIT code) stay cheap. */
void cp_sym_maybe_refresh(struct cp_symbolizer *s)
{
	struct timespec now;
	int64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - s->last_refresh.tv_sec) * 1000 +
	     (now.tv_nsec - s->last_refresh.tv_nsec) / 1000000;
	if (ms < 20 || cp_sym_proc_start_time(s->pid) != s->start_time)
		return;
	cp_sym_report_maps(s, true, NULL);
}

/* ---- staleness ----------------------------------------------------------- */

/* Whether the file behind m was replaced on disk since it was opened: a
 * new inode with other contents (*hex: its build-id now, "" unreadable). */
static bool module_replaced(const struct cp_symbolizer *s, const struct sym_module *m, char *hex,
			    size_t size)
{
	char path[PATH_MAX + 96];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s%s", s->root, m->path);
	if (stat(path, &st) == 0 && st.st_dev == m->file_dev && st.st_ino == m->file_ino)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	hex[0] = '\0';
	if (fd >= 0) {
		cp_build_id_of_fd(fd, hex, size);
		close(fd);
	}
	return !(m->build_id && strcmp(hex, m->build_id) == 0); /* same contents */
}

int cp_symbolizer_check_stale(struct cp_symbolizer *s, struct cp_error *err)
{
	uint64_t now = cp_sym_proc_start_time(s->pid);
	int rc = 0;

	cp_sym_find_root(s);
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
		return 0; /* exited: what was captured is all there is */
	for (size_t i = 0; i < s->n_mods; i++) {
		struct sym_module *m = s->mods[i];
		char hex[128];

		if (m->is_vdso || m->via_map_files || !module_replaced(s, m, hex, sizeof(hex)))
			continue;
		cp_fail(err, CP_EXIT_OK,
			"%s was replaced on disk after attach (build-id %s, now %s); "
			"call sites are named from the copy opened at attach",
			m->path, m->build_id ? m->build_id : "none", hex[0] ? hex : "unreadable");
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
	if (cp_sym_proc_start_time(s->pid) == s->start_time)
		cp_sym_report_maps(s, true, NULL);
	return s->have_code ? cp_code_ranges_copy(&s->code, out) : -1;
}

void cp_sym_modules_free(struct cp_symbolizer *s)
{
	for (size_t i = 0; i < s->n_mods; i++) {
		free(s->mods[i]->syms);
		free(s->mods[i]->path);
		free(s->mods[i]->build_id);
		free(s->mods[i]);
	}
	free(s->mods);
}
