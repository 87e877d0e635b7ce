/* build_id.c - see build_id.h. */
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "build_id.h"
#include "procfs.h"

#define PAGE_MASK_4K (~(uint64_t)4095)

static void hexify(const unsigned char *b, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int cp_build_id_of_fd(int fd, char *hex, size_t size)
{
	Elf *elf;
	const void *id;
	ssize_t n;
	int rc = -1;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -1;
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0 && (size_t)n * 2 + 1 <= size) {
		hexify(id, (size_t)n, hex);
		rc = 0;
	}
	elf_end(elf);
	return rc;
}

void cp_build_id_of_path(const char *path, char *hex, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	snprintf(hex, size, "%s", "");
	if (fd < 0)
		return;
	if (cp_build_id_of_fd(fd, hex, size))
		snprintf(hex, size, "%s", "");
	close(fd);
}

/* Finds the GNU build-id in a block of ELF notes. */
static int notes_build_id(const unsigned char *p, size_t len, char *hex, size_t hexsize)
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		off += 12;
		size_t name_at = off, desc_at = off + ((namesz + 3) & ~3u);
		size_t next = desc_at + ((descsz + 3) & ~3u);

		if (next > len || desc_at > len)
			return -1;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name_at, "GNU", 4) == 0 &&
		    descsz * 2 + 1 <= hexsize && descsz > 0) {
			hexify(p + desc_at, descsz, hex);
			return 0;
		}
		off = next;
	}
	return -1;
}

/* The image's link-time base: its first PT_LOAD's page. */
static uint64_t first_load(const Elf64_Phdr *ph, int n)
{
	uint64_t first = UINT64_MAX;

	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < first)
			first = ph[i].p_vaddr & PAGE_MASK_4K;
	return first;
}

int cp_build_id_in_memory(pid_t pid, uint64_t map0, char *hex, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	uint64_t base;

	if (cp_proc_mem_read(pid, map0, &eh, sizeof(eh)) != 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phnum == 0 || eh.e_phnum > 64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	if (cp_proc_mem_read(pid, map0 + eh.e_phoff, ph, eh.e_phnum * sizeof(ph[0])) != 0)
		return -1;
	base = first_load(ph, eh.e_phnum);
	if (base == UINT64_MAX)
		return -1;
	for (int i = 0; i < eh.e_phnum; i++) {
		unsigned char buf[1024];

		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > sizeof(buf))
			continue;
		if (cp_proc_mem_read(pid, map0 - base + ph[i].p_vaddr, buf, ph[i].p_filesz) != 0)
			continue;
		if (notes_build_id(buf, ph[i].p_filesz, hex, size) == 0)
			return 0;
	}
	return -1;
}
