/* test_procfs.c - the /proc and build-id layer (lib/procfs): maps lines as
 * the kernel writes them, this process's own map, and the build-id of its
 * executable read from the file and from its memory alike. */
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build_id.h"
#include "json_file.h"
#include "proc_maps.h"
#include "procfs.h"
#include "unit.h"

TEST(proc_map_parse_file_deleted_and_anonymous)
{
	struct cp_proc_map m;
	char shown[PATH_MAX + 16];
	char file[] = "7f12a000-7f12c000 r-xp 00002000 fd:01 1234   /usr/lib/libc.so.6\n";
	char deleted[] = "400000-401000 r-xp 00000000 08:02 77 /srv/a b (deleted)\n";
	char vdso[] = "7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]\n";
	char anon[] = "7ffd4000-7ffd5000 rw-p 00000000 00:00 0 \n";
	char bad[] = "not a maps line\n";

	CHECK(cp_proc_map_parse(file, &m) == 0);
	CHECK(m.start == 0x7f12a000 && m.end == 0x7f12c000 && m.offset == 0x2000);
	CHECK_STR(m.perms, "r-xp");
	CHECK(m.dev_major == 0xfd && m.dev_minor == 1 && m.ino == 1234 && !m.deleted);
	CHECK_STR(m.path, "/usr/lib/libc.so.6");
	CHECK(cp_proc_map_parse(deleted, &m) == 0);
	CHECK(m.deleted);
	CHECK_STR(m.path, "/srv/a b");
	cp_proc_map_shown_path(&m, shown, sizeof(shown));
	CHECK_STR(shown, "/srv/a b (deleted)");
	CHECK(cp_proc_map_parse(vdso, &m) == 0);
	CHECK(m.ino == 0);
	CHECK_STR(m.path, "[vdso]");
	CHECK(cp_proc_map_parse(anon, &m) == 0);
	CHECK(m.ino == 0 && !m.deleted);
	CHECK_STR(m.path, "");
	CHECK(cp_proc_map_parse(bad, &m) == -1);
}

TEST(proc_maps_of_this_process_hold_its_code_and_vdso)
{
	struct cp_proc_map *maps;
	size_t n;
	uint64_t here = (uint64_t)(uintptr_t)&cp_proc_map_parse, lo, hi;
	int found = 0;

	CHECK(cp_proc_maps_read(getpid(), &maps, &n) == 0);
	for (size_t i = 0; i < n; i++)
		found += here >= maps[i].start && here < maps[i].end && maps[i].perms[2] == 'x';
	free(maps);
	CHECK_INT(found, 1);
	CHECK(cp_proc_maps_find_vdso(getpid(), &lo, &hi) == 0);
	CHECK(lo < hi);
}

TEST(build_id_of_file_and_of_memory_agree)
{
	struct cp_proc_map *maps;
	char file[128], mem[128], exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t n;
	int rc = -1;

	CHECK(len > 0);
	exe[len] = '\0';
	cp_build_id_of_path("/proc/self/exe", file, sizeof(file));
	if (!file[0]) {
		unit_skip("the unit-test binary has no build-id");
		return;
	}
	CHECK(cp_proc_maps_read(getpid(), &maps, &n) == 0);
	for (size_t i = 0; i < n && rc; i++)
		if (!strcmp(maps[i].path, exe) && maps[i].offset == 0)
			rc = cp_build_id_in_memory(getpid(), maps[i].start, mem, sizeof(mem));
	free(maps);
	CHECK(rc == 0);
	CHECK_STR(mem, file);
	CHECK(cp_build_id_in_memory(getpid(), 0, mem, sizeof(mem)) == -1);
}

TEST(json_str_gives_the_string_or_the_stand_in)
{
	json_t *o = json_pack("{s:s, s:i, s:n}", "name", "clock", "count", 3, "none");

	CHECK_STR(cp_json_str(o, "name", NULL), "clock");
	CHECK(cp_json_str(o, "count", NULL) == NULL);
	CHECK_STR(cp_json_str(o, "none", ""), "");
	CHECK_STR(cp_json_str(o, "missing", "?"), "?");
	json_decref(o);
}

