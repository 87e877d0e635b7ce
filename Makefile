# clockprof - build, test, demo, install.
#
#   make            build ./clockprof (installs missing Debian packages first)
#   make demo       profile the bundled demo target and print the summary
#   make check      unit + integration (root, BPF) + browser tests
#   make check-unit unit tests only (no privileges)
#   make check-sanitize  unit tests under AddressSanitizer + UBSan
#   make bench      benchmarks (ratios measured side by side; not tests)
#   make install PREFIX=/usr/local DESTDIR=

PREFIX  ?= /usr/local
DESTDIR ?=
O       ?= build

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
ARCH    := x86

CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror
CPPFLAGS += -D_GNU_SOURCE -Ilib -Iprobes -I$(O)
LDLIBS  := -lbpf -ldw -lelf -ljansson -lz -lm -lstdc++

# Debian packages the build, the tests and the demo need; `make deps`
# installs the missing ones (we run as root on Debian 12).
BUILD_PKGS := gcc g++ make clang llvm libbpf-dev bpftool libelf-dev libdw-dev \
	libjansson-dev zlib1g-dev pkg-config linux-libc-dev libc6-dev
TEST_PKGS  := python3 chromium linux-perf
# Real servers and runtimes of tests/integration/test_servers.py and their
# load generators (ab, redis-benchmark); Node and Go come with the lines below.
SERVER_PKGS := redis-server redis-tools nginx-light apache2-utils openjdk-17-jdk-headless

LIB_SRCS  := $(sort $(wildcard lib/*.c))
LIB_ASMS  := $(sort $(wildcard lib/*.S))
CMD_SRCS  := $(sort $(wildcard cmd/*.c))
BPF_SRCS  := $(sort $(wildcard probes/*.bpf.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(O)/%.o) $(LIB_ASMS:%.S=$(O)/%.o)
CMD_OBJS  := $(CMD_SRCS:%.c=$(O)/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(O)/%.o)
SKELS     := $(BPF_SRCS:probes/%.bpf.c=$(O)/%.skel.h)
REPORT_ASSETS := $(sort $(wildcard reports/*))

.PHONY: all deps test-deps demo check check-unit check-integration \
	check-browser check-sanitize bench install clean
.DELETE_ON_ERROR:

all: deps clockprof

deps:
	@$(call install_missing,$(BUILD_PKGS))

test-deps: deps
	@$(call install_missing,$(TEST_PKGS))
	@$(call install_missing,$(SERVER_PKGS))
	@command -v npm >/dev/null || { $(call install_missing,nodejs npm); }
	@command -v rustc >/dev/null || [ -x "$(HOME)/.cargo/bin/rustc" ] || { $(call install_missing,rustc); }
	@command -v go >/dev/null || { $(call install_missing,golang-go); }
	@$(MAKE) --no-print-directory -C tests/browser deps

define install_missing
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
$(O)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(O)/%.bpf.o: probes/%.bpf.c probes/*.h $(O)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-parameter \
		-I$(O) -Iprobes -c $< -o $@

$(O)/%.skel.h: $(O)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# --- user side.
UNISTD_H := $(firstword $(wildcard /usr/include/x86_64-linux-gnu/asm/unistd_64.h /usr/include/asm/unistd_64.h))
$(O)/syscall_table.h: $(UNISTD_H)
	@mkdir -p $(@D)
	sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$$/\t{ "\1", \2 },/p' $< > $@

$(O)/lib/syscall_names.o: $(O)/syscall_table.h
$(O)/lib/%.o: lib/%.c $(SKELS) $(wildcard lib/*.h probes/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

$(O)/lib/%.o: lib/%.S $(REPORT_ASSETS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ireports -c $< -o $@

$(O)/cmd/%.o: cmd/%.c $(wildcard cmd/*.h lib/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

$(O)/tests/unit/%.o: tests/unit/%.c $(wildcard tests/unit/*.h lib/*.h) $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

$(O)/libclockprof.a: $(LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

clockprof: $(CMD_OBJS) $(O)/libclockprof.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

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

check-sanitize: deps
	$(MAKE) --no-print-directory O=build-sanitize \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		check-unit

# --- demo and benchmarks.
demo: all test-targets
	@sh tests/demo.sh ./clockprof $(O)/tests/targets $(O)/demo

include tests/bench/bench.mk

bench: all test-targets $(O)/bench-bare-uprobe $(O)/bench-compare $(O)/bench-symbolize
	@python3 tests/bench/run.py --clockprof ./clockprof --targets $(O)/tests/targets --build $(O)
	@python3 tests/bench/servers.py --clockprof ./clockprof --targets $(O)/tests/targets
	@$(O)/bench-compare ./clockprof
	@$(O)/bench-symbolize $(O)/tests/targets
	@$(MAKE) --no-print-directory -C tests/browser bench CLOCKPROF=$(CURDIR)/clockprof

install: all
	install -D -m 0755 clockprof $(DESTDIR)$(PREFIX)/bin/clockprof

clean:
	rm -rf $(O) build-sanitize clockprof
