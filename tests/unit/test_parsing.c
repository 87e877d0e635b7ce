/* test_parsing.c - durations, request specs, syscall names, suggestions. */
#include "duration.h"
#include "error.h"
#include "request_spec.h"
#include "suggest.h"
#include "syscall_names.h"
#include "unit.h"

TEST(duration_forms)
{
	struct cp_error err;
	double s;

	CHECK(cp_parse_duration("10", &s, &err) == 0);
	CHECK_NEAR(s, 10, 1e-12);
	CHECK(cp_parse_duration("2.5s", &s, &err) == 0);
	CHECK_NEAR(s, 2.5, 1e-12);
	CHECK(cp_parse_duration("500ms", &s, &err) == 0);
	CHECK_NEAR(s, 0.5, 1e-12);
	CHECK(cp_parse_duration("1m", &s, &err) == 0);
	CHECK_NEAR(s, 60, 1e-12);
	CHECK(cp_parse_duration("250us", &s, &err) == 0);
	CHECK_NEAR(s, 250e-6, 1e-15);
}

TEST(duration_rejects_bad_input)
{
	static const char *const bad[] = { "",	  "s",	 "-1", "0",  "5x",  "1.5.2",
					   "nan", "inf", " 5", "+5", "1e9", "10 s" };
	struct cp_error err = { 0 };
	double s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cp_parse_duration(bad[i], &s, &err) == 0)
			unit_fail(__FILE__, __LINE__, "accepted \"%s\"", bad[i]);
		CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	}
}

TEST(request_spec_func_forms)
{
	struct cp_request_spec r;
	struct cp_error err;

	CHECK(cp_request_spec_parse("func:handle_request", &r, &err) == 0);
	CHECK_INT(r.kind, CP_REQUEST_FUNC);
	CHECK_STR(r.func.file, "");
	CHECK_STR(r.func.symbol, "handle_request");
	CHECK(cp_request_spec_parse("func:/usr/lib/libx.so:serve", &r, &err) == 0);
	CHECK_STR(r.func.file, "/usr/lib/libx.so");
	CHECK_STR(r.func.symbol, "serve");
	/* C++ scope operators are never the FILE separator. */
	CHECK(cp_request_spec_parse("func:ns::Server::handle(int)", &r, &err) == 0);
	CHECK_STR(r.func.file, "");
	CHECK_STR(r.func.symbol, "ns::Server::handle(int)");
	CHECK(cp_request_spec_parse("func:libsrv.so:ns::handle", &r, &err) == 0);
	CHECK_STR(r.func.file, "libsrv.so");
	CHECK_STR(r.func.symbol, "ns::handle");
}

TEST(request_spec_syscall_and_errors)
{
	struct cp_request_spec r;
	struct cp_error err = { 0 };

	CHECK(cp_request_spec_parse("syscall:sendto", &r, &err) == 0);
	CHECK_INT(r.kind, CP_REQUEST_SYSCALL);
	CHECK_INT(r.syscall_nr, 44);
	CHECK(cp_request_spec_parse("syscall:sys_clock_gettime", &r, &err) == 0);
	CHECK_INT(r.syscall_nr, 228);
	CHECK(cp_request_spec_parse("syscall:sendtoo", &r, &err) == -1);
	CHECK(strstr(err.msg, "sendto") != NULL);
	CHECK(cp_request_spec_parse("handle_request", &r, &err) == -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(cp_request_spec_parse("func:", &r, &err) == -1);
	CHECK(cp_request_spec_parse("func::x", &r, &err) == -1 || strcmp(r.func.symbol, ":x") != 0);
}

TEST(syscall_table_from_headers)
{
	CHECK_INT(cp_syscall_number("read"), 0);
	CHECK_INT(cp_syscall_number("gettimeofday"), 96);
	CHECK_INT(cp_syscall_number("time"), 201);
	CHECK_INT(cp_syscall_number("no_such_call"), -1);
	CHECK_STR(cp_syscall_name(44), "sendto");
}

TEST(suggestions_rank_closest_first)
{
	static const char *const names[] = { "handle_request", "main", "serve", "handle_response",
					     "unrelated_function" };
	struct cp_suggest s;
	char buf[256];

	cp_suggest_init(&s, "handle_requets");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cp_suggest_add(&s, names[i]);
	CHECK(s.n >= 1);
	CHECK_STR(s.best[0], "handle_request");
	cp_suggest_format(&s, buf, sizeof(buf));
	CHECK(strstr(buf, "did you mean handle_request") != NULL);
	CHECK(strstr(buf, "unrelated_function") == NULL);
	CHECK_INT(cp_edit_distance("kitten", "sitting"), 3);
}

TEST(suggestions_skip_names_that_share_nothing)
{
	static const char *const names[] = { "mount", "umount2", "sendto", "read" };
	struct cp_suggest s;
	char buf[256];

	cp_suggest_init(&s, "nosuch");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cp_suggest_add(&s, names[i]);
	cp_suggest_format(&s, buf, sizeof(buf));
	CHECK_STR(buf, "");
	cp_suggest_init(&s, "raed"); /* a short name still finds its typo */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cp_suggest_add(&s, names[i]);
	CHECK(s.n >= 1);
	CHECK_STR(s.best[0], "read");
}
