/* unwind_table.c - per-return-address CFI rules for the clock wrappers of a
 * live process; see unwind_table.h.
 *
 * Which addresses get a rule: every address that can follow a call or a
 * syscall inside a wrapper function. Rather than decode x86-64 (variable
 * length, prefixes), each byte offset of the function is tried as the start
 * of `call rel32` (E8), `call r/m64` (FF /2, length from ModRM/SIB) and
 * `syscall` (0F 05). The real instructions are among the tries, so every
 * real return address gets a rule; the extra addresses (inside other
 * instructions) are never return addresses and are never looked up. The
 * rule at an address comes from libdw's CFI for address - 1, the call
 * itself, which is also right for a call that ends a function. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_pages.h"
#include "error.h"
#include "frame_depth.h"
#include "grow.h"
#include "symbolize.h"
#include "unwind_table.h"

#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7
#define DWARF_REG_RA 16

/* C and Go names, matched exactly. */
static const struct {
	const char *name;
	const char *via;
	bool switches_stack; /* calls the vDSO on another stack: CFI does
				 * not describe the frame, rbp does */
} exact_names[] = {
	{ "clock_gettime", "clock_gettime", false },
	{ "__clock_gettime", "clock_gettime", false },
	{ "__clock_gettime64", "clock_gettime", false },
	{ "timespec_get", "timespec_get", false },
	{ "gettimeofday", "gettimeofday", false },
	{ "__gettimeofday", "gettimeofday", false },
	{ "time", "time", false },
	/* glibc and musl: both call clock_gettime */
	{ "clock", "clock", false },
	{ "ftime", "ftime", false },
	/* Go: nanotime1 and walltime call the vDSO on the g0 stack */
	{ "runtime.nanotime1", "runtime.nanotime", true },
	{ "runtime.walltime", "time.now", true },
	{ "runtime.walltime1", "time.now", true },
	{ "runtime.nanotime", "runtime.nanotime", false },
	/* Go 1.17+: time.now itself calls the vDSO on g0 (Go 1.16 and
	 * older: a Go function calling walltime; rbp describes both) */
	{ "time.now", "time.now", true },
	/* Go's API over them: the site is the program's line that asked */
	{ "time.Now", "time.Now", false },
	{ "time.Since", "time.Since", false },
	{ "time.Until", "time.Until", false },
};

/* Go's frames all keep rbp (amd64): the saved rbp at [rbp], the return
 * address above it, so CFA = rbp + 16. Used where the function has moved
 * rsp to another stack (g0) before calling the vDSO. */
static const struct cp_unwind_rule frame_pointer_rule = {
	.cfa_offset = 16,
	.bp_offset = -16,
	.base_reg = CP_UNWIND_BP,
};

struct builder {
	struct cp_unwind_table *t;
	bool all_code; /* rules for ordinary code too (--stacks) */
	size_t cap_entries, cap_ranges;
	struct cp_error *err;
	int failed;
};

/* libstdc++: std::chrono::_V2::steady_clock::now() is shown as
 * std::chrono::steady_clock::now. d is malloc'd; NULL when it is not. */
static char *chrono_now(char *d, size_t len)
{
	char *p;

	if (strncmp(d, "std::chrono::", 13) != 0 || len <= 7 || strcmp(d + len - 7, "::now()") != 0)
		return NULL;
	d[len - 2] = '\0';
	if ((p = strstr(d, "_V2::")))
		memmove(p, p + 5, strlen(p + 5) + 1);
	return d;
}

/* Rust: std::time::Instant::now, std::time::SystemTime::now,
 * std::sys::pal::unix::time::Timespec::now (paths vary by release). v0
 * names an inherent method <std::time::Instant>::now, the legacy scheme
 * std::time::Instant::now: shown the legacy way. NULL when it is not. */
static char *rust_now(char *d, size_t len)
{
	if (d[0] == '<' && len > 7 && strcmp(d + len - 6, ">::now") == 0 && !strstr(d, " as ")) {
		memmove(d + len - 6, d + len - 5, 6);
		memmove(d, d + 1, len - 1);
		len -= 2;
	}
	if (strncmp(d, "std::", 5) == 0 && strstr(d, "time::") && len > 5 &&
	    strcmp(d + len - 5, "::now") == 0)
		return d;
	return NULL;
}

