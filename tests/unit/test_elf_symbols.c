/* test_elf_symbols.c - symbol resolution on real ELF files: glibc's
 * versioned duplicates resolve to one offset, IFUNCs are recognised, C++
 * names match demangled, and misses suggest close names. */
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "error.h"
#include "unit.h"

TEST(glibc_aliases_resolve_to_one_offset)
{
	struct cp_elf_function a, b, c;
	struct cp_error err;
	char libc[4096];

	CHECK(unit_libc_path(libc, sizeof(libc)));
	/* clock_gettime@@GLIBC_2.17, clock_gettime@GLIBC_2.2.5 and
	 * __clock_gettime share one address. */
	CHECK(cp_elf_find_function(libc, "libc", "clock_gettime", &a, &err) == 0);
	CHECK(a.aliases >= 1);
	CHECK(!a.ifunc);
	CHECK(cp_elf_find_function(libc, "libc", "__clock_gettime", &b, &err) == 0);
	CHECK(a.offset == b.offset);
	CHECK(cp_elf_find_function(libc, "libc", "clock_gettime@GLIBC_2.2.5", &c, &err) == 0 ||
	      c.offset == a.offset);
}

TEST(glibc_gettimeofday_is_an_ifunc)
{
	struct cp_elf_function f;
	struct cp_error err;
	char libc[4096];

	CHECK(unit_libc_path(libc, sizeof(libc)));
	CHECK(cp_elf_find_function(libc, "libc", "gettimeofday", &f, &err) == 0);
	CHECK(f.ifunc);
	CHECK(cp_elf_find_function(libc, "libc", "time", &f, &err) == 0);
	CHECK(f.ifunc);
}

TEST(offset_matches_program_headers)
{
	struct cp_elf_function f;
	struct cp_error err;
	char libc[4096];
	uint64_t off;

	CHECK(unit_libc_path(libc, sizeof(libc)));
	CHECK(cp_elf_find_function(libc, "libc", "nanosleep", &f, &err) == 0);
	CHECK(cp_elf_vaddr_to_offset(libc, f.vaddr, &off) == 0);
	CHECK(off == f.offset);
	/* In a shared library the text segment maps at offset == vaddr - page
	 * aligned delta; the function's bytes must lie inside the file. */
	CHECK(f.offset > 0 && f.size > 0);
}

TEST(missing_symbol_suggests_close_names)
{
	struct cp_elf_function f;
	struct cp_error err = { 0 };
	char libc[4096];

	CHECK(unit_libc_path(libc, sizeof(libc)));
	CHECK(cp_elf_find_function(libc, "libc", "clock_getime", &f, &err) == -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(err.msg, "no function 'clock_getime'") != NULL);
	CHECK(strstr(err.msg, "clock_gettime") != NULL);
}

TEST(demangled_cxx_names_match)
{
	struct cp_elf_function f;
	struct cp_error err;
	char path[4096];

	/* The C++ reference target defines handle_request() with C++ linkage:
	 * _Z14handle_requestv. */
	snprintf(path, sizeof(path), "%s/targets/chrono_target", unit_build_dir());
	if (access(path, R_OK) != 0) {
		unit_skip("build/tests targets not built (make test-targets)");
		return;
	}
	CHECK(cp_elf_find_function(path, "chrono_target", "handle_request", &f, &err) == 0);
	CHECK_STR(f.name, "_Z14handle_requestv");
	CHECK(cp_elf_find_function(path, "chrono_target", "handle_request()", &f, &err) == 0);
	CHECK(cp_elf_find_function(path, "chrono_target", "_Z14handle_requestv", &f, &err) == 0);
}

/* A function template's demangled name carries its return type
 * ("long serve<Req<int> >(Req<int>)"): it answers as a user writes it,
 * without the return type, with it, with or without the parameters, and
 * with ">>" for "> >"; suggestions and completion show it without. */
static void count_name(const char *name, void *arg)
{
	if (!strcmp(name, "serve<Req<int> >"))
		++*(int *)arg;
}

TEST(cxx_template_resolves_without_its_return_type)
{
	struct cp_elf_function f;
	struct cp_error err = { 0 };
	char path[4096];
	int listed = 0;

	snprintf(path, sizeof(path), "%s/targets/callsites_cpp_target", unit_build_dir());
	if (access(path, R_OK) != 0) {
		unit_skip("build/tests targets not built (make test-targets)");
		return;
	}
	CHECK(cp_elf_find_function(path, "cpp", "serve<Req<int> >", &f, &err) == 0);
	CHECK_STR(f.name, "_Z5serveI3ReqIiEElT_");
	CHECK(cp_elf_find_function(path, "cpp", "long serve<Req<int> >", &f, &err) == 0);
	CHECK(cp_elf_find_function(path, "cpp", "serve<Req<int> >(Req<int>)", &f, &err) == 0);
	CHECK(cp_elf_find_function(path, "cpp", "serve<Req<int>>", &f, &err) == 0);
	CHECK(cp_elf_find_function(path, "cpp", "serve<Req<long> >", &f, &err) == -1);
	CHECK(strstr(err.msg, "serve<Req<int> >") != NULL);
	CHECK(cp_elf_find_function(path, "cpp", "ong serve<Req<int> >", &f, &err) == -1);
	CHECK(cp_elf_function_names(path, count_name, &listed) == 0);
	CHECK(listed == 1);
}

TEST(non_elf_file_is_an_error)
{
	struct cp_elf_function f;
	struct cp_error err = { 0 };

	CHECK(cp_elf_find_function("/proc/self/status", "status", "x", &f, &err) == -1);
	CHECK(strstr(err.msg, "ELF") != NULL);
	CHECK(cp_elf_find_function("/nonexistent", "nonexistent", "x", &f, &err) == -1);
}

TEST(stripped_binary_resolves_through_its_debug_file)
{
	struct cp_elf_function stripped, full;
	struct cp_error err;
	char path[4096], plain[4096];

	snprintf(path, sizeof(path), "%s/targets/callsites_target_stripped", unit_build_dir());
	snprintf(plain, sizeof(plain), "%s/targets/callsites_target", unit_build_dir());
	if (access(path, R_OK) != 0) {
		unit_skip("build/tests targets not built (make test-targets)");
		return;
	}
	CHECK(cp_elf_find_function(path, "stripped", "read_mono", &stripped, &err) == 0);
	CHECK(cp_elf_find_function(plain, "plain", "read_mono", &full, &err) == 0);
	/* Same source, same flags: the same place in both files. */
	CHECK(stripped.offset == full.offset);
}
