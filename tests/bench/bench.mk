# C benchmarks, included by the top-level Makefile (`include tests/bench/bench.mk`).
# They print figures and ratios to a goal; they are not tests and never fail
# on time.

.PHONY: bench-compare bench-symbolize bench-big

# `clockprof compare` on 1,000 measures x 30 runs per side; goal: within
# 1.5x the time jansson alone takes to parse the same files.
$(O)/bench-compare: tests/bench/bench_compare.c tests/bench/bench_util.h $(O)/libclockprof.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(O)/libclockprof.a $(LDLIBS)

bench-compare: $(O)/bench-compare clockprof
	$(O)/bench-compare ./clockprof

# The bare-uprobe baseline for tests/bench/run.py.
$(O)/bench-bare-uprobe: tests/bench/bare_uprobe.c $(O)/libclockprof.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(O)/libclockprof.a $(LDLIBS)

# Symbolizing 10,000 libc addresses in a running target; goal 1 s (the
# figure the unit test symbolize_10000_sites no longer asserts).
$(O)/bench-symbolize: tests/bench/bench_symbolize.c tests/bench/bench_util.h tests/unit/callsites_fixture.h $(O)/libclockprof.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(O)/libclockprof.a $(LDLIBS)

bench-symbolize: $(O)/bench-symbolize test-targets
	$(O)/bench-symbolize $(O)/tests/targets

# The cost of an atomic add on a counter shared by the CPUs against a
# per-CPU one: the figure quoted in probes/clockreads.bpf.c.
$(O)/bench-shared-counter: tests/bench/shared_counter.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -pthread -o $@ $<

# The target of tests/bench/attach_cost.py's commit figures: threads that
# read the clock, and a fork at each SIGUSR1.
$(O)/bench-commit-target: tests/bench/commit_target.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -pthread -o $@ $<

# A command's wall time and peak RSS, forked from a small program
# (tests/bench/attach_cost.py).
$(O)/bench-peak-rss: tests/bench/peak_rss.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

# The gate's error rates and power by seeded Monte Carlo through the
# library (tests/bench/bench_gate_stats.c); goals printed beside them.
# The realistic run is the unit tests' model (tests/unit/realistic_run.c).
GATE_STATS_SRCS := tests/bench/bench_gate_stats.c tests/unit/realistic_run.c tests/unit/verdict_fixture.c
$(O)/bench-gate-stats: $(GATE_STATS_SRCS) tests/bench/bench_util.h tests/unit/realistic_run.h $(O)/libclockprof.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(WARN) -o $@ $(GATE_STATS_SRCS) $(O)/libclockprof.a $(LDLIBS)

# compare and report on huge run files: peak RSS and time per size, and
# the measure limit's refusal (issue 12). Minutes; not part of `make bench`.
bench-big: clockprof
	sh tests/bench/big_run.sh ./clockprof

# The vDSO patch driven alone, for tests/integration/test_vdso_patch.py.
$(O)/tests/vdso-patch-tool: tests/patch/vdso_patch_tool.c $(O)/libclockprof.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(O)/libclockprof.a $(LDLIBS)
test-targets: $(O)/tests/vdso-patch-tool

# Another tool's uprobe, for tests/integration/test_redirects.py.
$(O)/tests/uprobe-holder: tests/patch/uprobe_holder.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LDLIBS)
test-targets: $(O)/tests/uprobe-holder
