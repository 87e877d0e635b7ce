/* test_mech_choice.c - --mechanism auto: the names, the default, the
 * choice before anything is counted and when a refusal may fall back
 * (lib/probe/mech/mech_choice.c), and the warnings a mechanism keeps for
 * its window (cp_mech_warn). */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mechanism.h"
#include "unit.h"

TEST(mechanism_auto_parses_and_is_named)
{
	enum cp_mechanism m = CP_MECHANISM_UPROBE;
	struct cp_error err = { 0 };

	CHECK(cp_mechanism_parse("auto", &m, &err) == 0);
	CHECK_INT(m, CP_MECHANISM_AUTO);
	CHECK_STR(cp_mechanism_name(CP_MECHANISM_AUTO), "auto");
	CHECK(cp_mechanism_parse("patch", &m, &err) == 0);
	CHECK_INT(m, CP_MECHANISM_PATCH);
	CHECK(cp_mechanism_parse("autom", &m, &err) != 0);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(err.msg, "uprobe, breakpoint, patch or auto") != NULL);
}

/* --help says the default by CP_MECHANISM_DEFAULT_NAME: it must be the
 * default's own name. */
TEST(mechanism_default_name_is_the_default)
{
	CHECK_STR(cp_mechanism_name(CP_MECHANISM_DEFAULT), CP_MECHANISM_DEFAULT_NAME);
}

TEST(mechanism_auto_chooses_the_patch_or_uprobes_for_stacks)
{
	char why[256];

	CHECK_INT(cp_mech_choose(CP_MECHANISM_AUTO, false, why, sizeof(why)), CP_MECHANISM_PATCH);
	CHECK_STR(why, "");
	CHECK_INT(cp_mech_choose(CP_MECHANISM_AUTO, true, why, sizeof(why)), CP_MECHANISM_UPROBE);
	CHECK(strstr(why, "--stacks") != NULL);
	/* Asked by name: that one, whatever --stacks (configure refuses it). */
	CHECK_INT(cp_mech_choose(CP_MECHANISM_PATCH, true, why, sizeof(why)), CP_MECHANISM_PATCH);
	CHECK_STR(why, "");
	CHECK_INT(cp_mech_choose(CP_MECHANISM_BREAKPOINT, false, why, sizeof(why)),
		  CP_MECHANISM_BREAKPOINT);
}

TEST(mechanism_only_auto_falls_back_and_only_from_a_refusal)
{
	struct cp_error refused = { .exit_code = CP_EXIT_PROFILE };
	struct cp_error usage = { .exit_code = CP_EXIT_USAGE };

	CHECK(cp_mech_may_fall_back(CP_MECHANISM_AUTO, CP_MECHANISM_PATCH, &refused));
	CHECK(!cp_mech_may_fall_back(CP_MECHANISM_PATCH, CP_MECHANISM_PATCH, &refused));
	CHECK(!cp_mech_may_fall_back(CP_MECHANISM_AUTO, CP_MECHANISM_PATCH, &usage));
	/* The fallback itself has nothing to fall back to. */
	CHECK(!cp_mech_may_fall_back(CP_MECHANISM_AUTO, CP_MECHANISM_UPROBE, &refused));
}

/* What a mechanism has to say reaches the window whole: each warning once,
 * none overwriting another, and those past the room counted. */
TEST(mechanism_warnings_kept_each_once_and_counted_past_room)
{
	struct cp_mech m = { 0 };

	cp_mech_warn(&m, "process %d is not counted", 7);
	cp_mech_warn(&m, "process %d is not counted", 7);
	cp_mech_warn(&m, "the request blocks could not be read");
	CHECK_INT(m.nwarnings, 2);
	CHECK_STR(m.warnings[0], "process 7 is not counted");
	CHECK_STR(m.warnings[1], "the request blocks could not be read");
	for (int i = 0; i < CP_MECH_WARNINGS + 3; i++)
		cp_mech_warn(&m, "process %d is not counted", 100 + i);
	CHECK_INT(m.nwarnings, CP_MECH_WARNINGS);
	CHECK_INT(m.warnings_dropped, 5);
	CHECK_STR(m.warnings[CP_MECH_WARNINGS - 1], "process 105 is not counted");
	for (int i = 0; i < m.nwarnings; i++) /* cp_mech_close's part, m being ours */
		free(m.warnings[i]);
}

/* The vDSO patch's self-test places a uprobe (for the traps it leaves:
 * syscall(), a boundary): when it does not fire, uprobes are named, and
 * no other mechanism is advised. Failed before: "the vDSO patch do not
 * fire on this host ...; use --mechanism uprobe". The breakpoint
 * mechanism's self-test places its own kind, and says so. */
TEST(mechanism_self_test_names_the_probe_it_placed)
{
	struct cp_mech patch = { .ops = &cp_patch_mechanism },
		       bp = { .ops = &cp_breakpoint_mechanism };
	struct cp_error err = { 0 };

	CHECK(cp_mech_selftest_judge(&patch, 200, &err) == -1);
	CHECK_STR(err.msg,
		  "uprobes do not fire on this host (the self-test counted 0 of 200 calls)");
	patch.selftest.hits = 3;
	CHECK(cp_mech_selftest_judge(&patch, 200, &err) == -1);
	CHECK(strstr(err.msg, "the uprobe self-test counted 3 of 200") == err.msg);
	CHECK(cp_mech_selftest_judge(&bp, 200, &err) == -1);
	CHECK_STR(err.msg, "hardware breakpoints do not fire on this host (the self-test counted 0 "
			   "of 200 calls); use --mechanism uprobe");
	patch.selftest.hits = 200;
	CHECK(cp_mech_selftest_judge(&patch, 200, &err) == 0);
}
