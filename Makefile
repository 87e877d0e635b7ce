# clockprof - build, test, demo, install.
#
#   make            build ./clockprof (installs missing Debian packages first)
#   make demo       profile the bundled demo target and print the summary
#   make check      unit + integration (root, BPF) + browser tests
#   make check-unit unit tests only (no privileges)
#   make check-sanitize  unit tests under AddressSanitizer + UBSan
#   make fuzz FUZZ_S=N   libFuzzer harnesses, N seconds each (tests/fuzz/)
#   make bench      benchmarks (ratios measured side by side; not tests)
#   make install PREFIX=/usr/local DESTDIR=   (binary, man page, bash completion)
#   make uninstall PREFIX=/usr/local DESTDIR=
#   make deb        clockprof_VERSION_amd64.deb (binary, man page, completion, docs)
#   make check-deb  install the .deb with apt-get, run it and the demo, purge it
#   make format     clang-format the C of cmd/, lib/, probes/, tests/unit/ in place

PREFIX  ?= /usr/local
DESTDIR ?=
O       ?= build

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
ARCH    := x86

CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror
# lib/ is one small library per pipeline stage, bottom to top, each with
# its public headers in lib/STAGE/include/ and its internal ones beside its
# sources (libperf's split). A stage's sources see their own headers and
# the public headers of the stages it may use (LAYER_*), so an include that
# reaches the wrong way, or into another stage's insides, fails to
# compile: the gate and the report never see the probe. cmd/ sees every
# stage's public headers; tests and benchmarks see everything.
# docs/ARCHITECTURE.md explains the stages.
STAGES        := util procfs symbols probe runfile gate report
LAYER_util    := util
LAYER_procfs  := procfs util
LAYER_symbols := symbols procfs util
LAYER_probe   := probe symbols procfs util
LAYER_runfile := runfile probe symbols procfs util
LAYER_gate    := gate runfile util
LAYER_report  := report gate runfile util
stage_of       = $(word 2,$(subst /, ,$(1)))
# A stage may be split into rooms, sub-folders in the same order, bottom to
# top: a room's sources see its own headers and those of the rooms it may
# use (ROOM_stage_room, itself first), its public ones in ROOM/include/.
# The probe's rooms (docs/ARCHITECTURE.md, "The probe's rooms"): the
# window's orchestration on top calls the mechanisms through one interface
# (mech/mechanism.h) and never sees a mechanism's own room.
ROOMS_probe   := base target counters links points session naming mech \
	mech/uprobe mech/breakpoint mech/patch window
ROOM_probe_base            := base
ROOM_probe_target          := target base
ROOM_probe_counters        := counters target base
ROOM_probe_links           := links target base
ROOM_probe_points          := points base
ROOM_probe_session         := session links points target base
ROOM_probe_naming          := naming session target base
ROOM_probe_mech            := mech session points target base
ROOM_probe_mech/uprobe     := mech/uprobe mech session points target base
ROOM_probe_mech/breakpoint := mech/breakpoint mech session points target base
ROOM_probe_mech/patch      := mech/patch mech session points target base
ROOM_probe_window          := window mech naming session counters points links target base
# The room of a file: its folder below lib/STAGE/ ("mech/uprobe").
room_of        = $(patsubst lib/$(call stage_of,$(1))/%/,%,$(dir $(1)))
# A stage's public headers: lib/STAGE/include/, or each room's include/.
public_inc     = $(if $(ROOMS_$(1)),$(patsubst %,-I%,$(wildcard $(ROOMS_$(1):%=lib/$(1)/%/include))),-Ilib/$(1)/include)
# A stage's own headers as one of its files sees them: all of them, or
# those of the rooms its room may use.
own_inc        = $(if $(ROOMS_$(1)),$(foreach r,$(ROOM_$(1)_$(2)),-Ilib/$(1)/$(r) -Ilib/$(1)/$(r)/include),-Ilib/$(1) -Ilib/$(1)/include)
# The BPF side's shared header (probes/) and generated headers ($(O)) are
# for the stages that talk to the BPF program or read its layouts.
BPF_STAGES    := symbols probe runfile
# A stage's generated headers (GEN_INC_stage) are its own.
GEN_INC_report := -I$(O)/gen/report
GEN_INC_runfile := -I$(O)/gen/runfile
layer_flags    = -D_GNU_SOURCE $(call own_inc,$(call stage_of,$(1)),$(call room_of,$(1))) \
	$(foreach s,$(filter-out $(call stage_of,$(1)),$(LAYER_$(call stage_of,$(1)))),$(call public_inc,$(s))) \
	$(if $(filter $(call stage_of,$(1)),$(BPF_STAGES)),-Iprobes -I$(O)) \
	$(GEN_INC_$(call stage_of,$(1)))
