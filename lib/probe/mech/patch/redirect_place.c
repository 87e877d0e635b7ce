/* redirect_place.c - see redirect_place.h. */
#include <Zydis/Zydis.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "foreign_uprobes.h"
#include "proc_maps.h"
#include "procfs.h"
#include "redirect_place.h"

#define CODE_MAX 65536 /* the most of a function looked at */

/* The executable mapping of the file (dev and inode of st) that holds
 * file offset off (UINT64_MAX: any). */
static bool find_mapping(pid_t pid, const struct stat *st, uint64_t off, struct cp_proc_map *out)
{
	struct cp_proc_map *maps;
	size_t n;
	bool found = false;

	if (cp_proc_maps_read(pid, &maps, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++) {
		char link[64];
		struct stat ms;

		if (maps[i].perms[2] != 'x' ||
		    (off != UINT64_MAX && (off < maps[i].offset ||
					   off >= maps[i].offset + (maps[i].end - maps[i].start))))
			continue;
		snprintf(link, sizeof(link), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)maps[i].start, (unsigned long long)maps[i].end);
		if (!stat(link, &ms) && ms.st_dev == st->st_dev && ms.st_ino == st->st_ino) {
			*out = maps[i];
			out->path = NULL; /* its text is freed with maps */
			found = true;
		}
	}
	free(maps);
	return found;
}

/* Whether the file is a Go program: its functions check their stack
 * first, and its nil checks are faults (redirect_plan.h). */
static bool is_go(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(name, ".gopclntab") || !strcmp(name, ".go.buildinfo")))
			return true;
	}
	return false;
}

bool cp_redirect_place_maps(pid_t pid, const struct stat *st)
{
	struct cp_proc_map m;

	return find_mapping(pid, st, UINT64_MAX, &m);
}

/* The file's executable segment that holds off; false when none does. */
static bool segment_of(Elf *elf, uint64_t off, GElf_Phdr *seg)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, seg) && seg->p_type == PT_LOAD &&
		    (seg->p_flags & PF_X) && off >= seg->p_offset &&
		    off < seg->p_offset + seg->p_filesz)
			return true;
	return false;
}

struct neighbours {
	uint64_t lo, hi;
	uint64_t prev_start, prev_end, next;
};

static int note_neighbour(const GElf_Sym *sym, const char *name, void *arg)
{
	struct neighbours *nb = arg;

	(void)name;
	if (sym->st_shndx == SHN_UNDEF || !sym->st_value)
		return 0;
	if (sym->st_value < nb->lo && sym->st_value >= nb->prev_start) {
		nb->prev_end = sym->st_value == nb->prev_start && nb->prev_end ?
				       nb->prev_end :
				       (sym->st_size ? sym->st_value + sym->st_size : 0);
		nb->prev_start = sym->st_value;
	}
	if (sym->st_value >= nb->hi && (!nb->next || sym->st_value < nb->next))
		nb->next = sym->st_value;
	return 0;
}

/* The symbols next to [lo, hi) (vaddrs): the nearest that starts before
 * lo (its start, and its end: 0 when it has no size) and the nearest that
 * starts at hi or after (next; 0 none). */
static struct neighbours neighbours(Elf *elf, uint64_t lo, uint64_t hi)
{
	struct neighbours nb = { .lo = lo, .hi = hi };

	cp_elf_each_symbol(elf, note_neighbour, &nb);
	return nb;
}

/* Whether every byte of [from, to) of the file (file bytes at buf) is
 * padding: nops and int3s. */
static bool is_padding(const uint8_t *buf, size_t len)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t i = 0; i < len; i += in.length)
		if (!ZYAN_SUCCESS(
			    ZydisDecoderDecodeInstruction(&dec, NULL, buf + i, len - i, &in)) ||
		    (in.mnemonic != ZYDIS_MNEMONIC_NOP && in.mnemonic != ZYDIS_MNEMONIC_INT3))
			return false;
	return true;
}

/* Where the code of a function with no size (a start at vaddr start, up
 * to lo) ends: after its last jump or return, when only padding follows;
 * lo when not known. */
static uint64_t code_end(int fd, const GElf_Phdr *seg, uint64_t start, uint64_t lo)
{
	uint8_t buf[256];
	size_t len = lo - start, end = len;
	ZydisDecoder dec;
	ZydisDecodedInstruction in;

	if (!start || len > sizeof(buf) ||
	    pread(fd, buf, len, (off_t)(start - seg->p_vaddr + seg->p_offset)) != (ssize_t)len)
		return lo;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t i = 0; i < len; i += in.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf + i, len - i, &in)))
			return lo;
		if (in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		    in.meta.category == ZYDIS_CATEGORY_RET)
			end = i + in.length;
	}
	return end < len && is_padding(buf + end, len - end) ? start + end : lo;
}

