/* test_elf_pages.c - lib/symbols/elf_pages: the pages of a mapped ELF
 * image given back and read again the same, and never those of an image
 * whose bytes are nowhere else (a page written to, a file read into memory,
 * elf_memory). Pages held are counted from /proc/self/pagemap. */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "elf_pages.h"
#include "unit.h"

/* A checksum of every name in the file's dynamic symbol table: reads
 * .dynsym and .dynstr through. 0 when there is none. */
static unsigned long dynsym_names(Elf *elf)
{
	Elf_Scn *scn = NULL;
	unsigned long sum = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				for (; *name; name++)
					sum = sum * 31 + (unsigned char)*name;
		}
	}
	return sum;
}

/* libc, opened as libdwfl opens a module's file. */
static Elf *open_libc(Elf_Cmd cmd, int *fd)
{
	char path[PATH_MAX];

	elf_version(EV_CURRENT);
	*fd = unit_libc_path(path, sizeof(path)) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	return *fd >= 0 ? elf_begin(*fd, cmd, NULL) : NULL;
}

TEST(elf_pages_given_back_and_read_again_the_same)
{
	int fd;
	Elf *elf = open_libc(ELF_C_READ_MMAP_PRIVATE, &fd);
	unsigned long before;
	size_t size = 0;
	char *image;

	CHECK(elf != NULL);
	before = dynsym_names(elf);
	image = elf_rawfile(elf, &size);
	CHECK(before != 0 && image != NULL);
	if (unit_pages_held(image, size) < 0) {
		unit_skip("/proc/self/pagemap cannot be read");
		return;
	}
	CHECK(unit_pages_held(image, size) > 8);
	CHECK_INT(cp_elf_release_pages(elf), 0);
	CHECK_INT(unit_pages_held(image, size), 0);
	CHECK(dynsym_names(elf) == before);
	elf_end(elf);
	close(fd);
}

TEST(elf_pages_of_a_written_image_are_kept)
{
	int fd;
	Elf *elf = open_libc(ELF_C_READ_MMAP_PRIVATE, &fd);
	size_t size = 0;
	char *image;

	CHECK(elf != NULL);
	image = elf_rawfile(elf, &size);
	CHECK(image != NULL && size > 100000);
	dynsym_names(elf);
	image[size / 2] ^= 0x5a; /* a private copy of that page */
	CHECK_INT(cp_elf_release_pages(elf), -1);
	CHECK(unit_pages_held(image, size) > 8);
	image[size / 2] ^= 0x5a;
	elf_end(elf);
	close(fd);
}

TEST(elf_pages_of_an_image_in_memory_are_kept)
{
	int fd, wfd;
	Elf *elf = open_libc(ELF_C_READ, &fd), *copy, *whole;
	unsigned long before;
	size_t size = 0;
	char *image, *buf;

	CHECK(elf != NULL);
	before = dynsym_names(elf);
	CHECK_INT(cp_elf_release_pages(elf), -1); /* read, not mapped */
	CHECK(dynsym_names(elf) == before);
	/* A copy in memory, from a handle of its own: libelf leaks the
	 * section data it read for a handle later read whole (LeakSanitizer,
	 * __libelf_set_rawdata_wrlock). */
	whole = open_libc(ELF_C_READ, &wfd);
	CHECK(whole != NULL);
	image = elf_rawfile(whole, &size);
	CHECK(image != NULL && (buf = malloc(size)) != NULL);
	memcpy(buf, image, size);
	elf_end(whole);
	close(wfd);
	copy = elf_memory(buf, size);
	CHECK(copy != NULL);
	CHECK_INT(cp_elf_release_pages(copy), -1);
	CHECK(dynsym_names(copy) == before);
	CHECK_INT(cp_elf_release_pages(NULL), -1);
	elf_end(copy);
	free(buf);
	elf_end(elf);
	close(fd);
}
