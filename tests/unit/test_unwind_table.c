/* test_unwind_table.c - lib/symbols/unwind_table: the walk on a synthetic stack,
 * the rules found for glibc and libstdc++ wrappers, and the walk the BPF
 * program will do, simulated in user space on real clock reads: the test
 * traces a fixture it starts (ptrace of its own child, no privileges),
 * stops it with int3 on each vDSO clock entry, walks out with the table
 * exactly as the BPF program must, symbolizes the call site and checks the
 * counts per function that the fixture makes by construction. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "error.h"
#include "symbolize.h"
#include "unit.h"
#include "unwind_table.h"

#include "callsites_fixture.h"

/* ---- the walk on a synthetic stack ---------------------------------------- */

struct fake_mem {
	uint64_t base;
	uint64_t words[64];
};

static int fake_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct fake_mem *m = ctx;

	if (addr < m->base || addr >= m->base + sizeof(m->words) || addr % 8)
		return -1;
	*val = m->words[(addr - m->base) / 8];
	return 0;
}

TEST(unwind_walk_sp_and_bp_rules)
{
	/* pc 0x1000: sp-based wrapper, CFA = sp + 16;
	 * pc 0x2000: bp-based wrapper (push rbp; mov rsp,rbp): CFA = rbp + 16,
	 * caller's rbp saved at CFA - 16. Call site: 0x3000. */
	struct cp_unwind_entry e[2] = {
		{ 0x1000, { 16, 0, 0, CP_UNWIND_SP, 0 } },
		{ 0x2000, { 16, -16, 1, CP_UNWIND_BP, 0 } },
	};
	char *via[2] = { "inner", "outer" };
	struct cp_unwind_table t = { .entries = e, .n = 2, .via = via, .n_via = 2 };
	struct fake_mem m = { .base = 0x7000 };
	uint64_t sp_entry = 0x7000; /* sp at the vDSO entry */
	uint64_t frame_bp = 0x7000 + 8 * 6;
	int v, hops;

	m.words[0] = 0x1000; /* ra0: in the sp-based wrapper */
	/* inner: sp = 0x7008, CFA = 0x7018, ra at 0x7010 */
	m.words[2] = 0x2000;
	/* outer: rbp = frame_bp, CFA = frame_bp + 16: saved rbp at frame_bp,
	 * ra at frame_bp + 8 */
	m.words[6] = 0xdead0;
	m.words[7] = 0x3000;
	CHECK_INT(cp_unwind_walk(&t, m.words[0], sp_entry + 8, frame_bp, fake_read, &m, &v, &hops),
		  0x3000);
	CHECK_INT(v, 1);
	CHECK_INT(hops, 2);
	/* a pc outside the table is its own call site */
	CHECK_INT(cp_unwind_walk(&t, 0x4242, 0, 0, fake_read, &m, &v, &hops), 0x4242);
	CHECK_INT(v, -1);
	CHECK_INT(hops, 0);
	CHECK(cp_unwind_table_lookup(&t, 0x1000) == &e[0].rule);
	CHECK(cp_unwind_table_lookup(&t, 0x1001) == NULL);
	CHECK_INT(sizeof(struct cp_unwind_rule), 12);
	CHECK_INT(sizeof(struct cp_unwind_entry), 24);
}

/* The stack cp_unwind_stack walked: want[] leaf first, ending in 0. */
static void check_stack(const struct cp_stack_key *key, const uint64_t *want)
{
	int n = 0;

	do
		CHECK_INT(key->pc[n], want[n]);
	while (want[n++]);
}

/* --stacks' walk of a stack copy: a rule where there is one, the
 * frame-pointer chain where not, ending where the chain stops climbing or
 * leaves the copy (what the BPF program's record_stack does). */
