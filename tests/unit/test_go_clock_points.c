/* test_go_clock_points.c - the Go runtime's vDSO callers found in the Go
 * reference target (tests/targets/go_target.go, built when `go` is on
 * PATH): time.now's two calls (REALTIME then MONOTONIC, clock id in rdi)
 * and runtime.nanotime1's entry, each on the instruction it names. The
 * layout checked is Go 1.17+'s on amd64 (Debian 12 ships 1.19). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock_points.h"
#include "elf_symbols.h"
#include "error.h"
#include "unit.h"

static int go_target(char *path, size_t size)
{
	snprintf(path, size, "%s/fixtures/go_target", unit_build_dir());
	if (access(path, R_OK) == 0)
		return 1;
	unit_skip("no Go target built (no `go` on PATH; `make test-deps` installs golang-go)");
	return 0;
}

static int read_at(const char *path, uint64_t offset, uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "rb");
	int ok = f && fseek(f, (long)offset, SEEK_SET) == 0 && fread(buf, 1, len, f) == len;

	if (f)
		fclose(f);
	return ok;
}

/* Is the instruction at offset `call *%reg`? */
static int is_indirect_call(const char *path, uint64_t offset)
{
	uint8_t b[3];

	if (!read_at(path, offset, b, sizeof(b)))
		return 0;
	return (b[0] == 0xff && (b[1] & 0xf8) == 0xd0) ||
	       ((b[0] & 0xf1) == 0x41 && b[1] == 0xff && (b[2] & 0xf8) == 0xd0);
}

/* The immediate of the last `mov $imm32, %edi` (bf imm32) in the 32 bytes
 * before offset: the clock id the vDSO gets; -1 when there is none. */
static long edi_before(const char *path, uint64_t offset)
{
	uint8_t b[32];
	int32_t imm;

	if (!read_at(path, offset - sizeof(b), b, sizeof(b)))
		return -1;
	for (int i = (int)sizeof(b) - 5; i >= 0; i--) {
		if (b[i] == 0xbf) {
			memcpy(&imm, b + i + 1, sizeof(imm));
			return imm;
		}
	}
	return -1;
}

TEST(go_runtime_vdso_callers_found)
{
	struct cp_clock_points cp = { 0 };
	struct cp_elf_function now, nanotime1;
	struct cp_error err;
	char path[4096];
	int frame = 0, entry = 0;
	long clocks[2] = { -1, -1 };

	if (!go_target(path, sizeof(path)))
		return;
	CHECK(cp_elf_find_function(path, "go_target", "time.now", &now, &err) == 0);
	CHECK(cp_elf_find_function(path, "go_target", "runtime.nanotime1.abi0", &nanotime1, &err) ==
	      0);
	CHECK_INT(cp_go_clock_points_find(path, &cp), 0);
	CHECK_INT(cp.n, 3);
	CHECK_STR(cp.unseen, "");
	for (size_t i = 0; i < cp.n; i++) {
		const struct cp_clock_point *p = &cp.points[i];

		CHECK_INT(p->entry, CP_ENTRY_CLOCK_GETTIME);
		if (p->site == CP_SITE_FRAME) {
			CHECK(p->offset > now.offset && p->offset < now.offset + now.size);
			CHECK_INT(p->clock, CP_CLOCK_FROM_ARG);
			CHECK(!strncmp(p->what, "time.now+", 9));
			CHECK(is_indirect_call(path, p->offset));
			if (frame < 2)
				clocks[frame] = edi_before(path, p->offset);
			frame++;
		} else {
			CHECK_INT(p->site, CP_SITE_STACK_TOP);
			CHECK_INT(p->offset, nanotime1.offset);
			CHECK_INT(p->clock, CLOCK_MONOTONIC);
			CHECK_STR(p->what, "runtime.nanotime1.abi0");
			entry++;
		}
	}
	CHECK_INT(frame, 2);
	CHECK_INT(entry, 1);
	/* time.now reads REALTIME, then MONOTONIC (symbol order may differ,
	 * so compare as a set). */
	CHECK(clocks[0] + clocks[1] == CLOCK_REALTIME + CLOCK_MONOTONIC);
	CHECK(clocks[0] != clocks[1]);
	cp_clock_points_free(&cp);
}

TEST(go_points_none_outside_go)
{
	struct cp_clock_points cp = { 0 };

	/* This test program is C: no point, nothing unseen. */
	CHECK_INT(cp_go_clock_points_find("/proc/self/exe", &cp), 0);
	CHECK_INT(cp.n, 0);
	CHECK_STR(cp.unseen, "");
	CHECK_INT(cp_go_clock_points_find("/nonexistent/go_target", &cp), 0);
	CHECK_INT(cp.n, 0);
}
