/* own_code.c - see own_code.h. From the loaded images' program headers:
 * no /proc/self/maps to read and parse. */
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>

#include "own_code.h"

struct own_code {
	uint64_t addr, offset;
	char *path;
	size_t size;
	bool found;
};

static int find_own_code(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct own_code *c = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || c->addr < lo || c->addr >= lo + ph->p_memsz)
			continue;
		c->offset = c->addr - lo + ph->p_offset;
		/* The main program has no name here: its file is /proc/self/exe. */
		snprintf(c->path, c->size, "%s",
			 info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
		c->found = true;
		return 1;
	}
	return 0;
}

int cp_own_code_offset(const void *fn, char *path, size_t size, uint64_t *offset)
{
	struct own_code c = { .addr = (uint64_t)(uintptr_t)fn, .path = path, .size = size };

	dl_iterate_phdr(find_own_code, &c);
	if (!c.found) {
		errno = ENOENT;
		return -1;
	}
	*offset = c.offset;
	return 0;
}