/* A mangled C++ or Rust (legacy _Z, v0 _R) clock wrapper's display name;
 * only plausible candidates are demangled. */
static char *mangled_wrapper(const char *name)
{
	char *d, *shown;
	size_t len;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || !strstr(name, "now"))
		return NULL;
	if (!strstr(name, "chrono") && !strstr(name, "time"))
		return NULL;
	d = cp_symbol_display_name(name);
	if (!d)
		return NULL;
	len = strlen(d);
	shown = chrono_now(d, len);
	if (!shown)
		shown = rust_now(d, len);
	if (!shown)
		free(d);
	return shown;
}

/* Whether the len bytes at s are the whole of want. */
static bool names(const char *s, size_t len, const char *want)
{
	return strncmp(s, want, len) == 0 && want[len] == '\0';
}

/* Returns the wrapper's display name (malloc'd) or NULL when name is not
 * a wrapper. In the vDSO, the entries themselves are wrappers of the
 * syscall fallback. Called for every function symbol of every module
 * (~33,000 in redis's): no copy is made of a name that is none. */
static char *plumbing_name(const char *versioned, bool in_vdso, bool *switches)
{
	static const char *const vdso_entries[] = { "__vdso_clock_gettime", "__vdso_gettimeofday",
						    "__vdso_time" };
	char name[512];
	/* without a symbol version (clock_gettime@@GLIBC_2.17) */
	size_t len = versioned[0] == '@' ? strlen(versioned) : strcspn(versioned, "@");

	*switches = false;
	if (len > sizeof(name) - 1) /* a name is judged by its first 511 bytes */
		len = sizeof(name) - 1;
	/* Go 1.17+ names its assembly functions NAME.abi0 */
	if (len > 5 && strncmp(versioned + len - 5, ".abi0", 5) == 0)
		len -= 5;
	for (size_t i = 0; in_vdso && i < sizeof(vdso_entries) / sizeof(vdso_entries[0]); i++)
		if (names(versioned, len, vdso_entries[i]))
			return strdup(vdso_entries[i]);
	for (size_t i = 0; !in_vdso && i < sizeof(exact_names) / sizeof(exact_names[0]); i++)
		if (names(versioned, len, exact_names[i].name)) {
			*switches = exact_names[i].switches_stack;
			return strdup(exact_names[i].via);
		}
	if (in_vdso || versioned[0] != '_' || (versioned[1] != 'Z' && versioned[1] != 'R'))
		return NULL;
	snprintf(name, sizeof(name), "%.*s", (int)len, versioned);
	return mangled_wrapper(name);
}

static int via_id(struct builder *b, char *name)
{
	struct cp_unwind_table *t = b->t;
	for (size_t i = 0; i < t->n_via; i++)
		if (strcmp(t->via[i], name) == 0) {
			free(name);
			return (int)i;
		}
	if (cp_grow(&t->via, &t->via_cap, t->n_via + 1, sizeof(*t->via))) {
		free(name);
		return -1;
	}
	t->via[t->n_via] = name;
	return (int)t->n_via++;
}

static int push_entry(struct builder *b, uint64_t pc, const struct cp_unwind_rule *r)
{
	struct cp_unwind_table *t = b->t;

	if (cp_grow(&t->entries, &b->cap_entries, t->n + 1, sizeof(*t->entries)))
		return -1;
	memset(&t->entries[t->n], 0, sizeof(t->entries[0]));
	t->entries[t->n].pc = pc;
	t->entries[t->n].rule = *r;
	t->n++;
	return 0;
}

static bool have_range(struct builder *b, uint64_t start)
{
	for (size_t i = 0; i < b->t->n_ranges; i++)
		if (b->t->ranges[i].start == start)
			return true;
	return false;
}

static int push_range(struct builder *b, uint64_t start, uint64_t end, int via)
{
	struct cp_unwind_table *t = b->t;

	if (cp_grow(&t->ranges, &b->cap_ranges, t->n_ranges + 1, sizeof(*t->ranges)))
		return -1;
	t->ranges[t->n_ranges++] = (struct cp_plumbing_range){ start, end, (uint16_t)via };
	return 0;
}

