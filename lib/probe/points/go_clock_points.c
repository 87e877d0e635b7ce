/* go_clock_points.c - the clock points of a Go executable (see
 * clock_points.h).
 *
 * Why this file exists: the Go runtime calls the vDSO itself, never libc,
 * so neither libc's clock_gettime nor a PLT stub sees a Go program's
 * reads, and the vDSO cannot be uprobed. Its callers are found instead.
 * Their names change between Go versions (runtime.nanotime before 1.14,
 * nanotime1 after, .abi0 suffixes from 1.17, time.now in assembly from
 * 1.17 on amd64), but every one of them loads the vDSO function pointer
 * the runtime filled in at start-up (runtime.vdsoClockgettimeSym, ...)
 * and calls it through a register. So a function is a vDSO caller when
 * its code loads that pointer; that finds them all, and a function that
 * merely calls a caller (time.now before Go 1.17, runtime.nanotime since
 * 1.14) is never one, so no read counts twice.
 *  - runtime.nanotime*, runtime.walltime*: one read per call, of a known
 *    clock; probed at their entry (return address on top of the stack).
 *  - any other caller (time.now: REALTIME, then MONOTONIC): each
 *    `call *%reg` through the pointer is probed, the clock id in rdi; Go
 *    assembly keeps a frame pointer and may have moved to the g0 stack,
 *    so the return address is found from rbp. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock_points.h"

/* The runtime's vDSO function pointers, by the names Go has given them. */
enum go_vdso_ptr { GO_PTR_CLOCK_GETTIME, GO_PTR_GETTIMEOFDAY, GO_PTR_MAX };

static const char *const go_ptr_names[][2] = {
	[GO_PTR_CLOCK_GETTIME] = { "runtime.vdsoClockgettimeSym",
				   "runtime.__vdso_clock_gettime_sym" },
	[GO_PTR_GETTIMEOFDAY] = { "runtime.vdsoGettimeofdaySym",
				  "runtime.__vdso_gettimeofday_sym" },
};

struct go_text {
	uint64_t addr;	 /* sh_addr of the executable section */
	uint64_t offset; /* its file offset */
	const uint8_t *bytes;
	size_t size;
};

struct go_scan {
	Elf *elf;
	Elf_Data *syms;
	size_t nsyms, strtab; /* symbol count, string section index */
	bool buildinfo;	      /* a .go.buildinfo section */
	struct go_text text;
	uint64_t ptr[GO_PTR_MAX]; /* vaddr of each pointer, 0: none */
};

static const char *sym_name(const struct go_scan *s, const GElf_Sym *sym)
{
	return elf_strptr(s->elf, s->strtab, sym->st_name);
}

static void note_section(struct go_scan *s, Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
	Elf_Data *data;

	if (sh->sh_type == SHT_SYMTAB && sh->sh_entsize) {
		s->syms = elf_getdata(scn, NULL);
		s->nsyms = sh->sh_size / sh->sh_entsize;
		s->strtab = sh->sh_link;
	} else if (!strcmp(name, ".go.buildinfo")) {
		s->buildinfo = true;
	} else if (!strcmp(name, ".text") && sh->sh_type == SHT_PROGBITS &&
		   (data = elf_getdata(scn, NULL)) && data->d_buf) {
		s->text = (struct go_text){ sh->sh_addr, sh->sh_offset, data->d_buf, data->d_size };
	}
}

static void find_sections(struct go_scan *s)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(s->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(s->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(s->elf, shstrndx, sh.sh_name);
		if (name)
			note_section(s, scn, &sh, name);
	}
}

/* Finds the vDSO pointers; true when the file is a Go executable. */
static bool find_go_runtime(struct go_scan *s)
{
	bool go = s->buildinfo;
	GElf_Sym sym;

	for (size_t i = 0; s->syms && i < s->nsyms; i++) {
		const char *name;

		if (!gelf_getsym(s->syms, (int)i, &sym) || !(name = sym_name(s, &sym)))
			continue;
		if (!strcmp(name, "runtime.buildVersion"))
			go = true;
		for (int p = 0; p < GO_PTR_MAX; p++)
			if (!strcmp(name, go_ptr_names[p][0]) || !strcmp(name, go_ptr_names[p][1]))
				s->ptr[p] = sym.st_value;
	}
	return go;
}

/* `mov disp32(%rip), %reg` (REX.W 8b /r, mod 00 rm 101) at code[i] loading
 * a vDSO pointer: which one, its register in *reg; -1 when it is not. */
static int vdso_load_at(const struct go_scan *s, uint64_t vaddr, const uint8_t *code, size_t i,
			size_t len, int *reg)
{
	int32_t disp;
	uint64_t target;

	if (i + 7 > len || (code[i] & 0xfb) != 0x48 || code[i + 1] != 0x8b ||
	    (code[i + 2] & 0xc7) != 0x05)
		return -1;
	memcpy(&disp, code + i + 3, sizeof(disp));
	target = vaddr + i + 7 + (int64_t)disp;
	for (int p = 0; p < GO_PTR_MAX; p++) {
		if (s->ptr[p] && target == s->ptr[p]) {
			*reg = (code[i] & 0x04) << 1 | (code[i + 2] >> 3 & 7);
			return p;
		}
	}
	return -1;
}

