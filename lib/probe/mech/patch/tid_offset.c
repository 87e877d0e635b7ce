/* tid_offset.c - see tid_offset.h. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "proc_maps.h"
#include "tid_offset.h"

struct descriptor_file {
	Elf *elf;
	int fd;
};

/* The offset _thread_db_pthread_tid's descriptor gives, read from the file
 * (fd): nonzero ends the walk of the symbols. */
static int descriptor_offset(const GElf_Sym *s, const char *name, void *arg)
{
	struct descriptor_file *f = arg;
	uint32_t desc[3];
	uint64_t off;

	if (s->st_size != sizeof(desc) || strcmp(name, "_thread_db_pthread_tid"))
		return 0;
	if (cp_elf_vaddr_to_offset_in(f->elf, s->st_value, &off) ||
	    pread(f->fd, desc, sizeof(desc), (off_t)off) != (ssize_t)sizeof(desc))
		return 0;
	/* within the descriptor's first page, aligned: read at fs:off */
	return desc[0] == 32 && desc[1] == 1 && desc[2] && desc[2] < 4096 && !(desc[2] % 4) ?
		       (int)desc[2] :
		       0;
}

/* The descriptor's offset in the ELF file at path; 0 without. Its
 * symbols are read where the file is mapped, not copied: a C library's
 * .dynsym and .dynstr copied (105 KiB here) faulted in 26 fresh pages of
 * the heap at each attach, twice with the self-test's child, ~25 us each
 * where the hypervisor keeps the page tables. */
static uint32_t offset_in(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct descriptor_file f = { NULL, fd };
	uint32_t found = 0;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	f.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f.elf)
		found = (uint32_t)cp_elf_each_symbol(f.elf, descriptor_offset, &f);
	elf_end(f.elf);
	close(fd);
	return found;
}

static bool named(const struct cp_proc_map *m, const char *prefix)
{
	const char *base = strrchr(m->path, '/');

	return base && !strncmp(base + 1, prefix, strlen(prefix));
}

/* The file mapped at m, through the process's own view of it. */
static uint32_t offset_in_map(pid_t pid, const struct cp_proc_map *m)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	return offset_in(path);
}

/* The libc beside the dynamic linker mapped at m. */
static uint32_t offset_beside(pid_t pid, const struct cp_proc_map *m)
{
	char path[PATH_MAX + 64];
	int dir = (int)(strrchr(m->path, '/') - m->path);

	snprintf(path, sizeof(path), "/proc/%d/root%.*s/libc.so.6", (int)pid, dir, m->path);
	return offset_in(path);
}

/* Whether the file mapped at maps[i] is also mapped executable: the C
 * library the process runs, not one it only maps to read (a glibc's
 * offset read at fs:off in a program of another C library could reach
 * past its thread's memory). */
static bool runs_code_of(const struct cp_proc_map *maps, size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++)
		if (maps[j].ino == maps[i].ino && maps[j].dev_major == maps[i].dev_major &&
		    maps[j].dev_minor == maps[i].dev_minor && maps[j].perms[2] == 'x')
			return true;
	return false;
}

uint32_t cp_tid_offset(pid_t pid)
{
	struct cp_proc_map *maps = NULL;
	char exe[64];
	uint32_t found = 0;
	size_t n = 0;

	if (cp_proc_maps_read(pid, &maps, &n))
		return 0;
	for (size_t i = 0; i < n && !found; i++)
		if (maps[i].ino && !maps[i].offset &&
		    (named(&maps[i], "libc.so") || named(&maps[i], "libc-")) &&
		    runs_code_of(maps, n, i))
			found = offset_in_map(pid, &maps[i]);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (!found)
		found = offset_in(exe);
	for (size_t i = 0; i < n && !found; i++)
		if (maps[i].ino && !maps[i].offset && named(&maps[i], "ld-linux"))
			found = offset_beside(pid, &maps[i]);
	free(maps);
	return found;
}
