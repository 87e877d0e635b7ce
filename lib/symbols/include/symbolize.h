/* symbolize.h - turn addresses of a live process into function, file, line.
 *
 * clockprof must name the exact place a clock is read, in the process it
 * probed, without stopping it. The symbolizer captures the target's modules
 * once (cp_symbolizer_open, ideally at attach): each ELF file is opened
 * through /proc/PID/root so containers work, checked against the inode and
 * build-id actually mapped, and kept open, so a binary replaced on disk later
 * still symbolizes from the copy that ran; the vDSO is read from
 * /proc/PID/mem. libdwfl then finds separate debug files by build-id and
 * .gnu_debuglink, falls back to .symtab/.dynsym, and gives the inline chain.
 * No ptrace: the target never stops. */
#ifndef CP_SYMBOLIZE_H
#define CP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cp_code_ranges;
struct cp_error;
struct cp_symbolizer;
struct Dwfl;

/* A function inlined at the address, with the place it was inlined into its
 * caller (the next entry out, or cp_frame_info.function for the first). */
struct cp_inline_frame {
	const char *function;  /* demangled */
	const char *call_file; /* NULL when unknown */
	int call_line;	       /* 0 when unknown */
};

/* Everything known about one address. Strings belong to the symbolizer and
 * live until cp_symbolizer_close. */
struct cp_frame_info {
	uint64_t addr;
	const char *function;		       /* the real (outermost) function, demangled
				 * C++ and Rust names; NULL when unknown */
	uint64_t function_offset;	       /* addr - start of function */
	const char *file;		       /* source of addr itself (innermost inline),
				 * NULL without debug info */
	const char *comp_dir;		       /* the compile directory of addr's unit
				 * (DW_AT_comp_dir): what a relative file,
				 * or call_file, is relative to; NULL when
				 * unknown */
	int line, column;		       /* 0 when unknown */
	const struct cp_inline_frame *inlined; /* outermost first */
	size_t n_inlined;
	const char *module;	/* path as the target maps it, "[vdso]";
				 * NULL when addr is in no known module */
	const char *build_id;	/* lowercase hex, NULL when absent */
	uint64_t module_offset; /* addr in the ELF file's own terms */
	bool stale;		/* the mapped file could not be read back
				 * (replaced on disk before we opened it):
				 * no name is given rather than a wrong one */
};

/* Captures the modules of live process pid. CP_EXIT_PROFILE when the
 * process does not exist or cannot be read. */
struct cp_symbolizer *cp_symbolizer_open(pid_t pid, struct cp_error *err);

/* How many files (and the vDSO) it found mapped: 0 for a process whose
 * memory is gone (exiting, a zombie), whose maps read empty. */
size_t cp_symbolizer_modules(const struct cp_symbolizer *s);

/* Where the process's code is (code_ranges.h): its maps read again now,
 * or, once it has exited (or its pid is another's), as the symbolizer
 * last read them. *out is the caller's (cp_code_ranges_free); -1 when
 * none is known, or out of memory. */
int cp_symbolizer_code(struct cp_symbolizer *s, struct cp_code_ranges *out);

/* Symbolizes addr (pass a return address minus 1 for a call site). Results
 * are cached per address. Returns 0, or -1 when addr is in no module even
 * after re-reading the maps (out->module is then NULL). */
int cp_symbolize(struct cp_symbolizer *s, uint64_t addr, struct cp_frame_info *out);

/* The same, from the symbol tables alone (the ELF symbol or PLT stub
 * covering addr: no file, line or inlined functions): no DWARF is read, so
 * a large compressed debug file (libc6-dbg's libc) is not inflated to name
 * a function. A later cp_symbolize of addr adds what DWARF says. */
int cp_symbolize_symbol(struct cp_symbolizer *s, uint64_t addr, struct cp_frame_info *out);

/* A module in which addresses were left without a name: a stripped file
 * whose debug file is not on this machine. Strings belong to the
 * symbolizer. */
struct cp_unnamed_module {
	const char *path;     /* as the target maps it */
	const char *build_id; /* lowercase hex, NULL when absent */
	size_t addresses;     /* addresses named so far without a name */
};

/* Up to max such modules among the addresses named so far; how many. */
size_t cp_symbolizer_unnamed(struct cp_symbolizer *s, struct cp_unnamed_module *out, size_t max);

/* --debuginfod, once, after the window: for each module with unnamed
 * addresses, the debug file is looked for again, this time going on to
 * libdw's debuginfod client (the servers of DEBUGINFOD_URLS, within
 * DEBUGINFOD_TIMEOUT and DEBUGINFOD_MAXTIME), and those addresses are
 * named from what it gives. Returns how many addresses are named now.
 * Never called before or during a window: a download would hold it. */
size_t cp_symbolizer_fetch_debuginfo(struct cp_symbolizer *s);

/* Writes a display name for a frame: "function", "function+0x1a" when
 * with_offset, "module+0x1234" without a symbol, "0x7f..." outside any
 * module. The innermost inlined function is not included. */
void cp_frame_label(const struct cp_frame_info *f, bool with_offset, char *buf, size_t size);

/* Checks that what was captured still describes pid: returns 0 when it does;
 * 1 with err->msg set (exit_code 0) for a change that does not make the
 * results wrong (a file replaced on disk after it was opened); -1 when
 * results may be wrong (the pid now belongs to another process, or a mapped
 * file was already replaced when it was opened and could not be read). */
int cp_symbolizer_check_stale(struct cp_symbolizer *s, struct cp_error *err);

void cp_symbolizer_close(struct cp_symbolizer *s);

/* The libdwfl session holding the captured modules (for lib/symbols/unwind_table.c).
 * Valid until cp_symbolizer_close. */
struct Dwfl *cp_symbolizer_dwfl(struct cp_symbolizer *s);

/* The name to show for a symbol: demangled C++ or Rust (legacy mangling,
 * through lib/symbols/demangle.h) without Rust's "::h<hash>" suffix, or a copy of
 * name when it is not mangled. malloc'd. */
char *cp_symbol_display_name(const char *name);

/* Start time of pid (field 22 of /proc/PID/stat, clock ticks since boot), or
 * 0 when the process does not exist: two processes with one pid differ. */

#endif
