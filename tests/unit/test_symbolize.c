/* test_symbolize.c - lib/symbols/symbolize: names, files, lines, inline chains,
 * demangling, stripped binaries, shared libraries, the vDSO, files replaced
 * on disk, and the 10,000-site speed bound, on fixtures run as children
 * (no privileges needed except where said); where debug files are looked
 * for. */
#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_id.h"
#include "error.h"
#include "local_debuginfo.h"
#include "procfs.h"
#include "stacks.h"
#include "symbolize.h"
#include "target.h"
#include "unit.h"

#include "callsites_fixture.h"

#define C_SRC "tests/targets/callsites_target.c"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Symbolizes addr in process pid of fixture `fixture`, symbol from elf. */
static int open_and_lookup(const char *fixture, const char *elf_name, const char *symbol,
			   pid_t *pid, struct cp_symbolizer **s, uint64_t *addr)
{
	char path[PATH_MAX], elf[PATH_MAX], suffix[PATH_MAX];
	struct cp_error err = { 0 };

	fixture_path(fixture, path, sizeof(path));
	fixture_path(elf_name, elf, sizeof(elf));
	*pid = fixture_spawn_path(path);
	if (*pid < 0)
		return -1;
	snprintf(suffix, sizeof(suffix), "/%s", fixture);
	if (strstr(elf_name, "libcallsites"))
		snprintf(suffix, sizeof(suffix), "/libcallsites.so");
	if (fixture_symbol(*pid, suffix, elf, symbol, addr, NULL) != 0) {
		fixture_kill(*pid);
		return -2;
	}
	*s = cp_symbolizer_open(*pid, &err);
	if (!*s) {
		fprintf(stderr, "  %s\n", err.msg);
		fixture_kill(*pid);
		return -3;
	}
	return 0;
}

TEST(demangle_cpp_and_rust)
{
	char *a = cp_symbol_display_name("_ZN3app5TimerIiE7elapsedERKSt6vectorIiSaIiEE");
	char *b = cp_symbol_display_name("_ZN3std4time7Instant3now17h0123456789abcdefE");
	char *c = cp_symbol_display_name("clock_gettime");
	char *d = cp_symbol_display_name("_ZNSt6chrono3_V212steady_clock3nowEv");
	char *e = cp_symbol_display_name("clock_gettime@@GLIBC_2.17");

	CHECK_STR(a, "app::Timer<int>::elapsed(std::vector<int, std::allocator<int> > const&)");
	CHECK_STR(b, "std::time::Instant::now");
	CHECK_STR(c, "clock_gettime");
	CHECK_STR(d, "std::chrono::_V2::steady_clock::now()");
	CHECK_STR(e, "clock_gettime");
	free(e);
	free(a);
	free(b);
	free(c);
	free(d);
}

TEST(proc_start_time_tells_processes_apart)
{
	struct cp_proc_stat st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	CHECK(cp_proc_stat_read(getpid(), &st) == 0 && st.start_time > 0);
	CHECK(cp_proc_stat_read(pid, &st) == -1);
}

TEST(symbolize_function_file_line_module)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t addr;
	pid_t pid;
	int site = fixture_marker_line(C_SRC, "read_mono");
	char label[256];

	if (open_and_lookup("callsites_target", "callsites_target", "read_mono", &pid, &s, &addr) !=
	    0) {
		unit_skip("fixture callsites_target not built or not readable");
		return;
	}
	CHECK_INT(cp_symbolize(s, addr + 4, &f), 0);
	cp_frame_label(&f, true, label, sizeof(label));
	cp_symbolizer_close(s);
	fixture_kill(pid);
	/* strings die with the symbolizer: checked from the label and copies */
	CHECK_STR(label, "read_mono+0x4");
	CHECK(site > 0);
}

/* What reporting the modules read of their files (headers, notes) is
 * given back as each is reported (issue 43: a target's ~20 libraries held
 * together were ~2 MB of clockprof's peak RSS): no page of libc's image is
 * held once the symbolizer is open, and libc is named as before. */