/* The padding before and after the function (file offset off, size
 * bytes, at func in the target): between it and its neighbours, when
 * they are known, 64 bytes at most, nops and int3s in the file and the
 * same in the target (pid 0: the file's alone). */
static void find_room(pid_t pid, int fd, Elf *elf, const GElf_Phdr *seg, uint64_t off,
		      uint64_t size, uint64_t func, struct cp_redirect_room *room)
{
	uint64_t lo = off - seg->p_offset + seg->p_vaddr, hi = lo + size;
	struct neighbours nb = neighbours(elf, lo, hi);
	uint64_t prev_end = nb.prev_end ? nb.prev_end : code_end(fd, seg, nb.prev_start, lo);
	uint64_t next = nb.next;
	uint64_t gap[2][2];

	gap[0][0] = prev_end && prev_end <= lo && lo - prev_end <= 64 ? prev_end : lo;
	gap[0][1] = lo;
	gap[1][0] = hi;
	gap[1][1] = next >= hi && next - hi <= 64 ? next : hi;
	memset(room, 0, sizeof(*room));
	for (int i = 0; i < 2; i++) {
		uint8_t in_file[64], now[64];
		size_t len = gap[i][1] - gap[i][0];
		uint64_t at = func + (gap[i][0] - lo);

		if (len < 5 ||
		    (size_t)pread(fd, in_file, len, (off_t)(off + (gap[i][0] - lo))) != len ||
		    (pid && (cp_proc_mem_read(pid, at, now, len) || memcmp(in_file, now, len))) ||
		    !is_padding(in_file, len))
			continue;
		room->pad[i][0] = at;
		room->pad[i][1] = at + len;
	}
}

/* Bytes of the file at off (zeros past its end). */
static void file_bytes(int fd, uint64_t off, uint8_t *buf, size_t len)
{
	ssize_t got = pread(fd, buf, len, (off_t)off);

	memset(buf + (got > 0 ? (size_t)got : 0), 0, len - (got > 0 ? (size_t)got : 0));
}

/* The first 64-byte place past the segment's end, in the mapping m of its
 * last page (the segment's mapping may be cut in several: the stub's
 * mprotect of a redirected page cuts it), that is as the file has it (no
 * one wrote there) or holds this very trampoline (an earlier clockprof's,
 * reused). */
static int choose_tramp(pid_t pid, int fd, const struct cp_proc_map *m, uint64_t seg_end,
			const struct cp_redirect_fn *fn, uint64_t call,
			struct cp_redirect_place *out, char *why, size_t whylen)
{
	uint64_t from = (m->start + (seg_end - m->offset) + 63) & ~63ul;

	for (uint64_t t = from; t + CP_REDIRECT_TRAMP_SIZE <= m->end; t += CP_REDIRECT_TRAMP_SIZE) {
		uint8_t now[CP_REDIRECT_TRAMP_SIZE], in_file[CP_REDIRECT_TRAMP_SIZE];

		if (cp_proc_mem_read(pid, t, now, sizeof(now)))
			break;
		file_bytes(fd, m->offset + (t - m->start), in_file, sizeof(in_file));
		if (cp_redirect_plan_make(out->kind, fn, t, call, &out->plan, why, whylen))
			return -1;
		out->written = !memcmp(now, out->plan.code, sizeof(now));
		if (out->written || !memcmp(now, in_file, sizeof(now)))
			return 0;
	}
	snprintf(
		why, whylen,
		"its file's executable segment has no room left in its last page for a trampoline");
	return -1;
}

/* pid 0: the first 64-byte place past the segment's end in its last
 * page, as an exec of the file would map it (no code of the segment's
 * there; choose_tramp checks a running target's bytes too). */
static int tramp_in_file(const GElf_Phdr *seg, const struct cp_redirect_fn *fn, uint64_t call,
			 struct cp_redirect_place *out, char *why, size_t whylen)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), end = seg->p_vaddr + seg->p_filesz;
	uint64_t t = (end + 63) & ~63ul;

	if (t + CP_REDIRECT_TRAMP_SIZE > ((end + page - 1) & ~(page - 1))) {
		snprintf(
			why, whylen,
			"its file's executable segment has no room left in its last page for a trampoline");
		return -1;
	}
	return cp_redirect_plan_make(out->kind, fn, t, call, &out->plan, why, whylen);
}