TEST(unwind_stack_rules_then_frame_pointers)
{
	/* 0x1000: CFA = sp + 16 (a function without a frame pointer); 0x2000
	 * and 0x3000 have no rule: their frames are found by rbp. */
	struct cp_unwind_entry e[1] = { { 0x1000, { 16, 0, CP_VIA_NONE, CP_UNWIND_SP, 0 } } };
	struct cp_unwind_table t = { .entries = e, .n = 1 };
	struct fake_mem m = { .base = 0x7000 };
	struct cp_stack_key key;

	m.words[0] = 0x1000; /* return address at the read's sp */
	m.words[2] = 0x2000; /* CFA 0x7018: ra at 0x7010 */
	m.words[6] = 0x7040; /* rbp = 0x7030: saved rbp, then ra */
	m.words[7] = 0x3000;
	m.words[8] = 0x7020; /* a chain that goes down: the end */
	m.words[9] = 0x4000;
	cp_unwind_stack(&t, 0x9999, CP_SITE_STACK_TOP, 0x7000, 0x7030, fake_read, &m, &key);
	check_stack(&key, (const uint64_t[]){ 0x9999, 0x1000, 0x2000, 0x3000, 0 });
	/* A frame-pointer site's return address is found from rbp alone. */
	cp_unwind_stack(&t, 0x9999, CP_SITE_FRAME, 0xdead, 0x7030, fake_read, &m, &key);
	check_stack(&key, (const uint64_t[]){ 0x9999, 0x3000, 0 });
	/* A chain that leaves the copy ends there; nothing readable: the leaf. */
	m.words[8] = 0x9000;
	cp_unwind_stack(&t, 0x9999, CP_SITE_FRAME, 0, 0x7030, fake_read, &m, &key);
	check_stack(&key, (const uint64_t[]){ 0x9999, 0x3000, 0x4000, 0 });
	cp_unwind_stack(&t, 0x9999, CP_SITE_STACK_TOP, 0x100, 0, fake_read, &m, &key);
	check_stack(&key, (const uint64_t[]){ 0x9999, 0 });
}

/* ---- rules for real wrappers ---------------------------------------------- */

static int find_via(const struct cp_unwind_table *t, const char *name)
{
	for (size_t i = 0; i < t->n_via; i++)
		if (strcmp(t->via[i], name) == 0)
			return (int)i;
	return -1;
}

/* Each rule inside glibc's clock_gettime must match the CFI of libc.so.6 read
 * on its own (file CFI, file-relative address = pc - load bias). */
TEST(unwind_table_libc_clock_gettime_matches_cfi)
{
	pid_t pid = fixture_spawn("callsites_target");
	struct cp_unwind_table t;
	struct cp_error err = { 0 };
	char libc[PATH_MAX] = "", line[PATH_MAX + 128], maps[64];
	uint64_t libc_start = 0, first_load = UINT64_MAX;
	size_t in_range = 0, agree = 0;
	int via, via_ts, fd;
	FILE *f;
	Elf *elf;
	Dwarf_CFI *cfi;
	size_t nph;

	if (pid < 0) {
		unit_skip("fixture callsites_target not built");
		return;
	}
	CHECK(cp_unwind_table_build(pid, &t, &err) == 0);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long s, off;
		char name[PATH_MAX];

		if (sscanf(line, "%llx-%*x %*s %llx %*s %*u %s", &s, &off, name) == 3 && off == 0 &&
		    strstr(name, "/libc.so.6")) {
			libc_start = s;
			snprintf(libc, sizeof(libc), "%s", name);
			break;
		}
	}
	if (f)
		fclose(f);
	fixture_kill(pid);
	via = find_via(&t, "clock_gettime");
	via_ts = find_via(&t, "timespec_get");
	CHECK(via >= 0);
	CHECK(via_ts >= 0);
	CHECK(libc[0]);
	fd = open(libc, O_RDONLY);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(elf_getphdrnum(elf, &nph) == 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_vaddr & ~4095ull) < first_load)
			first_load = ph.p_vaddr & ~4095ull;
	}
	cfi = dwarf_getcfi_elf(elf);
	CHECK(cfi);
	for (size_t i = 0; i < t.n; i++) {
		const struct cp_unwind_entry *e = &t.entries[i];
		const struct cp_plumbing_range *r = cp_unwind_table_range(&t, e->pc - 1);
		Dwarf_Frame *fr;
		Dwarf_Op *ops;
		size_t nops;

		if (!r || r->via != via || e->rule.via != via)
			continue;
		in_range++;
		if (dwarf_cfi_addrframe(cfi, e->pc - 1 - (libc_start - first_load), &fr) != 0)
			continue;
		if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1 &&
		    ops[0].atom == DW_OP_bregx && ops[0].number == 7 &&
		    e->rule.base_reg == CP_UNWIND_SP &&
		    (int64_t)ops[0].number2 == e->rule.cfa_offset && e->rule.cfa_offset >= 8 &&
		    e->rule.cfa_offset % 8 == 0)
			agree++;
		free(fr);
	}
	dwarf_cfi_end(cfi);
	elf_end(elf);
	close(fd);
	fprintf(stderr, "  %zu rules, %zu via names, %zu in clock_gettime, %zu unsupported\n", t.n,
		t.n_via, in_range, t.n_unsupported);
	cp_unwind_table_free(&t);
	CHECK(in_range >= 1);
	CHECK_INT(agree, in_range);
}