/* Length of a ModRM operand (ModRM byte, SIB, displacement). */
static size_t modrm_len(const uint8_t *p, size_t avail)
{
	uint8_t mod, rm;
	size_t len = 1;

	if (avail < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4; /* rip-relative */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

/* An expression "CFA + n" of two operations: n, or 0 when it is not one. */
static int64_t cfa_plus(const Dwarf_Op *ops, size_t nops)
{
	if (nops != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst)
		return 0;
	return (int64_t)ops[1].number;
}

/* The CFA as rsp or rbp plus an offset that fits 32 bits. 0, or 1 when it
 * is any other expression. */
static int cfa_rule(Dwarf_Frame *f, struct cp_unwind_rule *r)
{
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != DWARF_REG_RSP && ops[0].number != DWARF_REG_RBP))
		return 1;
	r->base_reg = ops[0].number == DWARF_REG_RSP ? CP_UNWIND_SP : CP_UNWIND_BP;
	if ((int64_t)ops[0].number2 < INT32_MIN || (int64_t)ops[0].number2 > INT32_MAX)
		return 1;
	r->cfa_offset = (int32_t)ops[0].number2;
	return 0;
}

/* The last CFI row looked up: every address in [start, end) has its rule
 * (a function's calls mostly share one row, so most lookups are saved). */
struct row_cache {
	Dwarf_Addr start, end;
	int rc;
	struct cp_unwind_rule rule;
};

/* The CFA rule at module-relative address rel. 0: ok, 1: a rule the walk
 * cannot follow, -1: no CFI there. */
static int rule_at(Dwarf_CFI *cfi, Dwarf_Addr rel, struct cp_unwind_rule *r, struct row_cache *row)
{
	Dwarf_Frame *f;
	Dwarf_Op *ops, mem[3];
	size_t nops;
	int64_t bp_at;
	int rc = 1;

	if (rel >= row->start && rel < row->end) {
		*r = row->rule;
		return row->rc;
	}
	if (dwarf_cfi_addrframe(cfi, rel, &f) != 0)
		return -1;
	if (dwarf_frame_info(f, &row->start, &row->end, NULL) < 0)
		row->start = row->end = 0;
	memset(r, 0, sizeof(*r));
	if (cfa_rule(f, r))
		goto out;
	/* the return address must sit at CFA - 8 */
	if (dwarf_frame_register(f, DWARF_REG_RA, mem, &ops, &nops) != 0 || nops != 2 ||
	    cfa_plus(ops, nops) != -8)
		goto out;
	/* rbp: untouched, or saved at CFA + n */
	if (dwarf_frame_register(f, DWARF_REG_RBP, mem, &ops, &nops) != 0)
		goto out;
	bp_at = cfa_plus(ops, nops);
	if (bp_at != 0 && bp_at >= INT32_MIN && bp_at <= INT32_MAX)
		r->bp_offset = (int32_t)bp_at;
	else if (nops != 0)
		goto out;
	rc = 0;
out:
	free(f);
	row->rc = rc;
	row->rule = *r;
	return rc;
}

/* The bytes of [addr, addr+len) from the module's ELF file. */
static const uint8_t *code_bytes(Dwfl_Module *mod, uint64_t addr, size_t len)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;

	if (!elf)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		uint64_t rel = addr - bias;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || rel < sh.sh_addr ||
		    rel + len > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || rel - sh.sh_addr + len > d->d_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (rel - sh.sh_addr);
	}
	return NULL;
}

static void note_unsupported(struct builder *b, const char *what, const char *why)
{
	struct cp_unwind_table *t = b->t;

	if (!t->n_unsupported++)
		snprintf(t->warning, sizeof(t->warning),
			 "cannot step out of %s (%s): clock reads through it are "
			 "attributed to it",
			 what, why);
}

/* Adds a rule for every return address in [start, start + size): via for
 * a wrapper, CP_VIA_NONE for ordinary code (--stacks). what names the code
 * in warnings, NULL to stay quiet (ordinary code is best effort). */
/* Where a call (call rel32, call r/m64) or a syscall starting at code[i]
 * returns to; 0 when none starts there. */
static size_t call_end(const uint8_t *code, size_t size, size_t i)
{
	if (code[i] == 0xE8)
		return i + 5;
	if (code[i] == 0x0F && i + 1 < size && code[i + 1] == 0x05)
		return i + 2;
	if (code[i] == 0xFF && i + 1 < size && ((code[i + 1] >> 3) & 7) == 2) {
		size_t l = modrm_len(code + i + 1, size - i - 1);

		return l ? i + 1 + l : 0;
	}
	return 0;
}