/* A child and its own child made after a reading of the last pid are
 * found from it, parents first; from a reading after them, neither. */
TEST(descendants_born_since_a_pid_are_found_and_no_older_ones)
{
	int ready[2], hold[2];
	long before = cp_proc_last_pid();
	pid_t child, grandchild = 0, *d = NULL;
	size_t n = 0;
	char b;

	CHECK(before > 0 && pipe(ready) == 0 && pipe(hold) == 0);
	if ((child = fork()) == 0) {
		pid_t g;

		close(hold[1]); /* both end when the test closes its end */
		g = fork();

		if (g == 0) {
			if (read(hold[0], &b, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (write(ready[1], &g, sizeof(g)) != sizeof(g) || read(hold[0], &b, 1) < 0)
			_exit(1);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	CHECK(read(ready[0], &grandchild, sizeof(grandchild)) == sizeof(grandchild));
	CHECK(cp_proc_descendants_born(getpid(), before, &d, &n) == 0);
	CHECK(n >= 2 && d[0] == child && cp_tid_in(d, n, grandchild));
	free(d);
	CHECK(cp_proc_descendants_born(getpid(), cp_proc_last_pid(), &d, &n) == 0);
	CHECK(!cp_tid_in(d, n, child) && !cp_tid_in(d, n, grandchild));
	free(d);
	/* a process with a child, one whose child has one, one with none */
	CHECK(cp_proc_has_children(getpid()));
	CHECK(cp_proc_has_children(child));
	CHECK(!cp_proc_has_children(grandchild));
	close(hold[1]);
	waitpid(child, NULL, 0);
	close(hold[0]);
	close(ready[0]);
	close(ready[1]);
}

/* The exec's random bytes (AT_RANDOM), as this process has them, and a
 * forked child's: the same image, the same bytes; an exec'd one's new. */
TEST(exec_random_is_the_images_own)
{
	const uint8_t *mine = (const uint8_t *)getauxval(AT_RANDOM);
	uint8_t got[16], child[16];
	int go[2];
	pid_t pid;

	CHECK(mine != NULL && cp_proc_exec_random(getpid(), got) == 0);
	CHECK(memcmp(got, mine, sizeof(got)) == 0);
	CHECK(pipe(go) == 0);
	if ((pid = fork()) == 0) {
		char b;

		close(go[1]);
		(void)!read(go[0], &b, 1); /* a fork: the parent's image */
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(1);
	}
	close(go[0]);
	CHECK(pid > 0 && cp_proc_exec_random(pid, child) == 0);
	CHECK(memcmp(child, mine, sizeof(child)) == 0);
	close(go[1]); /* now its exec: new bytes, once it is done */
	for (int i = 0; i < 200 && (cp_proc_exec_random(pid, child) || !memcmp(child, mine, 16));
	     i++)
		usleep(5000);
	CHECK(memcmp(child, mine, sizeof(child)) != 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Waits until pid's exec random bytes differ from was (its exec done). */
static bool wait_exec(pid_t pid, const uint8_t was[16], uint8_t now[16])
{
	for (int i = 0; i < 400; i++) {
		if (cp_proc_exec_random(pid, now) == 0 && memcmp(now, was, 16))
			return true;
		usleep(5000);
	}
	return false;
}

/* The child to pin: sh without address randomization, until told (a
 * line on *go) to exec sleep. *at: where sh's AT_RANDOM bytes lie, sh:
 * those bytes. -1: not started. */
static pid_t start_sh(int *go, uint8_t sh[16], uint64_t *at)
{
	const uint8_t *mine = (const uint8_t *)getauxval(AT_RANDOM);
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	if ((pid = fork()) == 0) {
		dup2(fds[0], 0);
		close(fds[1]);
		personality(ADDR_NO_RANDOMIZE);
		execl("/bin/sh", "sh", "-c", "read x; exec sleep 5", (char *)NULL);
		_exit(1);
	}
	close(fds[0]);
	*go = fds[1];
	if (pid > 0 && wait_exec(pid, mine, sh) && cp_proc_auxv(pid, AT_RANDOM, at) == 0 &&
	    *at != 0)
		return pid;
	close(fds[1]);
	if (pid > 0)
		kill(pid, SIGKILL);
	return -1;
}

/* sh told to exec sleep, and its exec done. */
static bool exec_sleep(pid_t pid, int go, const uint8_t sh[16])
{
	uint8_t sleeping[16];

	return write(go, "x\n", 2) == 2 && wait_exec(pid, sh, sleeping);
}

static void end_child(pid_t pid, int go)
{
	close(go);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A write pinned to a program never lands in the one it exec()s: without
 * address randomization (setarch -R) the new program's stack lies where
 * the old one's did, and an unpinned write at the old address reaches it
 * (shown last, with the bytes it already holds). Before the exec, the
 * pin writes (sh's own bytes, again). */
TEST(a_pinned_write_never_reaches_the_program_exec_ed_after)
{
	uint8_t sh[16], before[16], after[16], junk[16];
	uint64_t at = 0;
	int go = -1, pin;
	pid_t pid;

	memset(junk, 0x5a, sizeof(junk));
	CHECK((pid = start_sh(&go, sh, &at)) > 0);
	CHECK((pin = cp_proc_mem_pin(pid)) >= 0);
	CHECK(cp_proc_mem_write(pid, at, sh, sizeof(sh)) == 0);
	CHECK(exec_sleep(pid, go, sh));
	CHECK(cp_proc_mem_read(pid, at, before, sizeof(before)) == 0);
	CHECK(cp_proc_mem_write(pid, at, junk, sizeof(junk)) != 0);
	CHECK(cp_proc_mem_read(pid, at, after, sizeof(after)) == 0);
	CHECK(memcmp(before, after, sizeof(after)) == 0);
	cp_proc_mem_unpin(pin);
	CHECK(cp_proc_mem_write(pid, at, before, sizeof(before)) == 0);
	end_child(pid, go);
}

/* A patch writes through its own pin: the program it patched, though the
 * pid was pinned since for the program it exec()ed (its exec followed,
 * the new one patched too), whose memory lies at the same addresses. A
 * token another pid's is never used for this one (a fork mended with its
 * parent's patch): the write opens anew. */
TEST(a_patch_of_the_old_program_never_writes_through_the_new_ones_pin)
{
	uint8_t sh[16], before[16], after[16], junk[16], mine[16] = { 0 };
	uint64_t at = 0;
	int go = -1, old, now;
	pid_t pid;

	memset(junk, 0x5a, sizeof(junk));
	CHECK((pid = start_sh(&go, sh, &at)) > 0);
	CHECK((old = cp_proc_mem_pin(pid)) >= 0);
	CHECK(exec_sleep(pid, go, sh));
	CHECK((now = cp_proc_mem_pin(pid)) >= 0);
	CHECK(cp_proc_mem_read(pid, at, before, sizeof(before)) == 0);
	CHECK(cp_proc_mem_write_pinned(old, pid, at, junk, sizeof(junk)) != 0);
	CHECK(cp_proc_mem_read(pid, at, after, sizeof(after)) == 0);
	CHECK(memcmp(before, after, sizeof(after)) == 0);
	CHECK(cp_proc_mem_write_pinned(now, pid, at, before, sizeof(before)) == 0);
	CHECK(cp_proc_mem_write_pinned(now, getpid(), (uintptr_t)mine, junk, sizeof(junk)) == 0);
	CHECK(memcmp(mine, junk, sizeof(junk)) == 0);
	CHECK(cp_proc_mem_read(pid, at, after, sizeof(after)) == 0);
	CHECK(memcmp(before, after, sizeof(after)) == 0);
	cp_proc_mem_unpin(old);
	cp_proc_mem_unpin(now);
	end_child(pid, go);
}