/* The function's bytes (size, and fn->tail past it) in the file at off
 * and in pid at fn->func (pid 0: the file's as both), into fn. */
static int read_code(pid_t pid, int fd, uint64_t off, struct cp_redirect_fn *fn, uint8_t **file,
		     uint8_t **live)
{
	size_t len = fn->size + fn->tail;

	if (!(*file = malloc(len)) || !(*live = malloc(len)) ||
	    pread(fd, *file, len, (off_t)off) != (ssize_t)len)
		return -1;
	if (!pid)
		memcpy(*live, *file, len);
	else if (cp_proc_mem_read(pid, fn->func, *live, len))
		return -1;
	fn->file = *file;
	fn->live = *live;
	return 0;
}

/* Another tool's uprobe on the instruction the jump displaces (file
 * offsets [at, at + len)): refused, naming who holds it (its breakpoint,
 * once in the code, is refused too, as bytes that differ from the
 * file's: this says whose). */
static int no_uprobe_displaced(const struct stat *st, uint64_t at, unsigned len, char *why,
			       size_t whylen)
{
	char who[64];

	if (!cp_foreign_uprobe_in(st, at, at + len, who, sizeof(who)))
		return 0;
	snprintf(why, whylen, "%s holds a uprobe on the instruction the jump would displace", who);
	return -1;
}

int cp_redirect_place(pid_t pid, enum cp_redirect_kind kind, const char *path, uint64_t off,
		      uint64_t size, uint64_t call, struct cp_redirect_place *out, char *why,
		      size_t whylen)
{
	struct cp_redirect_room room;
	struct cp_redirect_fn fn = { .room = &room };
	struct cp_proc_map m = { .perms = "r-x" }, last;
	struct stat st;
	GElf_Phdr seg;
	Elf *elf = NULL;
	uint8_t *file = NULL, *live = NULL;
	uint64_t seg_end, sym_size = size;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&room, 0, sizeof(room));
	out->kind = kind;
	size = size && size < CODE_MAX ? size : CODE_MAX;
	snprintf(why, whylen, "its file cannot be read");
	elf_version(EV_CURRENT);
	if (fd < 0 || fstat(fd, &st) || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) ||
	    !segment_of(elf, off, &seg))
		goto out;
	fn.go = is_go(elf);
	snprintf(why, whylen, "a Go program's syscalls are not the C library's syscall()");
	if (fn.go && kind == CP_REDIRECT_SYSCALL)
		goto out;
	seg_end = seg.p_offset + seg.p_filesz;
	size = off + size <= seg_end ? size : seg_end - off;
	snprintf(why, whylen, "the target does not map it (yet)");
	if (pid && !find_mapping(pid, &st, off, &m))
		goto out;
	fn.func = pid ? m.start + (off - m.offset) : seg.p_vaddr + (off - seg.p_offset);
	snprintf(why, whylen, "its code cannot be read");
	fn.tail = seg_end - (off + size) < 8 ? seg_end - (off + size) : 8;
	fn.size = size;
	if (read_code(pid, fd, off, &fn, &file, &live))
		goto out;
	out->prot = (m.perms[0] == 'r' ? PROT_READ : 0) | (m.perms[1] == 'w' ? PROT_WRITE : 0) |
		    PROT_EXEC;
	if (sym_size == size) /* its end known: the padding after it too */
		find_room(pid, fd, elf, &seg, off, size, fn.func, &room);
	snprintf(why, whylen, "the end of its segment is not mapped");
	if (!pid)
		rc = tramp_in_file(&seg, &fn, call, out, why, whylen);
	else if (find_mapping(pid, &st, seg_end - 1, &last))
		rc = choose_tramp(pid, fd, &last, seg_end, &fn, call, out, why, whylen);
	/* a site found (planned, or refused for bytes someone changed). Not
	 * asked for syscall()'s, never at its entry, where tools probe it:
	 * the listing walks every process's descriptors (tens of ms on a
	 * busy host, at every attach), and a breakpoint in the target's
	 * code is refused by its bytes all the same. */
	if (out->plan.len && kind != CP_REDIRECT_SYSCALL &&
	    no_uprobe_displaced(&st, off + (out->plan.at - fn.func), out->plan.len, why, whylen))
		rc = -1;
out:
	free(file);
	free(live);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return rc;
}