TEST(symbolizer_open_holds_no_module_pages)
{
	pid_t pid = fixture_spawn("callsites_target");
	struct cp_symbolizer *s = pid > 0 ? cp_symbolizer_open(pid, NULL) : NULL;
	unsigned long long lo = 0, hi = 0;
	struct cp_frame_info f = { 0 };
	long held;
	int rc;

	if (pid < 0) {
		unit_skip("fixture callsites_target not built");
		return;
	}
	held = s ? fixture_libc_pages_held(s) : -3;
	fixture_libc_code(pid, &lo, &hi);
	rc = s && lo ? cp_symbolize_symbol(s, lo + 16, &f) : -1;
	fixture_kill(pid);
	CHECK_INT(held, 0);
	CHECK_INT(rc, 0);
	CHECK(f.module && strstr(f.module, "/libc.so.6"));
	cp_symbolizer_close(s);
}

TEST(symbolize_reports_file_line_build_id)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t addr;
	pid_t pid;
	int site = fixture_marker_line(C_SRC, "read_mono");
	int ok;

	if (open_and_lookup("callsites_target", "callsites_target", "read_mono", &pid, &s, &addr) !=
	    0) {
		unit_skip("fixture callsites_target not built or not readable");
		return;
	}
	ok = cp_symbolize(s, addr + 4, &f) == 0 && f.function &&
	     strcmp(f.function, "read_mono") == 0 && f.function_offset == 4 &&
	     ends_with(f.file, "callsites_target.c") && f.line > 0 && f.line <= site &&
	     site - f.line < 6 && ends_with(f.module, "/callsites_target") && f.build_id &&
	     strlen(f.build_id) == 40 && !f.stale && f.n_inlined == 0;
	if (!ok)
		fprintf(stderr, "  got %s+0x%lx %s:%d module %s build-id %s\n", f.function,
			(unsigned long)f.function_offset, f.file, f.line, f.module, f.build_id);
	cp_symbolizer_close(s);
	fixture_kill(pid);
	CHECK(ok);
}

/* Addresses of `call rel32` instructions inside [from, to) of process pid. */
static size_t calls_in(pid_t pid, uint64_t from, uint64_t to, uint64_t *out, size_t max)
{
	char path[64];
	unsigned char code[256];
	size_t n = 0, len = to - from;
	int fd;

	if (len > sizeof(code))
		len = sizeof(code);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, code, len, (off_t)from) == (ssize_t)len)
		for (size_t i = 0; i + 5 <= len && n < max; i++)
			if (code[i] == 0xE8)
				out[n++] = from + i;
	close(fd);
	return n;
}

/* The clock_gettime call of now_ns() is inlined twice into handle_request;
 * the symbolizer names both functions, with the lines. The call
 * instructions are found from the line table read with libdw directly
 * (rows of the SITE:now_ns line inside handle_request), independently of the
 * symbolizer's own lookup path. Other instructions of that line are
 * scheduled among the caller's and may belong to it, so only the calls are
 * checked. */