/* The pages of each module's file that the table's scan read (every
 * symbol, the wrappers' code and CFI) are given back as it goes, rather
 * than held in clockprof's RSS for the whole run (issue 43): none of
 * libc's image is held once the table is built, and libc's call sites are
 * still named, from its file read again. */
TEST(unwind_table_gives_back_the_pages_it_read)
{
	pid_t pid = fixture_spawn("callsites_target");
	struct cp_symbolizer *s = pid > 0 ? cp_symbolizer_open(pid, NULL) : NULL;
	struct cp_unwind_table t = { 0 };
	struct cp_frame_info f = { 0 };
	long held = -2;
	int via, rc = -1;

	if (pid < 0) {
		unit_skip("fixture callsites_target not built");
		return;
	}
	if (s && cp_unwind_table_build_from(s, &t, NULL) == 0) {
		held = fixture_libc_pages_held(s);
		via = find_via(&t, "clock_gettime");
		for (size_t i = 0; via >= 0 && i < t.n_ranges; i++)
			if (t.ranges[i].via == via)
				rc = cp_symbolize(s, t.ranges[i].start, &f);
	}
	fixture_kill(pid);
	CHECK(s != NULL);
	CHECK_INT(held, 0);
	CHECK_INT(rc, 0);
	CHECK_STR(f.function, "clock_gettime");
	cp_unwind_table_free(&t);
	cp_symbolizer_close(s);
}

TEST(unwind_table_finds_libstdcxx_chrono)
{
	pid_t pid = fixture_spawn("callsites_cpp_target");
	struct cp_unwind_table t;
	int steady, system;
	size_t n = 0;

	if (pid < 0) {
		unit_skip("fixture callsites_cpp_target not built");
		return;
	}
	CHECK(cp_unwind_table_build(pid, &t, NULL) == 0);
	fixture_kill(pid);
	steady = find_via(&t, "std::chrono::steady_clock::now");
	system = find_via(&t, "std::chrono::system_clock::now");
	for (size_t i = 0; i < t.n; i++)
		if (t.entries[i].rule.via == steady)
			n++;
	cp_unwind_table_free(&t);
	CHECK(steady >= 0);
	CHECK(system >= 0);
	CHECK(n >= 1);
}

/* ---- the BPF walk, simulated with ptrace ----------------------------------- */

#define MAX_SITES 64

struct site {
	uint64_t ra;
	int via;
	uint64_t count;
};

struct trace {
	pid_t pid;
	uint64_t bp[3]; /* vDSO entries */
	long orig[3];
	struct site sites[MAX_SITES];
	size_t n_sites;
	uint64_t total;
};

static int peek_u64(void *ctx, uint64_t addr, uint64_t *val)
{
	pid_t pid = *(pid_t *)ctx;
	long v;

	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
	if (errno)
		return -1;
	*val = (uint64_t)v;
	return 0;
}

static void count_site(struct trace *tr, uint64_t ra, int via)
{
	tr->total++;
	for (size_t i = 0; i < tr->n_sites; i++)
		if (tr->sites[i].ra == ra && tr->sites[i].via == via) {
			tr->sites[i].count++;
			return;
		}
	if (tr->n_sites < MAX_SITES)
		tr->sites[tr->n_sites++] = (struct site){ ra, via, 1 };
}

static int set_breakpoints(struct trace *tr, bool on)
{
	for (int i = 0; i < 3; i++) {
		long word = on ? (tr->orig[i] & ~0xffL) | 0xcc : tr->orig[i];

		if (ptrace(PTRACE_POKETEXT, tr->pid, (void *)tr->bp[i], (void *)word) != 0)
			return -1;
	}
	return 0;
}

/* Runs fixture `name` for `requests` requests under ptrace; fills tr with the
 * call sites found by cp_unwind_walk. The table and symbolizer are built at
 * the first hit (libraries are loaded by then). */
static int trace_fixture(const char *name, int requests, struct trace *tr,
			 struct cp_unwind_table *t, struct cp_symbolizer **sym)
{
	static const char *entries[3] = { "__vdso_clock_gettime", "__vdso_gettimeofday",
					  "__vdso_time" };
	char path[PATH_MAX], reqs[16];
	int status;