/* The first `call *%reg` (ff /2 with mod 11, REX.B for r8-r15) in
 * code[from, from + 64): the call through the pointer just loaded (Go
 * tests it for 0 in between). Its index, or 0 when there is none. */
static size_t indirect_call_after(const uint8_t *code, size_t from, size_t len, int reg)
{
	uint8_t modrm = (uint8_t)(0xd0 | (reg & 7));

	for (size_t i = from; i + 2 <= len && i < from + 64; i++) {
		bool rex_b = i > 0 && (code[i - 1] & 0xf1) == 0x41;

		if (code[i] != 0xff || code[i + 1] != modrm)
			continue;
		if (rex_b == (reg >= 8))
			return reg >= 8 ? i - 1 : i;
	}
	return 0;
}

/* A function reading one clock per call, probed at its entry. */
static int entry_clock(const char *name)
{
	static const char *const monotonic[] = {
		"runtime.nanotime1",
		"runtime.nanotime1.abi0",
		"runtime.nanotime",
		"runtime.nanotime.abi0",
	};
	static const char *const realtime[] = {
		"runtime.walltime",
		"runtime.walltime.abi0",
		"runtime.walltime1",
		"runtime.walltime1.abi0",
	};

	for (size_t i = 0; i < 4; i++) {
		if (!strcmp(name, monotonic[i]))
			return CLOCK_MONOTONIC;
		if (!strcmp(name, realtime[i]))
			return CLOCK_REALTIME;
	}
	return -1;
}

/* Adds a point at each call through a vDSO pointer in the function; the
 * number of vDSO pointer loads in it is returned in *loads. */
static int add_call_points(const struct go_scan *s, const GElf_Sym *fn, const char *name,
			   struct cp_clock_points *out, int *loads)
{
	const uint8_t *code = s->text.bytes + (fn->st_value - s->text.addr);
	size_t len = fn->st_size, call;
	char what[96];
	int reg, ptr;

	for (size_t i = 0; i < len; i++) {
		if ((ptr = vdso_load_at(s, fn->st_value, code, i, len, &reg)) < 0)
			continue;
		++*loads;
		call = indirect_call_after(code, i + 7, len, reg);
		if (!call || !out)
			continue;
		snprintf(what, sizeof(what), "%s+%zu", name, call);
		if (cp_clock_points_add(out, s->text.offset + (fn->st_value - s->text.addr) + call,
					ptr == GO_PTR_CLOCK_GETTIME ? CP_ENTRY_CLOCK_GETTIME :
								      CP_ENTRY_GETTIMEOFDAY,
					ptr == GO_PTR_CLOCK_GETTIME ? CP_CLOCK_FROM_ARG :
								      CLOCK_REALTIME,
					CP_SITE_FRAME, what))
			return -1;
	}
	return 0;
}

static bool in_text(const struct go_scan *s, const GElf_Sym *sym)
{
	return GELF_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_size &&
	       sym->st_value >= s->text.addr &&
	       sym->st_value + sym->st_size <= s->text.addr + s->text.size;
}

/* One function: an entry point, call points, or nothing when it does not
 * load a vDSO pointer. */
static int add_function(const struct go_scan *s, const GElf_Sym *fn, const char *name,
			struct cp_clock_points *out)
{
	int clock = entry_clock(name), loads = 0;

	if (clock < 0)
		return add_call_points(s, fn, name, out, &loads);
	if (add_call_points(s, fn, name, NULL, &loads) || !loads)
		return 0;
	return cp_clock_points_add(out, s->text.offset + (fn->st_value - s->text.addr),
				   CP_ENTRY_CLOCK_GETTIME, clock, CP_SITE_STACK_TOP, name);
}

static int add_functions(const struct go_scan *s, struct cp_clock_points *out)
{
	GElf_Sym sym;

	for (size_t i = 0; i < s->nsyms; i++) {
		const char *name;

		if (!gelf_getsym(s->syms, (int)i, &sym) || !in_text(s, &sym) ||
		    !(name = sym_name(s, &sym)))
			continue;
		if (add_function(s, &sym, name, out))
			return -1;
	}
	return 0;
}

static int scan(struct go_scan *s, struct cp_clock_points *out)
{
	find_sections(s);
	if (!find_go_runtime(s))
		return 0;
	if (!s->syms || !s->text.bytes) {
		if (!out->unseen[0])
			snprintf(
				out->unseen, sizeof(out->unseen), "%s",
				"the Go runtime's vDSO calls (a stripped Go executable: no symbol table)");
		return 0;
	}
	return add_functions(s, out);
}

int cp_go_clock_points_find(const char *path, struct cp_clock_points *out)
{
	struct go_scan s = { 0 };
	int fd, rc = 0;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	s.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (s.elf && elf_kind(s.elf) == ELF_K_ELF)
		rc = scan(&s, out);
	if (s.elf)
		elf_end(s.elf);
	close(fd);
	return rc;
}