TEST(symbolize_inline_chain)
{
	char path[PATH_MAX];
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t hr, hr_size = 0, start, calls[8];
	pid_t pid;
	int inner = fixture_marker_line(C_SRC, "now_ns");
	int call1 = fixture_marker_line(C_SRC, "inline1");
	int call2 = fixture_marker_line(C_SRC, "inline2");
	Dwarf_Lines *lines = NULL;
	Dwarf_Die cu;
	size_t nlines = 0, ncalls = 0;
	Dwarf *dbg;
	int fd, bad = 0;

	if (!inner || !call1 || !call2) {
		unit_skip("run from the repository root (source markers)");
		return;
	}
	fixture_path("callsites_target", path, sizeof(path));
	pid = fixture_spawn_path(path);
	if (pid < 0) {
		unit_skip("fixture callsites_target not built");
		return;
	}
	CHECK(fixture_symbol(pid, "/callsites_target", path, "handle_request", &hr, &hr_size) == 0);
	CHECK(fixture_map_start(pid, "/callsites_target", &start) == 0);
	fd = open(path, O_RDONLY);
	dbg = dwarf_begin(fd, DWARF_C_READ);
	CHECK(dbg);
	CHECK(dwarf_addrdie(dbg, hr - start, &cu) != NULL);
	CHECK(dwarf_getsrclines(&cu, &lines, &nlines) == 0);
	for (size_t i = 0; i + 1 < nlines && ncalls < 8; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a, b;
		int ln = 0;

		dwarf_lineaddr(l, &a);
		dwarf_lineaddr(dwarf_onesrcline(lines, i + 1), &b);
		dwarf_lineno(l, &ln);
		/* PIE linked at 0: absolute = start + a */
		if (ln != inner || start + a < hr || start + a >= hr + hr_size || b <= a)
			continue;
		ncalls += calls_in(pid, start + a, start + b, calls + ncalls, 8 - ncalls);
	}
	s = cp_symbolizer_open(pid, NULL);
	CHECK(s);
	for (size_t i = 0; i < ncalls; i++) {
		if (cp_symbolize(s, calls[i], &f) != 0 || !f.function ||
		    strcmp(f.function, "handle_request") != 0 || f.line != inner ||
		    f.n_inlined != 1 || !f.inlined[0].function ||
		    strcmp(f.inlined[0].function, "now_ns") != 0 ||
		    (f.inlined[0].call_line != (i ? call2 : call1)) ||
		    !ends_with(f.inlined[0].call_file, "callsites_target.c")) {
			fprintf(stderr, "  0x%lx: %s line %d, %zu inlined: %s called at %d\n",
				(unsigned long)calls[i], f.function, f.line, f.n_inlined,
				f.n_inlined ? f.inlined[0].function : "-",
				f.n_inlined ? f.inlined[0].call_line : 0);
			bad++;
		}
	}
	dwarf_end(dbg);
	close(fd);
	cp_symbolizer_close(s);
	fixture_kill(pid);
	CHECK_INT(ncalls, 2);
	CHECK_INT(bad, 0);
}

TEST(symbolize_cpp_template_names)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t addr;
	pid_t pid;
	char name[512] = "", file[PATH_MAX] = "";

	if (open_and_lookup("callsites_cpp_target", "callsites_cpp_target",
			    "_ZN3app5TimerIiE7elapsedERKSt6vectorIiSaIiEE", &pid, &s, &addr) != 0) {
		unit_skip("fixture callsites_cpp_target not built");
		return;
	}
	if (cp_symbolize(s, addr + 1, &f) == 0 && f.function) {
		snprintf(name, sizeof(name), "%s", f.function);
		snprintf(file, sizeof(file), "%s", f.file ? f.file : "");
	}
	cp_symbolizer_close(s);
	fixture_kill(pid);
	CHECK_STR(name, "app::Timer<int>::elapsed(std::vector<int, std::allocator<int> > const&)");
	CHECK(ends_with(file, "callsites_cpp_target.cpp"));
}

TEST(symbolize_stripped_with_debuglink)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t addr;
	pid_t pid;
	int ok;

	if (open_and_lookup("callsites_target_stripped", "callsites_target_stripped.debug",
			    "read_mono", &pid, &s, &addr) != 0) {
		unit_skip("fixture callsites_target_stripped not built");
		return;
	}
	ok = cp_symbolize(s, addr + 4, &f) == 0 && f.function &&
	     strcmp(f.function, "read_mono") == 0 && ends_with(f.file, "callsites_target.c") &&
	     f.line > 0;
	if (!ok)
		fprintf(stderr, "  got %s %s:%d\n", f.function, f.file, f.line);
	cp_symbolizer_close(s);
	fixture_kill(pid);
	CHECK(ok);
}

TEST(symbolize_stripped_falls_back_to_dynsym)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t addr;
	pid_t pid;
	char label[256] = "";
	int nofile = 0;

	if (open_and_lookup("callsites_target_bare", "callsites_target_bare", "read_mono", &pid, &s,
			    &addr) != 0) {
		unit_skip("fixture callsites_target_bare not built");
		return;
	}
	if (cp_symbolize(s, addr + 4, &f) == 0) {
		cp_frame_label(&f, true, label, sizeof(label));
		nofile = f.file == NULL && f.line == 0;
	}
	cp_symbolizer_close(s);
	fixture_kill(pid);
	CHECK_STR(label, "read_mono+0x4");
	CHECK(nofile);
}