static void add_rules(struct builder *b, Dwfl_Module *mod, Dwarf_CFI *cfi, Dwarf_Addr cfi_bias,
		      uint64_t start, uint64_t size, int via, const char *what,
		      const struct cp_unwind_rule *fixed)
{
	const uint8_t *code = code_bytes(mod, start, size);
	struct row_cache row = { 0 };

	if (!code) {
		if (what)
			note_unsupported(b, what, "its code is not in its ELF file");
		return;
	}
	for (size_t i = 0; i < size; i++) {
		size_t next = call_end(code, size, i);
		struct cp_unwind_rule r;
		int rc;

		if (!next || next > size)
			continue;
		if (fixed) {
			r = *fixed;
			rc = 0;
		} else {
			rc = rule_at(cfi, start + next - 1 - cfi_bias, &r, &row);
		}
		if (rc < 0)
			continue;
		if (rc > 0) {
			if (what)
				note_unsupported(b, what, "its CFA rule is not sp/bp + offset");
			continue;
		}
		r.via = (uint16_t)via;
		if (push_entry(b, start + next, &r) != 0) {
			b->failed = 1;
			return;
		}
	}
}

static bool covered_by_cfi(Dwarf_CFI *cfi, Dwarf_Addr cfi_bias, uint64_t start)
{
	Dwarf_Frame *f;

	if (!cfi || dwarf_cfi_addrframe(cfi, start - cfi_bias, &f) != 0)
		return false;
	free(f);
	return true;
}

struct depth_emit {
	struct builder *b;
	uint64_t start;
	int via;
};

static void push_depth_rule(void *arg, size_t ret, const struct cp_unwind_rule *r)
{
	struct depth_emit *e = arg;
	struct cp_unwind_rule rule = *r;

	rule.via = (uint16_t)e->via;
	if (push_entry(e->b, e->start + ret, &rule) != 0)
		e->b->failed = 1;
}

/* A wrapper without CFI (a static musl executable's C library): rules from
 * the stack depth its code keeps (frame_depth.h). */
static void add_depth_rules(struct builder *b, Dwfl_Module *mod, uint64_t start, uint64_t size,
			    int via, const char *what)
{
	const uint8_t *code = code_bytes(mod, start, size);
	struct depth_emit e = { b, start, via };

	if (!code)
		note_unsupported(b, what, "its code is not in its ELF file");
	else if (cp_frame_depth_rules(code, size, push_depth_rule, &e))
		note_unsupported(b, what, "it has no CFI and its frame size is not in its code");
}

static void add_function(struct builder *b, Dwfl_Module *mod, Dwarf_CFI *cfi, Dwarf_Addr cfi_bias,
			 uint64_t start, uint64_t size, char *via_name, bool switches)
{
	char what[160];
	int via;

	snprintf(what, sizeof(what), "%s", via_name);
	via = via_id(b, via_name);
	if (via < 0 || push_range(b, start, start + size, via) != 0) {
		b->failed = 1;
		return;
	}
	if (switches) {
		add_rules(b, mod, NULL, 0, start, size, via, what, &frame_pointer_rule);
		return;
	}
	if (!covered_by_cfi(cfi, cfi_bias, start)) {
		add_depth_rules(b, mod, start, size, via, what);
		return;
	}
	add_rules(b, mod, cfi, cfi_bias, start, size, via, what, NULL);
}

/* One function symbol of a module: a clock wrapper gets its rules and
 * name; with all_code, any other function gets plain rules. *from: the
 * ELF file the symbol was read from. */
static void add_symbol(struct builder *b, Dwfl_Module *mod, Dwarf_CFI *cfi, Dwarf_Addr cfi_bias,
		       int i, bool in_vdso, Elf **from)
{
	GElf_Sym sym;
	GElf_Addr addr;
	const char *sname = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, from, NULL);
	bool switches;
	char *via;

	/* IFUNCs (glibc's gettimeofday, time) resolve straight to the vDSO:
	 * their code is the resolver, not a wrapper */
	if (!sname || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0 ||
	    sym.st_shndx == SHN_UNDEF)
		return;
	via = plumbing_name(sname, in_vdso, &switches);
	if (!via) {
		if (b->all_code && cfi && !in_vdso && !have_range(b, addr))
			add_rules(b, mod, cfi, cfi_bias, addr, sym.st_size, CP_VIA_NONE, NULL,
				  NULL);
		return;
	}
	if (have_range(b, addr)) {
		free(via); /* an alias of one already added */
		return;
	}
	add_function(b, mod, cfi, cfi_bias, addr, sym.st_size, via, switches);
}

