/* vdso_patch_tool.c - drives lib/probe's vDSO patch alone, for its
 * integration tests (tests/integration/test_vdso_patch.py): they assert
 * exact counts against tests/targets/patch_target and kill this tool at
 * random instants to show the target never depends on it.
 *
 *   vdso-patch-tool PID     attach, print "attached ...", then per stdin
 *                           line: "read" prints the counts, "detach"
 *                           restores the vDSO and exits (EOF likewise);
 *                           a refusal prints "refused: WHY", exit 3
 *   vdso-patch-tool --selftest   the patch's self-test: "selftest N of 200"
 *   vdso-patch-tool --kill-at N PID   as PID, but kills itself (SIGKILL)
 *                           after the patch's Nth step (attach, then the
 *                           detach on EOF): the target must not care */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>

#include "error.h"
#include "hijack.h"
#include "unwind_table.h"
#include "vdso_patch.h"

static int kill_at, steps;

static void count_step(void)
{
	if (++steps == kill_at)
		raise(SIGKILL);
}

static void print_counts(struct cp_vdso_patch *p)
{
	struct cp_vdso_patch_counts c;

	if (cp_vdso_patch_read(p, &c)) {
		printf("gone\n");
		return;
	}
	printf("total %llu clock_gettime %llu gettimeofday %llu time %llu threads %zu shared %llu",
	       (unsigned long long)c.total, (unsigned long long)c.by_entry[CP_ENTRY_CLOCK_GETTIME],
	       (unsigned long long)c.by_entry[CP_ENTRY_GETTIMEOFDAY],
	       (unsigned long long)c.by_entry[CP_ENTRY_TIME], c.threads,
	       (unsigned long long)c.shared);
	for (int k = 0; k < CP_CLOCK_SLOTS; k++)
		printf(" clock%d %llu", k, (unsigned long long)c.by_clock[k]);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct cp_vdso_patch *p;
	struct cp_vdso_patch_info info;
	struct cp_unwind_table rules;
	struct cp_error err = { 0 };
	char line[64];

	if (argc == 2 && !strcmp(argv[1], "--selftest")) {
		struct cp_vdso_patch_counts c;
		int rc = cp_vdso_patch_selftest(&c, &err);

		printf("selftest %llu of 200%s%s\n", (unsigned long long)c.total, rc ? ": " : "",
		       rc ? err.msg : "");
		return rc ? 3 : 0;
	}
	if (argc == 4 && !strcmp(argv[1], "--kill-at")) {
		kill_at = atoi(argv[2]);
		cp_patch_step_hook = count_step;
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: vdso-patch-tool PID\n");
		return 2;
	}
	if (cp_vdso_patch_attach(atoi(argv[1]), &p, &err)) {
		printf("refused: %s\n", err.msg);
		return 3;
	}
	/* The wrapper rules, as clockprof writes them: the thunks' walk
	 * out of the C library's clock_gettime runs as in a real run. */
	if (cp_unwind_table_build(atoi(argv[1]), &rules, &err) == 0) {
		if (cp_vdso_patch_set_rules(p, &rules, &err) || cp_vdso_patch_mark(p))
			printf("rules not written: %s\n", err.msg);
		cp_unwind_table_free(&rules);
	}
	cp_vdso_patch_info(p, &info);
	printf("attached reused %d tid %d pause_ms %.3f syscall %d eintr %d\n", info.reused,
	       (int)info.tid, info.attach_pause_ms, info.syscall, info.eintr);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "detach", 6)) {
		if (!strncmp(line, "read", 4))
			print_counts(p);
		fflush(stdout);
	}
	if (cp_vdso_patch_detach(p, &err)) {
		printf("detach failed: %s\n", err.msg);
		return 3;
	}
	printf("detached\n");
	return 0;
}
