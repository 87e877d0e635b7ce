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
 *                           detach on EOF): the target must not care
 *   vdso-patch-tool --boundary SYMBOL PID   as PID, with SYMBOL of the
 *                           target's executable a request boundary closed
 *                           in the target ("read" then says its requests);
 *                           both options may be given, in this order */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>

#include "elf_symbols.h"
#include "error.h"
#include "hijack.h"
#include "patch_boundary.h"
#include "patch_requests.h"
#include "session.h"
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

/* requests N in_requests N hist0 N ... (the buckets with requests). */
static void print_requests(struct cp_vdso_patch *p)
{
	const struct cp_patch_requests *r;
	uint64_t in = 0;

	if (cp_vdso_patch_read_requests(p) || !(r = cp_vdso_patch_requests(p))) {
		printf("gone\n");
		return;
	}
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++)
		in += r->sums.in_words[i] + r->sums.in_syscalls[i];
	printf("requests %llu in_requests %llu lost %llu", (unsigned long long)r->sums.requests,
	       (unsigned long long)in, (unsigned long long)r->sums.lost);
	for (int i = 0; i < CP_HIST_SLOTS; i++)
		if (r->sums.hist[i])
			printf(" hist%d %llu", i, (unsigned long long)r->sums.hist[i]);
	printf("\n");
}

/* prepare, the boundary (SYMBOL of the target's executable) added, apply,
 * switch, mark: cp_vdso_patch_attach with a redirect (on both paths past the
 * function's first branch where its start has no room, as clockprof's). */
static int attach_with_boundary(pid_t pid, const char *symbol, struct cp_vdso_patch **p,
				struct cp_error *err)
{
	static struct cp_uprobe_point at;	/* 4 KiB: its path */
	struct cp_elf_function fn;
	char why[256];

	snprintf(at.path, sizeof(at.path), "/proc/%d/exe", (int)pid);
	if (cp_elf_find_function(at.path, at.path, symbol, &fn, err) ||
	    cp_vdso_patch_prepare(pid, false, p, err))
		return -1;
	at.offset = fn.offset;
	at.size = fn.size;
	if (cp_patch_boundary_redirect(*p, pid, &at, why, sizeof(why))) {
		cp_vdso_patch_free(*p);
		return cp_fail(err, CP_EXIT_PROFILE, "boundary %s: %s", symbol, why);
	}
	if (cp_vdso_patch_apply(*p, err) || cp_vdso_patch_switch(*p, err) ||
	    cp_vdso_patch_mark(*p)) {
		cp_vdso_patch_detach(*p, &(struct cp_error){ 0 });
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cp_vdso_patch *p;
	struct cp_vdso_patch_info info;
	struct cp_unwind_table rules;
	struct cp_error err = { 0 };
	const char *boundary = NULL;
	char line[64];

	if (argc == 2 && !strcmp(argv[1], "--selftest")) {
		struct cp_vdso_patch_counts c;
		int rc = cp_vdso_patch_selftest(&c, NULL, &err);

		printf("selftest %llu of 200%s%s\n", (unsigned long long)c.total, rc ? ": " : "",
		       rc ? err.msg : "");
		return rc ? 3 : 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "--kill-at")) {
		kill_at = atoi(argv[2]);
		cp_patch_step_hook = count_step;
		argv += 2;
		argc -= 2;
	}
	if (argc == 4 && !strcmp(argv[1], "--boundary")) {
		boundary = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: vdso-patch-tool [--kill-at N] [--boundary SYMBOL] PID\n");
		return 2;
	}
	if (boundary ? attach_with_boundary(atoi(argv[1]), boundary, &p, &err) :
		       cp_vdso_patch_attach(atoi(argv[1]), false, &p, &err)) {
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
	printf("attached reused %d tid %d pause_ms %.3f syscall %d eintr %d mended %zu\n",
	       info.reused, (int)info.tid, info.attach_pause_ms, info.syscall, info.eintr,
	       info.forks_mended);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "detach", 6)) {
		if (!strncmp(line, "requests", 8))
			print_requests(p);
		else if (!strncmp(line, "read", 4))
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