PUBLIC_INC := $(foreach s,$(STAGES),$(call public_inc,$(s)))
# Tests and benchmarks see every stage's and every room's headers.
ALL_INC    := $(foreach s,$(STAGES),$(if $(ROOMS_$(s)),$(patsubst %,-Ilib/$(s)/%,$(ROOMS_$(s))),-Ilib/$(s)))
CMD_CPPFLAGS := -D_GNU_SOURCE $(PUBLIC_INC) -Iprobes -I$(O)
CPPFLAGS += -D_GNU_SOURCE $(ALL_INC) $(PUBLIC_INC) -Iprobes -I$(O) $(GEN_INC_runfile)
DEPFLAGS := -MMD -MP
# Debian's shared libraries, so that a libbpf or elfutils security fix
# reaches clockprof with the library's own update (the .deb's Depends comes
# from dpkg-shlibdeps). libiberty ships only as a static library. The price
# is ~1.3 ms of every start spent by the dynamic loader before main
# (`perf stat -r 200 ./clockprof --version`: 4.8 -> 6.1 ms here, /bin/true
# 3.0); `make STATIC=1` links the libraries in instead (Zydis, which ships
# no static library, libc and libm apart) for who wants that back.
LIBS    := -lbpf -ldw -lelf -ljansson -lgcrypt -lprotobuf-c -lz -lZydis -lm
STATIC_LIBS := -lbpf -ldw -lelf -ljansson -liberty -lgcrypt -lgpg-error -lprotobuf-c -lz -llzma -lbz2
ifeq ($(STATIC),1)
LDLIBS  := -Wl,-Bstatic $(STATIC_LIBS) -Wl,-Bdynamic -lZydis -lm
else
LDLIBS  := $(LIBS) -Wl,-Bstatic -liberty -Wl,-Bdynamic
endif

# Debian packages the build, the tests and the demo need; `make deps`
# installs the missing ones (we run as root on Debian 12).
BUILD_PKGS := gcc g++ make clang llvm libbpf-dev bpftool libelf-dev libdw-dev \
	libjansson-dev libiberty-dev libzydis-dev libgcrypt20-dev libgpg-error-dev zlib1g-dev liblzma-dev libbz2-dev \
	pkg-config linux-libc-dev libc6-dev \
	python3 $(PPROF_PKGS) $(SERVE_PKGS)
# --pprof: the C code of pprof's profile.proto is generated at build time
# by protoc-c from the .proto Debian ships with pprof's Go sources, and
# linked with libprotobuf-c (and zlib, already above).
PPROF_PKGS  := protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev
PPROF_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
# --serve: GNU libmicrohttpd answers HTTP in the unprivileged child, which
# alone loads it (dlopen: lib/runfile/metrics_serve.c); the build needs its
# header, the child its library (the .deb Recommends it).
SERVE_PKGS  := libmicrohttpd-dev libmicrohttpd12
# promtool (Debian prometheus) checks the --metrics-file text in
# tests/integration/test_metrics.py; bpftrace places another tool's
# uprobes on a redirected boundary (tests/integration/test_redirects.py);
# gcc-multilib builds the 32-bit program every mechanism must refuse
# (tests/integration/test_mechanism_choice.py).
TEST_PKGS  := cppcheck clang-format prometheus python3 python3-yaml musl-tools chromium linux-perf man-db groff-base libclang-rt-dev universal-ctags lintian bpftrace gcc-multilib
# Real servers and runtimes of tests/integration/test_servers.py and their
# load generators (ab, redis-benchmark); Node and Go come with test-deps below.
SERVER_PKGS := redis-server redis-tools nginx-light apache2-utils openjdk-17-jdk-headless