TEST(symbolize_own_shared_library)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t addr;
	pid_t pid;
	int ok;

	if (open_and_lookup("callsites_lib_target", "libcallsites.so", "lib_read_clock", &pid, &s,
			    &addr) != 0) {
		unit_skip("fixture callsites_lib_target not built");
		return;
	}
	ok = cp_symbolize(s, addr + 1, &f) == 0 && f.function &&
	     strcmp(f.function, "lib_read_clock") == 0 && ends_with(f.module, "/libcallsites.so") &&
	     ends_with(f.file, "callsites_lib.c") && f.build_id;
	cp_symbolizer_close(s);
	fixture_kill(pid);
	CHECK(ok);
}

TEST(symbolize_vdso_and_unknown_addresses)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	uint64_t addr;
	pid_t pid = fixture_spawn("callsites_target");
	char label[64];
	int vdso_ok;

	if (pid < 0) {
		unit_skip("fixture callsites_target not built");
		return;
	}
	CHECK(fixture_vdso_symbol(pid, "__vdso_clock_gettime", &addr) == 0);
	s = cp_symbolizer_open(pid, NULL);
	CHECK(s);
	vdso_ok = cp_symbolize(s, addr, &f) == 0 && f.module && strcmp(f.module, "[vdso]") == 0 &&
		  f.function && strstr(f.function, "clock_gettime");
	CHECK_INT(cp_symbolize(s, 0x10, &f), -1);
	cp_frame_label(&f, true, label, sizeof(label));
	cp_symbolizer_close(s);
	fixture_kill(pid);
	CHECK(vdso_ok);
	CHECK_STR(label, "0x10");
}

TEST(symbolize_after_target_exit)
{
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	struct cp_error err = { 0 };
	uint64_t addr;
	pid_t pid;
	int ok;

	if (open_and_lookup("callsites_target", "callsites_target", "read_time", &pid, &s, &addr) !=
	    0) {
		unit_skip("fixture callsites_target not built");
		return;
	}
	fixture_kill(pid);
	ok = cp_symbolize(s, addr + 2, &f) == 0 && f.function &&
	     strcmp(f.function, "read_time") == 0;
	CHECK_INT(cp_symbolizer_check_stale(s, &err), 0);
	cp_symbolizer_close(s);
	CHECK(ok);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	return n == 0 ? 0 : -1;
}

/* Copies the fixture to a temporary directory, runs it, and replaces the
 * copy on disk (rename of another binary over it) before or after the
 * symbolizer is opened. */
