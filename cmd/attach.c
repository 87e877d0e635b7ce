/* attach.c - `clockprof attach [OPTIONS] PID[,PID...]`: profile running
 * processes: one, a list, a process and its descendants (--tree), or a
 * cgroup's (--cgroup). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cmd.h"
#include "error.h"
#include "procfs.h"
#include "profile_command.h"

/* The most processes one attach counts (each is patched on its own). */
#define MAX_PROCESSES 1024

/* Several processes are counted by the vDSO patch only (each in its own
 * copy: CP_MECH_FOLLOWS_FORKS), as each way of naming them says. */
#define PATCH_ONLY "the vDSO patch only"

/* An option table: each option's fields on the rows they were written
 * in (clang-format would give every field a line of its own). */
/* clang-format off */
static const struct cp_option options[] = {
	{ .id = 'p', .short_name = 'p', .long_name = "pid", .value = "PID[,PID...]",
	  .help = "the process to profile (the same as giving PID as the operand); a "
	  "comma-separated list counts each, the first as the target (" PATCH_ONLY ")",
	  .complete = CP_COMPLETE_PID },
	CP_OPTION_FLAG(PC_OPT_TREE, "tree",
	  "PID and every process descended from it, present and future (" PATCH_ONLY ")"),
	{ .id = PC_OPT_CGROUP, .long_name = "cgroup", .value = "PATH",
	  .help = "every process of a cgroup v2, present and future (those its processes "
	  "fork): a path under /sys/fs/cgroup, or a systemd unit (nginx.service); "
	  PATCH_ONLY },
	PROFILE_WINDOW_OPTIONS,
	PROFILE_OUTPUT_OPTIONS,
	PROFILE_METRICS_OPTIONS,
	{ 0 },
	/* clang-format on */
};

const struct cp_command_spec cmd_attach_spec = {
	.name = "attach",
	.synopsis = { "[OPTIONS] PID[,PID...]", "[OPTIONS] --tree PID", "[OPTIONS] --cgroup PATH" },
	.summary = "count the clock reads of a running process",
	.description = "Attaches to the running process PID (all its threads) and counts its "
		       "clock reads until the window ends (-d, Ctrl-C, or the process exits), "
		       "then prints a summary and writes the files asked for. Options may "
		       "come before or after the PID. With several processes (a list, --tree, "
		       "--cgroup) each is counted in its own vDSO, run.json says each one's "
		       "figures (processes) and the totals are theirs together.\n\n"
		       "  clockprof attach -d 10 -r func:handle_request -o run.json 1234\n"
		       "  clockprof attach -d 10 -r syscall:writev --tree $(cat /run/nginx.pid)",
	.options = options,
	.exit_codes = "Exit codes: 0 profiled, 2 usage or bad input, 3 could not profile.",
	.order = CP_ORDER_PERMUTE,
	.operands = CP_COMPLETE_PID,
};

/* PID[,PID...] into pids (at most MAX_PROCESSES); 0, or an exit code. */
static int parse_pids(const char *arg, pid_t *pids, size_t *n)
{
	const char *at = arg;

	*n = 0;
	for (;;) {
		char *end;
		long pid = strtol(at, &end, 10);

		if (end == at || (*end && *end != ',') || pid <= 0 || pid > 0x3fffffff)
			return cmd_error(CP_EXIT_USAGE,
					 "invalid PID '%s': give a process id, or "
					 "several separated by commas",
					 arg);
		if (*n == MAX_PROCESSES)
			return cmd_error(CP_EXIT_USAGE, "at most %d processes", MAX_PROCESSES);
		pids[(*n)++] = (pid_t)pid;
		if (!*end)
			return 0;
		at = end + 1;
	}
}

/* --tree: the target's descendants now join it (their forks are followed
 * from now on). */
static int add_tree(pid_t *pids, size_t *n)
{
	pid_t *kids;
	size_t nkids;

	if (cp_proc_descendants(pids[0], &kids, &nkids))
		return cmd_error(CP_EXIT_PROFILE,
				 "cannot list the processes: /proc cannot be read");
	if (nkids + 1 > MAX_PROCESSES) {
		free(kids);
		return cmd_error(CP_EXIT_USAGE,
				 "process %d has %zu descendants: at most %d processes",
				 (int)pids[0], nkids, MAX_PROCESSES);
	}
	for (size_t i = 0; i < nkids; i++)
		pids[(*n)++] = kids[i];
	free(kids);
	return 0;
}

/* --cgroup: its processes now; the target is the first listed. */
static int cgroup_pids(const char *spec, pid_t *pids, size_t *n)
{
	char path[PATH_MAX];
	pid_t *all;
	size_t nall;

	if (cp_cgroup_resolve(spec, path, sizeof(path)))
		return cmd_error(
			errno == ENOTSUP ? CP_EXIT_PROFILE : CP_EXIT_USAGE,
			errno == ENOTSUP ?
				"no cgroup v2 is mounted (/proc/self/mounts)" :
				"no cgroup '%s' (a path under the cgroup v2 mount, or a systemd unit)",
			spec);
	if (cp_cgroup_procs(path, &all, &nall))
		return cmd_error(CP_EXIT_PROFILE, "cannot read the processes of cgroup %s", path);
	if (!nall) {
		free(all);
		return cmd_error(CP_EXIT_PROFILE, "cgroup %s has no process", path);
	}
	if (nall > MAX_PROCESSES) {
		free(all);
		return cmd_error(CP_EXIT_USAGE, "cgroup %s has %zu processes: at most %d", path,
				 nall, MAX_PROCESSES);
	}
	*n = nall;
	memcpy(pids, all, *n * sizeof(*pids));
	free(all);
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	static pid_t pids[MAX_PROCESSES];
	struct profile_command pc;
	size_t n = 0;
	int rc = profile_command_parse(&pc, &cmd_attach_spec, argc, argv);

	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	if (pc.cgroup) {
		if (argc - pc.rest + !!pc.pid != 0 || pc.tree)
			return cmd_error(CP_EXIT_USAGE, "--cgroup takes no PID and no --tree");
		rc = cgroup_pids(pc.cgroup, pids, &n);
	} else if (argc - pc.rest + !!pc.pid != 1) {
		return cmd_error(CP_EXIT_USAGE,
				 "attach takes one PID (as -p PID or after the "
				 "options), a list PID,PID..., --tree PID or --cgroup PATH; see "
				 "'clockprof attach --help'");
	} else {
		rc = parse_pids(pc.pid ? pc.pid : argv[pc.rest], pids, &n);
		if (!rc && pc.tree && n > 1)
			return cmd_error(CP_EXIT_USAGE, "--tree takes one PID");
		if (!rc && pc.tree)
			rc = add_tree(pids, &n);
	}
	if (rc)
		return rc;
	pc.opts.pid = pids[0];
	pc.opts.members = pids + 1;
	pc.opts.nmembers = n - 1;
	pc.opts.follow_forks = pc.tree || pc.cgroup;
	return profile_command_execute(&pc);
}