/* The files a module's scan read: its own, and those its symbols came
 * from (its debug file, where that has the symbol table). */
#define SCANNED_FILES 3

static void note_file(Elf **files, Elf *e)
{
	for (int k = 0; e && k < SCANNED_FILES; k++) {
		if (files[k] == e)
			return;
		if (!files[k]) {
			files[k] = e;
			return;
		}
	}
}

static int module_cb(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	struct builder *b = arg;
	Dwarf_Addr cfi_bias = 0, bias;
	Dwarf_CFI *cfi;
	Elf *files[SCANNED_FILES] = { dwfl_module_getelf(mod, &bias) };
	bool in_vdso = strcmp(name, "[vdso]") == 0;
	int n;

	(void)ud;
	(void)start;
	n = dwfl_module_getsymtab(mod);
	if (n <= 0)
		return DWARF_CB_OK;
	cfi = dwfl_module_eh_cfi(mod, &cfi_bias);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &cfi_bias);
	for (int i = 1; i < n && !b->failed; i++) {
		Elf *from = NULL;

		add_symbol(b, mod, cfi, cfi_bias, i, in_vdso, &from);
		note_file(files, from);
	}
	/* Every symbol was read, and the wrappers' code and CFI: their pages
	 * go now rather than stay in clockprof's RSS until the run ends, one
	 * module's worth at a time instead of all of them (elf_pages.h). The
	 * few that naming reads again after the window come back then. */
	for (int k = 0; k < SCANNED_FILES; k++)
		cp_elf_release_pages(files[k]);
	return b->failed ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct cp_unwind_entry *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cp_plumbing_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int cp_unwind_table_build_from(struct cp_symbolizer *s, struct cp_unwind_table *out,
			       struct cp_error *err)
{
	return cp_unwind_table_build_all(s, false, out, err);
}

int cp_unwind_table_build_all(struct cp_symbolizer *s, bool all_code, struct cp_unwind_table *out,
			      struct cp_error *err)
{
	struct builder b = { .t = out, .err = err, .all_code = all_code };
	size_t w = 0;

	memset(out, 0, sizeof(*out));
	dwfl_getmodules((Dwfl *)cp_symbolizer_dwfl(s), module_cb, &b, 0);
	if (b.failed) {
		cp_unwind_table_free(out);
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory building the unwind table");
	}
	qsort(out->entries, out->n, sizeof(out->entries[0]), cmp_entry);
	/* One rule per pc. A wrapper's code can also be reached under an
	 * alias that is not a wrapper name (all_code): the wrapper's rule,
	 * which carries its via, wins. */
	for (size_t i = 0; i < out->n; i++) {
		if (!w || out->entries[w - 1].pc != out->entries[i].pc)
			out->entries[w++] = out->entries[i];
		else if (out->entries[w - 1].rule.via == CP_VIA_NONE)
			out->entries[w - 1] = out->entries[i];
	}
	out->n = w;
	qsort(out->ranges, out->n_ranges, sizeof(out->ranges[0]), cmp_range);
	return 0;
}

int cp_unwind_table_build(pid_t pid, struct cp_unwind_table *out, struct cp_error *err)
{
	struct cp_symbolizer *s = cp_symbolizer_open(pid, err);
	int rc;

	memset(out, 0, sizeof(*out));
	if (!s)
		return -1;
	rc = cp_unwind_table_build_from(s, out, err);
	cp_symbolizer_close(s);
	return rc;
}

static int cmp_entry_pc(const void *key, const void *elem)
{
	uint64_t pc = *(const uint64_t *)key, at = ((const struct cp_unwind_entry *)elem)->pc;

	return (pc > at) - (pc < at);
}

const struct cp_unwind_rule *cp_unwind_table_lookup(const struct cp_unwind_table *t, uint64_t pc)
{
	const struct cp_unwind_entry *e =
		t->n ? bsearch(&pc, t->entries, t->n, sizeof(*t->entries), cmp_entry_pc) : NULL;

	return e ? &e->rule : NULL;
}

