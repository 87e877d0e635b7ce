/* test_clock_points.c - which files' own clock functions are probed: the C
 * library's, never those of an interposer that links against it (an
 * LD_PRELOAD wrapper forwarding to the real function: probing both would
 * count every call twice). The interposer is the server tests' ground truth,
 * tests/truth/clock_truth.c, built into $CP_TEST_BUILD/fixtures. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock_points.h"
#include "error.h"
#include "unit.h"

TEST(c_library_clock_functions_are_probed)
{
	struct cp_clock_points cp;
	struct cp_error err;
	char path[4096];
	int clock_gettime_points = 0;

	CHECK(unit_libc_path(path, sizeof(path)));
	CHECK_INT(cp_clock_points_find(path, CP_POINTS_AT_STUBS, &cp, &err), 0);
	for (size_t i = 0; i < cp.n; i++)
		clock_gettime_points += cp.points[i].entry == CP_ENTRY_CLOCK_GETTIME;
	CHECK(clock_gettime_points >= 1);
	CHECK(cp.syscall_offset != 0);
	cp_clock_points_free(&cp);
}

TEST(interposer_clock_functions_are_not_probed)
{
	struct cp_clock_points cp;
	struct cp_error err;
	char path[4096];

	if (!unit_built(path, sizeof(path), "fixtures/clock_truth.so"))
		return;
	CHECK_INT(cp_clock_points_find(path, CP_POINTS_AT_STUBS, &cp, &err), 0);
	/* it defines clock_gettime, gettimeofday, time and syscall, and
	 * imports none of them through a PLT stub */
	CHECK_INT(cp.n, 0);
	CHECK_INT(cp.syscall_offset, 0);
	cp_clock_points_free(&cp);
}

/* Pointers initialised with gettimeofday and time in a PIE's data (an
 * R_X86_64_64 relocation each, no GOT slot a stub jumps through): their
 * calls pass no PLT stub, and the file says so (unseen), as it does for
 * -fno-plt; gettimeofday's stub, which it also calls, is still probed. */
TEST(function_pointers_in_data_are_unseen)
{
	struct cp_clock_points cp;
	struct cp_error err;
	char path[4096];
	int stubs = 0;

	if (!unit_built(path, sizeof(path), "fixtures/fn_pointer_clock"))
		return;
	CHECK_INT(cp_clock_points_find(path, CP_POINTS_AT_STUBS, &cp, &err), 0);
	CHECK(strstr(cp.unseen, "gettimeofday") != NULL);
	CHECK(strstr(cp.unseen, "time") != NULL);
	for (size_t i = 0; i < cp.n; i++)
		stubs += cp.points[i].entry == CP_ENTRY_GETTIMEOFDAY;
	CHECK_INT(stubs, 1);
	cp_clock_points_free(&cp);
}

/* What a mechanism that counts the vDSO itself (the patch) wants: the C
 * library's syscall() and execve, found as for uprobes, and nothing of a
 * file that links against it, whose stubs the other mechanisms probe. */
TEST(the_c_library_alone_gives_the_patch_its_points)
{
	struct cp_clock_points all, lib;
	struct cp_error err;
	char path[4096];

	CHECK(unit_libc_path(path, sizeof(path)));
	CHECK_INT(cp_clock_points_find(path, CP_POINTS_C_LIBRARY, &lib, &err), 0);
	CHECK_INT(cp_clock_points_find(path, CP_POINTS_AT_STUBS, &all, &err), 0);
	CHECK(lib.syscall_offset != 0);
	CHECK(lib.syscall_offset == all.syscall_offset);
	CHECK(lib.exec_offset[0] == all.exec_offset[0]);
	cp_clock_points_free(&lib);
	cp_clock_points_free(&all);
	if (!unit_built(path, sizeof(path), "fixtures/fn_pointer_clock"))
		return;
	CHECK_INT(cp_clock_points_find(path, CP_POINTS_C_LIBRARY, &lib, &err), 0);
	CHECK_INT(lib.n, 0);
	CHECK(!lib.unseen[0]);
	cp_clock_points_free(&lib);
}
