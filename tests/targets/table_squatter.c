/* table_squatter.c - the program a patched target exec()s into, that
 * maps its own memory where the old image's counter table lay: a write
 * clockprof meant for that table must never land here (it would be this
 * program's memory, whatever it keeps there).
 *
 *   table_squatter       (stdin: the old table's code pages' address, hex)
 *
 * Says "squatting" once the old table's request block 0 (its anatomy and
 * epoch words) is mapped here, filled with a pattern ("taken" when that
 * range is mapped already), then waits. Ended (SIGINT, SIGTERM: as `run`
 * ends its command after the window) or at a second line, it says
 * "intact" or "written at +OFFSET" (from the old table's start). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "patch_layout.h"

#define PATTERN 0x5a

static volatile unsigned char *page;
static uint64_t table, lo, hi;

/* Async-signal-safe: the page compared, the verdict written, exit. */
static void check(int sig)
{
	char said[64] = "intact\n";
	size_t len = 7;

	(void)sig;
	for (uint64_t i = 0; i < hi - lo; i++)
		if (page[i] != PATTERN) {
			uint64_t off = lo + i - table;
			char digits[24];
			int n = 0;

			do
				digits[n++] = (char)('0' + off % 10);
			while ((off /= 10));
			memcpy(said, "written at +", len = 12);
			while (n)
				said[len++] = digits[--n];
			said[len++] = '\n';
			break;
		}
	if (write(1, said, len) != (ssize_t)len)
		_exit(1);
	_exit(0);
}

int main(void)
{
	char line[64];
	uint64_t code;
	void *at;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!fgets(line, sizeof(line), stdin) || !(code = strtoull(line, NULL, 16)))
		return 2;
	table = code - CP_PATCH_CODE_OFF;
	lo = (table + CP_PATCH_BLOCKS_OFF) & ~4095ull;
	hi = (table + CP_PATCH_BLOCKS_OFF + CP_PATCH_BLOCK + 4095) & ~4095ull;
	at = mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (at != (void *)lo) {
		puts("taken");
		return 1;
	}
	page = at;
	memset(at, PATTERN, hi - lo);
	signal(SIGINT, check);
	signal(SIGTERM, check);
	puts("squatting");
	if (fgets(line, sizeof(line), stdin))
		check(0);
	return 1;
}