/* Ranges do not overlap: pc is before, inside or after each. */
static int cmp_range_pc(const void *key, const void *elem)
{
	uint64_t pc = *(const uint64_t *)key;
	const struct cp_plumbing_range *r = elem;

	return pc < r->start ? -1 : pc >= r->end ? 1 : 0;
}

const struct cp_plumbing_range *cp_unwind_table_range(const struct cp_unwind_table *t, uint64_t pc)
{
	return t->n_ranges ?
		       bsearch(&pc, t->ranges, t->n_ranges, sizeof(*t->ranges), cmp_range_pc) :
		       NULL;
}

/* One frame out by rule r: the caller's pc, sp and bp (the BPF program's
 * cfi_step). 0, or -1 when a read failed. */
static int rule_hop(const struct cp_unwind_rule *r, uint64_t *pc, uint64_t *sp, uint64_t *bp,
		    int (*read_u64)(void *ctx, uint64_t addr, uint64_t *val), void *ctx)
{
	uint64_t cfa = (r->base_reg == CP_UNWIND_BP ? *bp : *sp) + (int64_t)r->cfa_offset;

	if (r->bp_offset && read_u64(ctx, cfa + (int64_t)r->bp_offset, bp) != 0)
		return -1;
	if (read_u64(ctx, cfa - 8, pc) != 0)
		return -1;
	*sp = cfa;
	return 0;
}

uint64_t cp_unwind_walk(const struct cp_unwind_table *t, uint64_t pc, uint64_t sp, uint64_t bp,
			int (*read_u64)(void *ctx, uint64_t addr, uint64_t *val), void *ctx,
			int *via, int *hops)
{
	*via = -1;
	*hops = 0;
	for (int i = 0; i < CP_UNWIND_MAX_HOPS; i++) {
		const struct cp_unwind_rule *r = cp_unwind_table_lookup(t, pc);

		if (!r || r->via == CP_VIA_NONE)
			break;
		if (rule_hop(r, &pc, &sp, &bp, read_u64, ctx))
			return 0;
		*via = r->via;
		(*hops)++;
	}
	return pc;
}

/* The frame-pointer chain's step where no rule covers pc: rbp points at
 * the caller's saved rbp, the return address above it; a chain that does
 * not climb has ended. */
static int frame_pointer_hop(uint64_t *pc, uint64_t *sp, uint64_t *bp,
			     int (*read_u64)(void *ctx, uint64_t addr, uint64_t *val), void *ctx)
{
	uint64_t saved_bp, ret;

	if (!*bp || read_u64(ctx, *bp, &saved_bp) || read_u64(ctx, *bp + 8, &ret) ||
	    saved_bp <= *bp)
		return -1;
	*pc = ret;
	*sp = *bp + 16;
	*bp = saved_bp;
	return 0;
}

void cp_unwind_stack(const struct cp_unwind_table *t, uint64_t ip, int mode, uint64_t sp,
		     uint64_t bp, int (*read_u64)(void *ctx, uint64_t addr, uint64_t *val),
		     void *ctx, struct cp_stack_key *key)
{
	uint64_t pc = 0;

	memset(key, 0, sizeof(*key));
	key->pc[0] = ip;
	/* Where the read returns to, as read_return finds it. */
	if (mode == CP_SITE_FRAME) {
		uint64_t saved_bp;

		if (read_u64(ctx, bp, &saved_bp) || read_u64(ctx, bp + 8, &pc))
			return;
		sp = bp + 16;
		bp = saved_bp;
	} else {
		if (read_u64(ctx, sp, &pc))
			return;
		sp += 8;
	}
	for (int n = 1; n < CP_STACK_DEPTH && pc; n++) {
		const struct cp_unwind_rule *r = cp_unwind_table_lookup(t, pc);

		key->pc[n] = pc;
		if (r ? rule_hop(r, &pc, &sp, &bp, read_u64, ctx) :
			frame_pointer_hop(&pc, &sp, &bp, read_u64, ctx))
			break;
	}
}

void cp_unwind_table_free(struct cp_unwind_table *t)
{
	if (!t)
		return;
	cp_free_strings(t->via, t->n_via);
	free(t->entries);
	free(t->ranges);
	memset(t, 0, sizeof(*t));
}