static void replaced_binary(bool before_open)
{
	char dir[] = "/tmp/cp-sym-XXXXXX", exe[PATH_MAX], other[PATH_MAX];
	char src[PATH_MAX], src_other[PATH_MAX];
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	struct cp_error err = { 0 };
	uint64_t addr;
	pid_t pid;
	int stale, named;
	bool privileged;

	fixture_path("callsites_target", src, sizeof(src));
	fixture_path("callsites_cpp_target", src_other, sizeof(src_other));
	CHECK(mkdtemp(dir));
	snprintf(exe, sizeof(exe), "%s/server", dir);
	snprintf(other, sizeof(other), "%s/server.new", dir);
	if (copy_file(src, exe) != 0 || copy_file(src_other, other) != 0) {
		unit_skip("fixtures not built");
		unlink(exe);
		unlink(other);
		rmdir(dir);
		return;
	}
	pid = fixture_spawn_path(exe);
	CHECK(pid > 0);
	CHECK(fixture_symbol(pid, "/server", exe, "read_mono", &addr, NULL) == 0);
	if (before_open)
		CHECK(rename(other, exe) == 0);
	s = cp_symbolizer_open(pid, &err);
	CHECK(s);
	if (!before_open)
		CHECK(rename(other, exe) == 0);
	stale = cp_symbolizer_check_stale(s, &err);
	named = cp_symbolize(s, addr + 4, &f) == 0 && f.function &&
		strcmp(f.function, "read_mono") == 0;
	{
		char mf[128];
		int fd;

		snprintf(mf, sizeof(mf), "/proc/%d/map_files", (int)pid);
		fd = open(mf, O_RDONLY | O_DIRECTORY);
		privileged = geteuid() == 0 && fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	cp_symbolizer_close(s);
	fixture_kill(pid);
	unlink(exe);
	rmdir(dir);
	if (!before_open) {
		/* the copy opened at attach still names the code */
		CHECK_INT(stale, 1);
		CHECK(strstr(err.msg, "replaced on disk after attach"));
		CHECK(named);
	} else if (privileged) {
		/* read back through /proc/PID/map_files: right names */
		CHECK(named);
		CHECK(stale >= 0);
	} else {
		/* no way to read the mapped file: no name rather than a wrong one */
		CHECK(!named);
		CHECK_INT(stale, -1);
	}
}

TEST(symbolize_detects_binary_replaced_after_open)
{
	replaced_binary(false);
}

TEST(symbolize_never_misnames_binary_replaced_before_open)
{
	replaced_binary(true);
}

/* 10,000 distinct addresses across libc's code (with its separate debug
 * info when libc6-dbg is installed) all symbolize, and nearly all to a
 * name. How long that takes is a figure of `make bench`
 * (tests/bench/bench_symbolize.c), never asserted: hosts differ in speed. */
TEST(symbolize_10000_sites)
{
	unsigned long long lo = 0, hi = 0;
	struct cp_symbolizer *s;
	struct cp_frame_info f;
	pid_t pid = fixture_spawn("callsites_target");
	size_t named = 0, with_line = 0, named_again = 0;

	if (pid < 0) {
		unit_skip("fixture callsites_target not built");
		return;
	}
	fixture_libc_code(pid, &lo, &hi);
	CHECK(hi > lo + 10000);
	s = cp_symbolizer_open(pid, NULL);
	CHECK(s);
	for (uint64_t i = 0; i < 10000; i++) {
		uint64_t a = lo + i * ((hi - lo) / 10000);

		if (cp_symbolize(s, a, &f) == 0 && f.function)
			named++;
		if (f.line)
			with_line++;
	}
	/* Again, from the symbolizer's caches: the same answers. */
	for (uint64_t i = 0; i < 10000; i++)
		if (cp_symbolize(s, lo + i * ((hi - lo) / 10000), &f) == 0 && f.function)
			named_again++;
	cp_symbolizer_close(s);
	fixture_kill(pid);
	fprintf(stderr, "  10000 libc sites: %zu named, %zu with file:line\n", named, with_line);
	CHECK(named > 9000);
	CHECK_INT(named_again, named);
}

/* Creates the file dir/rel (and its directories); 0 on success. */
static int touch_under(const char *dir, const char *rel)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s/%s')\" && : > '%s/%s'", dir, rel, dir,
		 rel);
	return system(cmd);
}

/* Each place libdwfl's debuginfo_path names is looked in, and nothing else
 * passes: by debuglink beside the file, in .debug/, under an absolute
 * element at every tail of the file's directory, and by build-id. */
