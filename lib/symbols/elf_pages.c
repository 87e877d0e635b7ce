/* elf_pages.c - see elf_pages.h. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf_pages.h"

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_FILE (1ull << 61) /* a file's page (or shared anonymous) */

/* Whether every page of [start, end) held in memory is a file's own
 * (/proc/self/pagemap): none is private anonymous memory, present or
 * swapped out. The first page must be present. */
static bool file_pages_only(uintptr_t start, uintptr_t end, size_t page)
{
	uint64_t e[256];
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0;

	for (uintptr_t at = start; ok && at < end; at += 256 * page) {
		size_t n = (end - at) / page < 256 ? (end - at) / page : 256;
		ssize_t want = (ssize_t)(n * sizeof(e[0]));

		ok = pread(fd, e, (size_t)want, (off_t)(at / page * sizeof(e[0]))) == want;
		for (size_t i = 0; ok && i < n; i++) {
			bool first = at == start && i == 0;

			ok = !(e[i] & PM_SWAPPED) &&
			     ((e[i] & PM_PRESENT) ? (e[i] & PM_FILE) != 0 : !first);
		}
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

int cp_elf_release_pages(Elf *elf)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 0;
	const volatile char *head;
	uintptr_t start, end;
	char *image;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -1;
	/* The ELF header is read in place where libelf mapped the file, and
	 * from a copy in its own (malloc'd) memory otherwise: only a file's
	 * page there says the image is mapped. Asked before elf_rawfile,
	 * which would read an unmapped file whole. */
	head = gelf_getclass(elf) == ELFCLASS64 ? (const char *)elf64_getehdr(elf) :
						  (const char *)elf32_getehdr(elf);
	if (!head)
		return -1;
	(void)*head; /* in memory for the look below */
	start = (uintptr_t)head & ~(uintptr_t)(page - 1);
	if (!file_pages_only(start, start + page, page))
		return -1;
	image = elf_rawfile(elf, &size);
	if (!image || (uintptr_t)image != (uintptr_t)head)
		return -1;
	end = ((uintptr_t)image + size + page - 1) & ~(uintptr_t)(page - 1);
	if (!file_pages_only(start, end, page))
		return -1;
	return madvise((void *)start, end - start, MADV_DONTNEED) ? -1 : 0;
}