	memset(tr, 0, sizeof(*tr));
	memset(t, 0, sizeof(*t));
	*sym = NULL;
	fixture_path(name, path, sizeof(path));
	if (access(path, X_OK) != 0)
		return -1;
	snprintf(reqs, sizeof(reqs), "%d", requests);
	tr->pid = fork();
	if (tr->pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(path, path, reqs, "0", (char *)NULL);
		_exit(127);
	}
	if (waitpid(tr->pid, &status, 0) != tr->pid || !WIFSTOPPED(status))
		return -2;
	ptrace(PTRACE_SETOPTIONS, tr->pid, NULL, (void *)PTRACE_O_EXITKILL);
	for (int i = 0; i < 3; i++) {
		if (fixture_vdso_symbol(tr->pid, entries[i], &tr->bp[i]) != 0)
			return -3;
		errno = 0;
		tr->orig[i] = ptrace(PTRACE_PEEKTEXT, tr->pid, (void *)tr->bp[i], NULL);
		if (errno)
			return -3;
	}
	if (set_breakpoints(tr, true) != 0)
		return -4;
	for (;;) {
		struct user_regs_struct regs;
		int sig = 0, hit = -1;

		if (ptrace(PTRACE_CONT, tr->pid, NULL, NULL) != 0 ||
		    waitpid(tr->pid, &status, 0) != tr->pid)
			return -5;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;

			tr->pid = 0; /* reaped: never signal that pid again */
			return ok ? 0 : -6;
		}
		if (WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status);
			(void)sig; /* the fixture gets none in practice */
			continue;
		}
		ptrace(PTRACE_GETREGS, tr->pid, NULL, &regs);
		for (int i = 0; i < 3; i++)
			if (regs.rip - 1 == tr->bp[i])
				hit = i;
		if (hit < 0)
			return -7;
		if (!*sym) {
			*sym = cp_symbolizer_open(tr->pid, NULL);
			if (!*sym || cp_unwind_table_build_from(*sym, t, NULL) != 0)
				return -8;
		}
		/* the BPF program's view at the vDSO entry: */
		{
			uint64_t ra0, site;
			int via, hops;

			if (peek_u64(&tr->pid, regs.rsp, &ra0) != 0)
				return -9;
			site = cp_unwind_walk(t, ra0, regs.rsp + 8, regs.rbp, peek_u64, &tr->pid,
					      &via, &hops);
			count_site(tr, site, via < 0 ? -1 - hit : via);
		}
		/* step over the breakpoint */
		regs.rip--;
		if (set_breakpoints(tr, false) != 0 ||
		    ptrace(PTRACE_SETREGS, tr->pid, NULL, &regs) != 0 ||
		    ptrace(PTRACE_SINGLESTEP, tr->pid, NULL, NULL) != 0 ||
		    waitpid(tr->pid, &status, 0) != tr->pid || !WIFSTOPPED(status) ||
		    set_breakpoints(tr, true) != 0)
			return -10;
	}
}

/* Reads per function, and the via names they were seen with. */
struct fn_count {
	char function[1024];
	char via[64];
	int inlined;
	uint64_t count;
};

static size_t by_function(struct trace *tr, struct cp_unwind_table *t, struct cp_symbolizer *s,
			  struct fn_count *out, size_t max)
{
	static const char *vdso_names[3] = { "__vdso_clock_gettime", "__vdso_gettimeofday",
					     "__vdso_time" };
	size_t n = 0;

	for (size_t i = 0; i < tr->n_sites; i++) {
		struct cp_frame_info f;
		const char *via = tr->sites[i].via >= 0 ? t->via[tr->sites[i].via] :
							  vdso_names[-1 - tr->sites[i].via];
		size_t k;

		cp_symbolize(s, tr->sites[i].ra - 1, &f);
		for (k = 0; k < n; k++)
			if (strcmp(out[k].function, f.function ? f.function : "?") == 0 &&
			    strcmp(out[k].via, via) == 0)
				break;
		if (k == n) {
			if (n == max)
				continue;
			snprintf(out[n].function, sizeof(out[n].function), "%s",
				 f.function ? f.function : "?");
			snprintf(out[n].via, sizeof(out[n].via), "%s", via);
			out[n].count = 0;
			out[n].inlined = 0;
			n++;
		}
		out[k].count += tr->sites[i].count;
		if (f.n_inlined == 1 && f.inlined[0].function &&
		    strcmp(f.inlined[0].function, "now_ns") == 0)
			out[k].inlined += 1;
	}
	return n;
}

static uint64_t count_of(struct fn_count *c, size_t n, const char *function, const char *via)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].function, function) == 0 && strcmp(c[i].via, via) == 0)
			return c[i].count;
	return 0;
}