TEST(local_debuginfo_is_looked_for_where_libdwfl_looks)
{
	char root[] = "/tmp/cp-debuginfo-XXXXXX", path[512], file[512], cmd[600];
	const char *id = "ab0123456789";

	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), ":.debug:%s/debug", root);
	snprintf(file, sizeof(file), "%s/usr/lib/libx.so.1", root);
	CHECK(touch_under(root, "usr/lib/libx.so.1") == 0);
	CHECK(!cp_local_debuginfo_may_exist(path, file, "libx.debug", id));
	CHECK(!cp_local_debuginfo_may_exist(path, NULL, NULL, NULL));

	CHECK(touch_under(root, "usr/lib/libx.debug") == 0); /* beside it */
	CHECK(cp_local_debuginfo_may_exist(path, file, "libx.debug", NULL));
	CHECK(!cp_local_debuginfo_may_exist(path, file, "other.debug", NULL));
	CHECK(touch_under(root, "usr/lib/.debug/libx.so.1.debug") == 0); /* .debug/, no link */
	CHECK(cp_local_debuginfo_may_exist(path, file, NULL, NULL));
	/* under the absolute element, at a tail of the file's directory */
	CHECK(touch_under(root, "debug/lib/tail.debug") == 0);
	CHECK(cp_local_debuginfo_may_exist(path, file, "tail.debug", NULL));
	CHECK(touch_under(root, "debug/top.debug") == 0);
	CHECK(cp_local_debuginfo_may_exist(path, file, "top.debug", NULL));
	/* by build-id, under absolute elements only */
	CHECK(!cp_local_debuginfo_may_exist(path, file, "none.debug", id));
	CHECK(touch_under(root, "debug/.build-id/ab/0123456789.debug") == 0);
	CHECK(cp_local_debuginfo_may_exist(path, file, "none.debug", id));
	CHECK(cp_local_debuginfo_may_exist(path, NULL, NULL, id));
	CHECK(!cp_local_debuginfo_may_exist(":.debug", NULL, NULL, id));

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

/* This process's resident memory, bytes. */
static long resident_bytes(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* Naming a stack whose leaf (a probe site) and callers are in the C
 * library reads its symbol tables, not its DWARF: with libc6-dbg, libdw
 * would inflate all of libc's compressed .debug_info (some 10 MB) for it. */
TEST(stacks_name_c_library_frames_without_its_dwarf)
{
	struct cp_stack_count raw = { 0 }, ours = { 0 };
	struct cp_named_stacks named = { 0 };
	struct cp_symbolizer *s;
	void *libc_handle;
	long before, grew;
	char hex[128];
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";

	cp_build_id_of_path(libc, hex, sizeof(hex));
	if (!hex[0] || !cp_local_debuginfo_may_exist(":.debug:/usr/lib/debug", libc, NULL, hex)) {
		unit_skip("no debug file for libc here (libc6-dbg not installed)");
		return;
	}
	s = cp_symbolizer_open(getpid(), NULL);
	CHECK(s != NULL);
	if (!s)
		return;
	/* libc's own functions, not a sanitizer's interceptors of them */
	libc_handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	CHECK(libc_handle != NULL);
	if (!libc_handle) {
		cp_symbolizer_close(s);
		return;
	}
	raw.key.pc[0] = (uint64_t)(uintptr_t)dlsym(libc_handle,
						   "clock_gettime");	      /* the probe site */
	raw.key.pc[1] = (uint64_t)(uintptr_t)dlsym(libc_handle, "qsort") + 1; /* a return address */
	dlclose(libc_handle);
	raw.key.pc[2] = (uint64_t)(uintptr_t)resident_bytes + 9; /* ours */
	/* this program's own frame named first, apart: run alone, the test
	 * would otherwise count the reading of this program's DWARF too */
	ours.key.pc[0] = raw.key.pc[2];
	ours.count = 1;
	CHECK_INT(cp_named_stacks_build(s, &ours, 1, &named), 0);
	cp_named_stacks_free(&named);
	memset(&named, 0, sizeof(named));
	raw.count = 3;
	before = resident_bytes();
	CHECK_INT(cp_named_stacks_build(s, &raw, 1, &named), 0);
	grew = resident_bytes() - before;
	CHECK_INT((int)named.n, 1);
	if (named.n == 1 && named.stacks[0].n_frames == 3) {
		CHECK_STR(named.stacks[0].frames[0], "resident_bytes");
		CHECK_STR(named.stacks[0].frames[1], "qsort");
		CHECK_STR(named.stacks[0].frames[2], "clock_gettime");
	}
	cp_named_stacks_free(&named);
	cp_symbolizer_close(s);
	if (grew >= 4 << 20)
		fprintf(stderr, "  naming grew this process by %ld KiB\n", grew >> 10);
#ifndef __SANITIZE_ADDRESS__
	/* (AddressSanitizer's shadow memory and quarantine grow a process by
	 * more than what it allocates: the bound holds for plain builds.) */
	CHECK(grew < 4 << 20);
#endif
}
