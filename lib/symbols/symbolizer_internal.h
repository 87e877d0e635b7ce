/* symbolizer_internal.h - what symbolize.c, symbol_modules.c and
 * symbolize_fetch.c (names fetched from a debuginfod server after the
 * window) share: the symbolizer's modules and its cache of named
 * addresses. Not for other files: lib/symbols/include/symbolize.h is the
 * interface. */
#ifndef CP_SYMBOLIZER_INTERNAL_H
#define CP_SYMBOLIZER_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "code_ranges.h"
#include "symbolize.h"

struct cp_error;

/* A function symbol, for lookup by address (libdwfl's own lookup scans the
 * whole table on every call: too slow for thousands of sites in libc). */
struct sym_entry {
	uint64_t addr, size;
	const char *name; /* owned by libdwfl's module */
	int rank;	  /* among aliases, lower is preferred */
};

/* One mapped ELF file (or the vDSO). */
struct sym_module {
	char *path;		       /* as the target maps it */
	uint64_t start, end;	       /* union of its mappings */
	uint64_t map0_start, map0_end; /* the mapping of file offset 0 */
	uint64_t bias;
	uint64_t ino;
	bool is_vdso;
	bool verified; /* opened file is the mapped one */
	bool via_map_files;
	dev_t file_dev; /* of the file we opened */
	ino_t file_ino;
	char *build_id;		    /* hex */
	const char *debuginfo_path; /* the symbolizer's */
	Dwfl_Module *mod;	    /* NULL when not verified */
	struct sym_entry *syms;	    /* sorted by addr, built on first use */
	size_t n_syms;
	bool syms_built;
};

struct cache_entry {
	struct cp_frame_info info;
	struct cp_inline_frame *inl;
	bool shallow; /* named from symbols alone: no line, no inlines yet */
};

struct cp_symbolizer {
	pid_t pid;
	uint64_t start_time;
	/* Where the target's files are opened from: /proc/PID/root, or a live
	 * thread's once its main thread has exited (cp_proc_live_dir), whose
	 * own root is gone. Found again at each report and check. */
	char root[80];
	Dwfl *dwfl;
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	/* --debuginfod, after the window: a second session whose debug file
	 * search goes on to libdw's debuginfod client. */
	Dwfl *fetch_dwfl;
	Dwfl_Callbacks fetch_cb;
	struct sym_module **mods;
	size_t n_mods, cap_mods;
	struct timespec last_refresh;
	/* The executable mappings as the maps were last read (have_code:
	 * read at least once). */
	struct cp_code_ranges code;
	bool have_code;
	/* open addressing, keys are addresses, 0 means empty slot */
	uint64_t *keys;
	struct cache_entry **vals;
	size_t cap, count;
};

/* The modules (symbol_modules.c). The start time of pid (0: gone), which
 * tells a reused pid from the process captured. */
uint64_t cp_sym_proc_start_time(pid_t pid);
/* Finds s->root again. */
void cp_sym_find_root(struct cp_symbolizer *s);
/* Reports the target's mapped files to libdwfl (adding: those mapped
 * since the last report); err may be NULL. */
int cp_sym_report_maps(struct cp_symbolizer *s, bool adding, struct cp_error *err);
/* The same, at most every 20 ms: addresses outside every module (JIT
 * code) stay cheap. */
void cp_sym_maybe_refresh(struct cp_symbolizer *s);
/* libdwfl's find_debuginfo callback: the standard search, where a debug
 * file may be on this machine, never for the vDSO. */
int cp_sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name);
void cp_sym_modules_free(struct cp_symbolizer *s);

/* Names e (at addr, in m) from m's symbol table; then, where m has DWARF,
 * with file, line and the functions inlined there. */
void cp_sym_name_by_symbol(struct cache_entry *e, struct sym_module *m, uint64_t addr);
void cp_sym_name_by_dwarf(struct cache_entry *e, struct sym_module *m, uint64_t addr);

#endif