LIB_SRCS  := $(sort $(wildcard lib/*/*.c lib/*/*/*.c lib/*/*/*/*.c))
LIB_ASMS  := $(sort $(wildcard lib/*/*.S lib/*/*/*.S lib/*/*/*/*.S))
CMD_SRCS  := $(sort $(wildcard cmd/*.c))
BPF_SRCS  := $(sort $(wildcard probes/*.bpf.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
PPROF_GEN := $(O)/gen/runfile/profile.pb-c
LIB_OBJS  := $(LIB_SRCS:%.c=$(O)/%.o) $(LIB_ASMS:%.S=$(O)/%.o) $(PPROF_GEN).o
CMD_OBJS  := $(CMD_SRCS:%.c=$(O)/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(O)/%.o)
SKELS     := $(BPF_SRCS:probes/%.bpf.c=$(O)/%.skel.h)
REPORT_ASSETS := $(sort $(wildcard reports/*))

.PHONY: FORCE all deps test-deps demo check check-unit check-integration \
	check-browser check-sanitize lint format format-check bench install uninstall clean deb \
	check-deb
.DELETE_ON_ERROR:
# The BPF object is an intermediate of the skeleton: keep it, so that a
# rebuild does not redo it.
.SECONDARY: $(BPF_SRCS:probes/%.bpf.c=$(O)/%.bpf.o)

# The man page and bash completion are printed by clockprof itself from
# the option tables its parser uses (lib/util/include/cli_options.h): they cannot drift.
MAN_PAGE   := $(O)/clockprof.1
COMPLETION := $(O)/clockprof.bash

all: deps clockprof $(MAN_PAGE) $(COMPLETION)

# Every compile waits for this stamp (order-only), so that `make -j` on a
# fresh clone installs the headers before the first file needs them, and a
# build that has it (install, a rebuild) does not look for packages again.
DEPS_STAMP := $(O)/.deps-installed
deps: $(DEPS_STAMP)
$(DEPS_STAMP):
	@$(call install_missing,$(BUILD_PKGS))
	@mkdir -p $(@D) && touch $@

test-deps: deps
	@$(call install_missing,$(TEST_PKGS))
	@$(call install_missing,$(SERVER_PKGS))
	@command -v npm >/dev/null || { $(call install_missing,nodejs npm); }
	@command -v rustc >/dev/null || [ -x "$(HOME)/.cargo/bin/rustc" ] || { $(call install_missing,rustc); }
	@command -v go >/dev/null || { $(call install_missing,golang-go); }
	@$(MAKE) --no-print-directory -C tests/browser deps

# Under a lock: two rules of a parallel make may install at once (apt
# takes one at a time, and the second fails).
define install_missing
exec 9>/tmp/.clockprof-apt.lock && flock 9; \
missing=""; for p in $(1); do \
	dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
	echo "clockprof: installing missing Debian packages:$$missing"; \
	if [ "$$(id -u)" != 0 ]; then echo "clockprof: run as root to install them" >&2; exit 1; fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
fi
endef

# --- BPF side: vmlinux.h from the running kernel's BTF, objects, skeletons.
$(O)/vmlinux.h: | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

# -g for the BTF that CO-RE and the maps need; its DWARF, which libbpf never
# reads, is stripped: the skeleton embeds the object in clockprof, and
# opening it touched the pages of 0.7 MB of DWARF among the rest (issue 43:
# clockprof's peak RSS).
$(O)/%.bpf.o: probes/%.bpf.c probes/*.h $(O)/vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-parameter \
		-I$(O) -Iprobes -c $< -o $@
	$(LLVM_STRIP) -g $@

$(O)/%.skel.h: $(O)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# The kernel types the programs' CO-RE relocations use, cut from this
# kernel's BTF, and what identifies this kernel (lib/probe/session/core_btf.h). A bpftool
# without min_core_btf leaves it empty: libbpf then reads the kernel's BTF.
$(O)/clockreads.min.btf: $(O)/clockreads.bpf.o
	$(BPFTOOL) gen min_core_btf /sys/kernel/btf/vmlinux $@ $< 2>/dev/null || : > $@
$(O)/core_btf_kernel.h: $(O)/vmlinux.h
	printf '#define CP_CORE_BTF_RELEASE "%s"\n#define CP_CORE_BTF_VERSION "%s"\n#define CP_CORE_BTF_SIZE %s\n' \
		"$$(uname -r)" "$$(uname -v | sed 's/[\\"]/\\&/g')" "$$(stat -c %s /sys/kernel/btf/vmlinux)" > $@
$(O)/lib/probe/session/core_btf_data.o: lib/probe/session/core_btf_data.S $(O)/clockreads.min.btf
	@mkdir -p $(@D)
	$(CC) -I$(O) -c $< -o $@
$(O)/lib/probe/session/core_btf.o: $(O)/core_btf_kernel.h

# --- user side.
# The kernel's syscall list is looked up when used, not when this file is
# read: on a fresh machine its header comes with the packages ($(DEPS_STAMP)).
UNISTD_H := /usr/include/x86_64-linux-gnu/asm/unistd_64.h /usr/include/asm/unistd_64.h
$(O)/syscall_table.h: | $(DEPS_STAMP)
	@mkdir -p $(@D)
	sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$$/\t{ "\1", \2 },/p' \
		$$(ls $(UNISTD_H) 2>/dev/null | head -n 1) < /dev/null > $@ && [ -s $@ ]

# Generated headers: only the files that include them wait for them.
$(O)/lib/probe/base/syscall_names.o: $(O)/syscall_table.h
$(O)/lib/probe/session/session.o $(O)/lib/probe/session/syscall_look.o: $(SKELS)

# The report's Content-Security-Policy allows its script and style by their
# sha256 hashes: those of the files compiled in, so they are known here.
$(O)/gen/report/report_csp.h: reports/report.js reports/report.css
	@mkdir -p $(@D)
	python3 -c 'import base64, hashlib, sys; [print("#define %s \"\x27sha256-%s\x27\"" % (n, base64.b64encode(hashlib.sha256(open(f, "rb").read()).digest()).decode())) for n, f in zip(sys.argv[1::2], sys.argv[2::2])]' \
		CP_REPORT_CSP_SCRIPT reports/report.js CP_REPORT_CSP_STYLE reports/report.css > $@
$(O)/lib/report/report.o: $(O)/gen/report/report_csp.h

# pprof's profile.proto as C (protobuf-c), under the build directory only:
# lib/runfile/pprof_file.c and the unit test that decodes its output
# include it. A build made before the packages were build dependencies
# installs them here.
$(PPROF_GEN).c $(PPROF_GEN).h &: | $(DEPS_STAMP)
	@$(call install_missing,$(PPROF_PKGS))
	@mkdir -p $(@D)
	protoc-c --proto_path=$(dir $(PPROF_PROTO)) --c_out=$(@D) $(notdir $(PPROF_PROTO))
$(PPROF_GEN).o: $(PPROF_GEN).c
	$(CC) -I$(@D) $(CFLAGS) $(WARN) -c $< -o $@
$(O)/lib/runfile/pprof_file.o $(O)/tests/unit/test_pprof_file.o: $(PPROF_GEN).h

# --serve's header (microhttpd.h): a build made before libmicrohttpd was a
# build dependency installs it here, as the pprof packages above.
$(O)/.serve-deps: | $(DEPS_STAMP)
	@$(call install_missing,$(SERVE_PKGS))
	@mkdir -p $(@D) && touch $@
$(O)/lib/runfile/metrics_serve.o: | $(O)/.serve-deps

# A clean build has no .d files yet to say who includes a skeleton: every
# object of lib/ waits for them (order-only: no rebuild when one changes).
$(O)/lib/%.o: lib/%.c $(O)/lib/%.d | $(DEPS_STAMP) $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(call layer_flags,$<) $(CFLAGS) $(WARN) $(DEPFLAGS) -c $< -o $@

$(O)/lib/%.o: lib/%.S $(REPORT_ASSETS) $(O)/lib/%.d | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(call layer_flags,$<) -Ireports $(DEPFLAGS) -c $< -o $@

$(O)/cmd/%.o: cmd/%.c $(O)/cmd/%.d | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CMD_CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -c $< -o $@

$(O)/tests/unit/%.o: tests/unit/%.c $(O)/tests/unit/%.d | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -c $< -o $@

# The include flags a stage's sources get, or a room's (ROOM=mech/uprobe),
# and a stage's rooms and what one may use: tests/check_layers.py reads them.
layer-flags-%:
	@echo $(call layer_flags,lib/$*/$(if $(ROOM),$(ROOM)/)x.c)
rooms-%:
	@echo $(ROOMS_$*)
room-uses-%:
	@echo $(ROOM_$*_$(ROOM))
cmd-flags:
	@echo $(CMD_CPPFLAGS)

# Header dependencies as the compiler saw them (-MMD -MP).
# An object without its .d (built before, or by hand) is rebuilt: the
# missing .d counts as changed.
DEPS := $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(UNIT_OBJS:.o=.d)
$(DEPS):
-include $(wildcard $(DEPS))

$(O)/libclockprof.a: $(LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

# The libraries the binary was linked with, rewritten only when they
# change: `make STATIC=1` after a shared build (or back) relinks.
$(O)/link-libs: FORCE
	@mkdir -p $(@D) && echo '$(LDLIBS)' | cmp -s - $@ || echo '$(LDLIBS)' > $@
FORCE:

clockprof: $(CMD_OBJS) $(O)/libclockprof.a $(O)/link-libs
	$(CC) $(CFLAGS) -o $@ $(filter-out $(O)/link-libs,$^) $(LDLIBS)

$(MAN_PAGE): clockprof
	./clockprof --man > $@

$(COMPLETION): clockprof
	./clockprof --completion bash > $@

$(O)/unit-tests: $(UNIT_OBJS) $(O)/libclockprof.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# --- reference targets (known clock reads per request) and fixtures.
include tests/targets/targets.mk

# --- tests.
check-unit: deps $(O)/unit-tests test-fixtures test-targets
	CP_TEST_BUILD=$(O)/tests $(O)/unit-tests

check-integration: all test-targets
	python3 tests/integration/run.py --clockprof ./clockprof --targets $(O)/tests/targets

check-browser: all
	$(MAKE) --no-print-directory -C tests/browser check CLOCKPROF=$(CURDIR)/clockprof

check: test-deps
	@$(MAKE) --no-print-directory all $(O)/unit-tests test-fixtures test-targets
	@python3 tests/run_all.py --build $(O)

# gcc's static analyzer (-fanalyzer) over each .c file of cmd/ and lib/,
# compiled as the build compiles it (the same include, C and warning
# flags: -Werror makes any finding fail), into a stamp that exists only
# while the file has none. A stamp follows its object, so a file is
# analysed again when it or a header it includes changes. The generated
# files ($(O)/gen/) and the libraries' headers are not ours to change:
# out of scope. What it reports that is not a defect is suppressed by
# file in tests/lint/analyzer.mk or where it stands, each with its reason.
include tests/lint/analyzer.mk
ANALYZER_STAMPS := $(LIB_SRCS:%.c=$(O)/lint/%.analyzer) $(CMD_SRCS:%.c=$(O)/lint/%.analyzer)
$(O)/lint/lib/%.analyzer: lib/%.c $(O)/lib/%.o tests/lint/analyzer.mk
	@mkdir -p $(@D)
	$(CC) $(call layer_flags,$<) $(CFLAGS) $(WARN) $(ANALYZER_FLAGS) $(ANALYZER_NO_$<) -c $< -o /dev/null
	@touch $@
$(O)/lint/cmd/%.analyzer: cmd/%.c $(O)/cmd/%.o tests/lint/analyzer.mk
	@mkdir -p $(@D)
	$(CC) $(CMD_CPPFLAGS) $(CFLAGS) $(WARN) $(ANALYZER_FLAGS) $(ANALYZER_NO_$<) -c $< -o /dev/null
	@touch $@

# The C of cmd/, lib/, probes/ and tests/unit/ (not the assembly) in
# .clang-format's style: `make format` rewrites the files in place,
# format-check (part of lint) fails on any line a run would change. The
# style is pinned to Debian 12's clang-format 14 (another version formats
# some constructs otherwise): another one is refused, saying so.
CLANG_FORMAT ?= clang-format
FORMAT_SRCS   = $(sort $(shell find cmd lib probes tests/unit -name '*.[ch]'))
define clang_format_14
$(call install_missing,clang-format); \
v=$$($(CLANG_FORMAT) --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p'); \
if [ "$$v" != 14 ]; then \
	echo "clockprof: .clang-format is written for clang-format 14 (Debian 12's);" \
		"$(CLANG_FORMAT) is version $${v:-unknown}: give CLANG_FORMAT=clang-format-14" >&2; \
	exit 1; \
fi
endef
format:
	@$(clang_format_14)
	@$(CLANG_FORMAT) -i $(FORMAT_SRCS)
format-check:
	@$(clang_format_14)
	@$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRCS) || \
		{ echo "clockprof: not in .clang-format's style: run 'make format'" >&2; exit 1; }

# cppcheck over cmd/ and lib/, warnings and portability: zero findings,
# or it fails. What it reports that is not a defect is suppressed where it
# stands, each with its reason (tests/lint/suppressions.txt); the
# libraries' macros it cannot read are described in tests/lint/clockprof.cfg.
# After the build: the generated headers are read too. The format check,
# its first prerequisite, takes a second.
lint: format-check all $(ANALYZER_STAMPS)
	@cppcheck --quiet --enable=warning,portability --inline-suppr --std=c11 -D_GNU_SOURCE \
		-j2 --error-exitcode=1 --library=tests/lint/clockprof.cfg \
		--suppressions-list=tests/lint/suppressions.txt \
		$(addprefix -I,$(shell find lib -type d)) -Iprobes -I$(O) cmd lib && \
		echo "lint: clang-format, cppcheck and gcc -fanalyzer, 0 findings"

check-sanitize: deps
	$(MAKE) --no-print-directory O=build-sanitize \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		check-unit

# --- demo and benchmarks.
# Only what the demo runs (clockprof and its target; no Go or Rust test
# targets), built in parallel and quietly: progress and the result, the
# compiler lines with V=1.
NPROC := $(shell nproc 2>/dev/null || echo 1)
demo:
	@echo "demo: building clockprof and the demo target ($(NPROC) jobs$(if $(V),,; V=1 shows the compiler lines))..."
	@$(MAKE) --no-print-directory $(if $(V),,-s) -j$(NPROC) deps clockprof $(T)/targets/callsites_target
	@sh tests/demo.sh ./clockprof $(T)/targets $(O)/demo

include tests/bench/bench.mk
include tests/fuzz/fuzz.mk

bench: all test-targets $(O)/bench-bare-uprobe $(O)/bench-compare $(O)/bench-symbolize $(O)/bench-gate-stats \
	$(O)/bench-shared-counter $(O)/bench-commit-target $(O)/bench-peak-rss
	@( $(call install_missing,bpftrace) ) || echo "bench: bpftrace could not be installed: its figures are skipped"
	@python3 tests/bench/run.py --clockprof ./clockprof --targets $(O)/tests/targets --build $(O)
	@python3 tests/bench/servers.py --clockprof ./clockprof --targets $(O)/tests/targets
	@python3 tests/bench/attach_cost.py --clockprof ./clockprof --targets $(O)/tests/targets \
		--commit-target $(O)/bench-commit-target --peak-rss $(O)/bench-peak-rss
	@python3 tests/bench/vdso_patch_cost.py --targets $(O)/tests/targets --threads 1 --clockprof ./clockprof
	@python3 tests/bench/vdso_patch_cost.py --targets $(O)/tests/targets --threads 4 --rounds 200000 --clockprof ./clockprof
	@python3 tests/bench/vdso_patch_pause.py --targets $(O)/tests/targets
	@python3 tests/bench/boundary_cost.py --targets $(O)/tests/targets
	@python3 tests/bench/demo_share.py --clockprof ./clockprof --targets $(O)/tests/targets
	@python3 tests/bench/redis_mechanisms.py --clockprof ./clockprof
	@python3 tests/bench/churn_rss.py --clockprof ./clockprof --targets $(O)/tests/targets
	@python3 tests/bench/fork_storm.py --clockprof ./clockprof --targets $(O)/tests/targets --pairs 7
	@python3 tests/bench/exec_storm.py --clockprof ./clockprof --targets $(O)/tests/targets --pairs 5
	@$(O)/bench-compare ./clockprof
	@$(O)/bench-gate-stats
	@$(O)/bench-symbolize $(O)/tests/targets
	@$(O)/bench-shared-counter
	@$(MAKE) --no-print-directory -C tests/browser bench CLOCKPROF=$(CURDIR)/clockprof

# --- Debian package (packaging/deb/build.sh): the binary, man page, bash
# completion and docs; Depends from dpkg-shlibdeps (${shlibs:Depends}).
# check-deb installs it with apt-get, runs it and purges it (.ci/run).
VERSION  := $(shell sed -n 's/^\#define CLOCKPROF_VERSION "\(.*\)"$$/\1/p' lib/util/include/version.h)
DEB      := clockprof_$(VERSION)_amd64.deb
deb: $(DEB)
$(DEB): clockprof $(MAN_PAGE) $(COMPLETION) README.md CHANGELOG.md $(wildcard docs/*.md) \
		$(wildcard docs/examples/* examples/* packaging/deb/*)
	@BUILD=$(O) sh packaging/deb/build.sh $(VERSION) $(O)/deb $@

# Silent when it passes (.ci/run's last line stays the test summary).
check-deb: deps $(T)/targets/callsites_target
	@$(MAKE) --no-print-directory -s deb > $(O)/deb-build.log 2>&1 || { cat $(O)/deb-build.log; exit 1; }
	@sh packaging/deb/check.sh ./$(DEB) $(T)/targets $(O)/deb-demo

# No `deps` here: installing never runs apt-get.
install: clockprof $(MAN_PAGE) $(COMPLETION)
	install -D -m 0755 clockprof $(DESTDIR)$(PREFIX)/bin/clockprof
	install -D -m 0644 $(MAN_PAGE) $(DESTDIR)$(PREFIX)/share/man/man1/clockprof.1
	install -D -m 0644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/clockprof

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/clockprof \
		$(DESTDIR)$(PREFIX)/share/man/man1/clockprof.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/clockprof

clean:
	rm -rf $(O) build-sanitize clockprof clockprof_*.deb