static void dump(struct fn_count *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "    %-60s via %-32s %lu\n", c[i].function, c[i].via,
			(unsigned long)c[i].count);
}

static void check_c_fixture(const char *name)
{
	enum { N = 25 };
	struct trace tr;
	struct cp_unwind_table t;
	struct cp_symbolizer *s;
	struct fn_count c[32];
	size_t n = 0;
	int rc = trace_fixture(name, N, &tr, &t, &s);
	int inlined_sites = 0;

	if (rc == -1) {
		unit_skip("fixture not built");
		return;
	}
	if (rc == 0 && s) {
		n = by_function(&tr, &t, s, c, 32);
		for (size_t i = 0; i < n; i++)
			if (strcmp(c[i].function, "handle_request") == 0)
				inlined_sites += c[i].inlined;
	}
	if (rc != 0 || tr.total != 7 * N)
		dump(c, n);
	cp_unwind_table_free(&t);
	cp_symbolizer_close(s);
	fixture_kill(tr.pid);
	CHECK_INT(rc, 0);
	CHECK_INT(tr.total, 7 * N);
	CHECK_INT(count_of(c, n, "handle_request", "__vdso_clock_gettime") +
			  count_of(c, n, "handle_request", "clock_gettime"),
		  2 * N);
	CHECK_INT(inlined_sites, 2); /* two sites, both naming now_ns */
	CHECK_INT(count_of(c, n, "read_mono", "clock_gettime"), N);
	CHECK_INT(count_of(c, n, "read_wall_twice", "__vdso_gettimeofday"), 2 * N);
	CHECK_INT(count_of(c, n, "read_time", "__vdso_time"), N);
	CHECK_INT(count_of(c, n, "read_timespec", "timespec_get"), N);
}

TEST(unwind_walk_exact_counts_c)
{
	check_c_fixture("callsites_target");
}

TEST(unwind_walk_exact_counts_without_frame_pointers)
{
	check_c_fixture("callsites_target_nofp");
}

TEST(unwind_walk_exact_counts_cpp_chrono)
{
	enum { N = 20 };
	struct trace tr;
	struct cp_unwind_table t;
	struct cp_symbolizer *s;
	struct fn_count c[32];
	size_t n = 0;
	int rc = trace_fixture("callsites_cpp_target", N, &tr, &t, &s);
	const char *tint =
		"app::Timer<int>::elapsed(std::vector<int, std::allocator<int> > const&)";
	const char *tstr =
		"app::Timer<std::__cxx11::basic_string<char, std::char_traits<char>, "
		"std::allocator<char> > >::elapsed(std::vector<std::__cxx11::"
		"basic_string<char, std::char_traits<char>, std::allocator<char> >, "
		"std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, "
		"std::allocator<char> > > > const&)";

	if (rc == -1) {
		unit_skip("fixture not built");
		return;
	}
	if (rc == 0 && s)
		n = by_function(&tr, &t, s, c, 32);
	if (rc != 0 || tr.total != 3 * N ||
	    count_of(c, n, tstr, "std::chrono::steady_clock::now") != N)
		dump(c, n);
	cp_unwind_table_free(&t);
	cp_symbolizer_close(s);
	fixture_kill(tr.pid);
	CHECK_INT(rc, 0);
	CHECK_INT(tr.total, 3 * N);
	CHECK_INT(count_of(c, n, tint, "std::chrono::steady_clock::now"), N);
	CHECK_INT(count_of(c, n, tstr, "std::chrono::steady_clock::now"), N);
	CHECK_INT(count_of(c, n, "app::wall_seconds()", "std::chrono::system_clock::now"), N);
}

TEST(unwind_walk_exact_counts_own_library)
{
	enum { N = 20 };
	struct trace tr;
	struct cp_unwind_table t;
	struct cp_symbolizer *s;
	struct fn_count c[32];
	size_t n = 0;
	int rc = trace_fixture("callsites_lib_target", N, &tr, &t, &s);

	if (rc == -1) {
		unit_skip("fixture not built");
		return;
	}
	if (rc == 0 && s)
		n = by_function(&tr, &t, s, c, 32);
	if (rc != 0 || tr.total != 2 * N)
		dump(c, n);
	cp_unwind_table_free(&t);
	cp_symbolizer_close(s);
	fixture_kill(tr.pid);
	CHECK_INT(rc, 0);
	CHECK_INT(tr.total, 2 * N);
	CHECK_INT(count_of(c, n, "lib_read_clock", "clock_gettime"), 2 * N);
}
