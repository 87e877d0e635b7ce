/* test_target_names.c - the target named as its users know it: a command
 * line a title was written over (redis: "redis-server 127.0.0.1:16380"
 * and 73 empty "arguments") keeps the title alone; the path it was
 * started by (AT_EXECFN, a symlink's) beside the kernel's file; the
 * summary's name from that path, not from a title's last '/' (nginx's
 * master was shown as "ngx"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "procfs.h"
#include "profile.h"
#include "run_file.h"
#include "summary.h"
#include "summary_fixture.h"
#include "target.h"
#include "unit.h"

static void parse(struct cp_target *t, const char *text, size_t n, bool whole, int total)
{
	char buf[256];

	memset(t, 0, sizeof(*t));
	memcpy(buf, text, n);
	cp_target_cmdline_parse(t, buf, n, whole, total);
}

TEST(cmdline_title_padding_dropped)
{
	/* redis's title over its argv area, the rest zeroed */
	static const char area[] = "redis-server 127.0.0.1:16380\0\0\0\0\0\0\0\0\0\0";
	struct cp_target t;

	parse(&t, area, sizeof(area) - 1, true, 10);
	CHECK_INT(t.argc, 1);
	CHECK_STR(t.argv[0], "redis-server 127.0.0.1:16380");
	CHECK(t.argv[1] == NULL);
	CHECK(t.cmdline_rewritten);
	CHECK_INT(t.argc_total, 1); /* not cut: the summary says nothing */
	cp_target_release(&t);
}

TEST(cmdline_arguments_given_empty_kept)
{
	static const char one[] = "prog\0-x\0\0";      /* prog -x '' */
	static const char inside[] = "prog\0\0\0-x\0"; /* prog '' '' -x */
	struct cp_target t;

	parse(&t, one, sizeof(one) - 1, true, 3);
	CHECK_INT(t.argc, 3);
	CHECK_STR(t.argv[2], "");
	CHECK(!t.cmdline_rewritten);
	cp_target_release(&t);
	parse(&t, inside, sizeof(inside) - 1, true, 4);
	CHECK_INT(t.argc, 4);
	CHECK(!t.cmdline_rewritten);
	cp_target_release(&t);
}

/* A command line read in part ends where the read did: nothing there is
 * known to be padding. */
TEST(cmdline_cut_keeps_its_arguments)
{
	static const char start[] = "prog\0\0\0\0";
	struct cp_target t;

	parse(&t, start, sizeof(start) - 1, false, 900);
	CHECK_INT(t.argc, 4);
	CHECK_INT(t.argc_total, 900);
	CHECK(!t.cmdline_rewritten);
	cp_target_release(&t);
}

TEST(execfn_is_the_path_started_by)
{
	char path[4096];
	const char *mine = (const char *)getauxval(AT_EXECFN);

	CHECK(mine != NULL);
	CHECK(cp_proc_execfn(getpid(), path, sizeof(path)) == (ssize_t)strlen(mine));
	CHECK_STR(path, mine);
	CHECK(cp_proc_execfn(-1, path, sizeof(path)) == -1 && path[0] == '\0');
}

static void profile_of(struct cp_profile *p, const char *exe, const char *exec_path, char *arg0)
{
	static char *argv[2];

	memset(p, 0, sizeof(*p));
	p->target.pid = 42;
	p->complete = true;
	p->mechanism = p->requested_mechanism = CP_MECHANISM_PATCH;
	snprintf(p->target.comm, sizeof(p->target.comm), "comm15chars_cut");
	snprintf(p->target.exe, sizeof(p->target.exe), "%s", exe);
	snprintf(p->target.exec_path, sizeof(p->target.exec_path), "%s", exec_path);
	argv[0] = arg0;
	p->target.argv = argv;
	p->target.argc = p->target.argc_total = 1;
}

TEST(summary_names_the_program_as_started)
{
	struct cp_profile p;
	char *text;
	json_t *doc, *target;

	profile_of(&p, "/usr/bin/redis-check-rdb", "/usr/bin/redis-server",
		   "redis-server 127.0.0.1:16380");
	text = summary_of(&p);
	CHECK(strncmp(text, "clockprof: redis-server (pid 42)", 32) == 0);
	CHECK(strstr(text,
		     "  started as /usr/bin/redis-server (the kernel's executable: /usr/bin/redis-check-rdb)\n") !=
	      NULL);
	free(text);
	doc = cp_run_file_build(&p);
	target = json_object_get(doc, "target");
	CHECK_STR(json_string_value(json_object_get(target, "exe")), "/usr/bin/redis-check-rdb");
	CHECK_STR(json_string_value(json_object_get(target, "exec_path")), "/usr/bin/redis-server");
	CHECK(json_is_false(json_object_get(target, "cmdline_rewritten")));
	json_decref(doc);
	/* started by its own file's path: one name, no second line */
	profile_of(&p, "/usr/sbin/nginx", "/usr/sbin/nginx",
		   "nginx: master process /usr/sbin/nginx");
	text = summary_of(&p);
	CHECK(strncmp(text, "clockprof: nginx (pid 42)", 25) == 0);
	CHECK(strstr(text, "started as") == NULL);
	free(text);
}

/* Without the path it was started by (unreadable), a title's first word,
 * not the part after its last '/'. */
TEST(summary_name_from_a_title_is_its_first_word)
{
	struct cp_profile p;
	char *text;
	json_t *doc;

	profile_of(&p, "/usr/sbin/nginx", "", "nginx: master process /usr/sbin/nginx -p /srv/ngx");
	text = summary_of(&p);
	CHECK(strncmp(text, "clockprof: nginx (pid 42)", 25) == 0);
	free(text);
	doc = cp_run_file_build(&p);
	CHECK(json_is_null(json_object_get(json_object_get(doc, "target"), "exec_path")));
	json_decref(doc);
	profile_of(&p, "/srv/a.out", "", "");
	text = summary_of(&p);
	CHECK(strncmp(text, "clockprof: comm15chars_cut (pid", 31) == 0);
	free(text);
}
