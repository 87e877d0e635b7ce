# Reference targets (programs whose clock reads per request are known by
# construction) and unit-test fixtures, built into $(T) = $(O)/tests.
T := $(O)/tests
TARGET_CFLAGS := -O2 -g -fno-omit-frame-pointer -pthread

.PHONY: test-targets test-fixtures
test-targets: $(T)/targets/reads_target $(T)/targets/reads_target_static
test-fixtures:

$(T)/targets/reads_target: tests/targets/reads_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $<

# Static: glibc still finds the vDSO, but no libc.so is mapped.
$(T)/targets/reads_target_static: tests/targets/reads_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -static -o $@ $<

test-targets: $(T)/targets/reply_target $(T)/targets/reply_target_static
$(T)/targets/reply_target: tests/targets/reply_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $<
$(T)/targets/reply_target_static: tests/targets/reply_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -static -o $@ $<

test-targets: $(T)/targets/chrono_target $(T)/targets/clock_loop
$(T)/targets/chrono_target: tests/targets/chrono_target.cpp
	@mkdir -p $(@D)
	$(CXX) $(TARGET_CFLAGS) -o $@ $<

$(T)/targets/clock_loop: tests/targets/clock_loop.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $<

# Requests that start a program (posix_spawn, system(), vfork, fork):
# CLONE_VM children share the parent's thread pointer until their exec.
test-targets: $(T)/targets/spawn_target
$(T)/targets/spawn_target: tests/targets/spawn_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# A thread per request, each joined before the next: glibc reuses its
# stack, and so its thread pointer.
test-targets: $(T)/targets/fallback_target
$(T)/targets/fallback_target: tests/targets/fallback_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

test-targets: $(T)/targets/thread_request_target
$(T)/targets/thread_request_target: tests/targets/thread_request_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# Threads that call execve at once (test_redirects).
test-targets: $(T)/targets/exec_race_target
$(T)/targets/exec_race_target: tests/targets/exec_race_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $< -pthread

# A thread every 10 ms, each with known reads: attach while threads are born.
test-targets: $(T)/targets/thread_spawner
$(T)/targets/thread_spawner: tests/targets/thread_spawner.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# CPU time per request, stable, for the gate on task-clock/op (test_gate.py).
test-targets: $(T)/targets/work_target
$(T)/targets/work_target: tests/targets/work_target.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $<

# Software-counter reference targets (page faults, blocking per request).
test-targets: $(T)/targets/pagefault_target $(T)/targets/blocking_target
$(T)/targets/pagefault_target: tests/targets/pagefault_target.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-omit-frame-pointer -o $@ $<

$(T)/targets/blocking_target: tests/targets/blocking_target.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-omit-frame-pointer -o $@ $<

# --stacks: a stack deeper than the walk and one that loses its way.
test-targets: $(T)/targets/deep_stack_target
$(T)/targets/deep_stack_target: tests/targets/deep_stack_target.c tests/targets/callsites_common.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -fno-omit-frame-pointer -o $@ $<

# Call-site targets (symbolization, unwind table): known call sites per
# function; built into $(T)/targets for integration tests and $(T)/fixtures
# for the unit tests. _stripped has its debug info in a separate file found
# through .gnu_debuglink; _bare is stripped with only .dynsym (-rdynamic).
CALLSITES_CFLAGS := -O2 -g -Wall -Wextra -Werror
CALLSITES_NAMES := callsites_target callsites_target_nofp \
	callsites_target_stripped callsites_target_bare callsites_cpp_target \
	callsites_lib_target libcallsites.so
test-targets: $(addprefix $(T)/targets/,$(CALLSITES_NAMES))
test-fixtures: $(addprefix $(T)/fixtures/,$(CALLSITES_NAMES))

define callsites_rules
$(T)/$(1)/callsites_target: tests/targets/callsites_target.c tests/targets/callsites_common.h
	@mkdir -p $$(@D)
	$$(CC) $$(CALLSITES_CFLAGS) -fno-omit-frame-pointer -o $$@ $$<
$(T)/$(1)/callsites_target_nofp: tests/targets/callsites_target.c tests/targets/callsites_common.h
	@mkdir -p $$(@D)
	$$(CC) $$(CALLSITES_CFLAGS) -fomit-frame-pointer -o $$@ $$<
$(T)/$(1)/callsites_target_stripped: tests/targets/callsites_target.c tests/targets/callsites_common.h
	@mkdir -p $$(@D)
	$$(CC) $$(CALLSITES_CFLAGS) -fno-omit-frame-pointer -o $$@.full $$<
	objcopy --only-keep-debug $$@.full $$@.debug
	objcopy --strip-all --add-gnu-debuglink=$$@.debug $$@.full $$@
	rm -f $$@.full
$(T)/$(1)/callsites_target_bare: tests/targets/callsites_target.c tests/targets/callsites_common.h
	@mkdir -p $$(@D)
	$$(CC) $$(CALLSITES_CFLAGS) -rdynamic -o $$@.full $$<
	strip --strip-all -o $$@ $$@.full
	rm -f $$@.full
$(T)/$(1)/callsites_cpp_target: tests/targets/callsites_cpp_target.cpp tests/targets/callsites_common.h
	@mkdir -p $$(@D)
	$$(CXX) $$(CALLSITES_CFLAGS) -o $$@ $$<
$(T)/$(1)/libcallsites.so: tests/targets/callsites_lib.c
	@mkdir -p $$(@D)
	$$(CC) $$(CALLSITES_CFLAGS) -shared -fPIC -o $$@ $$<
$(T)/$(1)/callsites_lib_target: tests/targets/callsites_lib_target.c tests/targets/callsites_common.h $(T)/$(1)/libcallsites.so
	@mkdir -p $$(@D)
	$$(CC) $$(CALLSITES_CFLAGS) -o $$@ $$< -L$$(@D) -lcallsites -Wl,-rpath,'$$$$ORIGIN'
endef
$(foreach d,targets fixtures,$(eval $(call callsites_rules,$(d))))

# Rust reference target, built when a Rust compiler is around (rustup's in
# ~/.cargo/bin or Debian's rustc; `make test-deps` installs the latter when
# there is neither). Without one its tests are skipped, saying so.
RUSTC ?= $(firstword $(shell command -v rustc 2>/dev/null) $(wildcard $(HOME)/.cargo/bin/rustc))
ifneq ($(RUSTC),)
test-targets: $(T)/targets/rust_target
$(T)/targets/rust_target: tests/targets/rust_target.rs
	@mkdir -p $(@D)
	$(RUSTC) -C opt-level=2 -g -o $@ $<
endif

# Go reference target, built when `go` is around (`make test-deps` installs
# Debian's golang-go otherwise). Offline and root-safe: GOPATH, the build
# cache and GOFLAGS are set here, modules off (it imports only the standard
# library); symbols are kept (no -s/-w), which lib/probe/points/go_clock_points.c needs.
# The empty .s file lets its go:linkname body-less declarations build.
GO ?= $(shell command -v go 2>/dev/null)
ifneq ($(GO),)
test-targets: $(T)/targets/go_target
test-fixtures: $(T)/fixtures/go_target
GO_ENV := GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local \
	GOPATH=$(abspath $(O))/go GOCACHE=$(abspath $(O))/go/cache
$(T)/%/go_target: tests/targets/go_target.go
	@mkdir -p $(@D) $(O)/go/src/$*/go_target
	cp $< $(O)/go/src/$*/go_target/go_target.go
	: > $(O)/go/src/$*/go_target/linkname.s
	cd $(O)/go/src/$*/go_target && $(GO_ENV) $(GO) build -trimpath -o $(abspath $@) .
endif

# Libraries loaded after attach (dlopen): the probes must follow them.
test-targets: $(T)/targets/dlopen_target $(T)/targets/libdl_clock.so
$(T)/targets/dlopen_target: tests/targets/dlopen_target.c tests/targets/dl_requests.h
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -ldl

$(T)/targets/libdl_clock.so: tests/targets/dl_clock.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC -o $@ $<

# ... and by a process whose main thread has exited (its /proc/PID shows
# no memory).
test-targets: $(T)/targets/leader_exit_target
$(T)/targets/leader_exit_target: tests/targets/leader_exit_target.c tests/targets/dl_requests.h
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -ldl
test-targets: $(T)/targets/leader_exit_reader
$(T)/targets/leader_exit_reader: tests/targets/leader_exit_reader.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $<

# ... and a process that ends while a thread of its waits in fsync (its
# main thread a zombie meanwhile, the process on its way out).
test-targets: $(T)/targets/exit_fsync_target
$(T)/targets/exit_fsync_target: tests/targets/exit_fsync_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $<

# ... and one whose own syscall() takes no uprobe (an int3 first).
test-targets: $(T)/targets/libunprobed_syscall.so
$(T)/targets/libunprobed_syscall.so: tests/targets/unprobed_syscall.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC -o $@ $<

# --interval's memory bench: a new library per period, 100 threads a second
# and a child a second, without end (tests/bench/churn_rss.py).
test-targets: $(T)/targets/churn_target
$(T)/targets/churn_target: tests/targets/churn_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $< -ldl -pthread

# Calls of gettimeofday/time that pass no PLT stub (-fno-plt): uprobes do not
# see them, and say so; breakpoints do where they fire.
test-targets: $(T)/targets/reads_target_noplt
$(T)/targets/reads_target_noplt: tests/targets/reads_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fno-plt -o $@ $<

# Leaves the window by exec, or starts a process: known reads before/after.
test-targets: $(T)/targets/lifecycle_target
$(T)/targets/lifecycle_target: tests/targets/lifecycle_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# A tree of processes, each with known reads and requests: run follows forks.
test-targets: $(T)/targets/fork_tree_target
$(T)/targets/fork_tree_target: tests/targets/fork_tree_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# The server tests' ground truth (tests/truth): an LD_PRELOAD library that
# counts the clock calls and reply syscalls of the process it is loaded into,
# independently of clockprof's mechanisms.
test-targets: $(T)/targets/clock_truth.so
test-fixtures: $(T)/fixtures/clock_truth.so
$(T)/%/clock_truth.so: tests/truth/clock_truth.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl

# A Go net/http server with known reads per request (tests/integration/test_servers.py).
ifneq ($(GO),)
test-targets: $(T)/targets/go_http_server
$(T)/targets/go_http_server: tests/targets/go_http_server.go
	@mkdir -p $(@D) $(O)/go/src/go_http_server
	cp $< $(O)/go/src/go_http_server/go_http_server.go
	cd $(O)/go/src/go_http_server && $(GO_ENV) $(GO) build -trimpath -o $(abspath $@) .
endif

# Reads known by construction for the vDSO patch (test_vdso_patch.py).
test-targets: $(T)/targets/patch_target
$(T)/targets/patch_target: tests/targets/patch_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $< -ldl
test-targets: $(T)/targets/patch_target_static
$(T)/targets/patch_target_static: tests/targets/patch_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -static -o $@ $<
# A command run under a seccomp filter (test_mechanism_choice.py).
test-targets: $(T)/targets/seccomp_exec
$(T)/targets/seccomp_exec: tests/targets/seccomp_exec.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $<
# A 32-bit (ia32) clock loop, where the compiler can build one (gcc-multilib).
ifneq ($(shell echo 'int main(void){return 0;}' | $(CC) -m32 -x c - -o /dev/null 2>/dev/null && echo y),)
test-targets: $(T)/targets/clock_loop_m32
$(T)/targets/clock_loop_m32: tests/targets/clock_loop.c
	@mkdir -p $(@D)
	$(CC) -m32 -O2 -g -Wall -Wextra -Werror -o $@ $<
endif
# musl, dynamic and static, where musl-gcc is installed (test-deps).
ifneq ($(shell command -v musl-gcc),)
test-targets: $(T)/targets/patch_target_musl $(T)/targets/patch_target_musl_static
$(T)/targets/patch_target_musl: tests/targets/patch_target.c
	@mkdir -p $(@D)
	musl-gcc -O2 -g -pthread -Wall -Wextra -o $@ $<
$(T)/targets/patch_target_musl_static: tests/targets/patch_target.c
	@mkdir -p $(@D)
	musl-gcc -O2 -g -pthread -Wall -Wextra -static -o $@ $<
test-targets: $(T)/targets/reply_target_musl
$(T)/targets/reply_target_musl: tests/targets/reply_target.c
	@mkdir -p $(@D)
	musl-gcc -O2 -g -Wall -Wextra -o $@ $<
test-targets: $(T)/targets/wrapper_sites_target_musl_static
# The demo's request with a read through syscall() (test_redirects.py).
test-targets: $(T)/targets/syscall_read_target_musl $(T)/targets/syscall_read_target_musl_static
$(T)/targets/syscall_read_target_musl: tests/targets/syscall_read_target.c tests/targets/callsites_common.h
	@mkdir -p $(@D)
	musl-gcc -O2 -g -Wall -Wextra -Werror -o $@ $<
$(T)/targets/syscall_read_target_musl_static: tests/targets/syscall_read_target.c tests/targets/callsites_common.h
	@mkdir -p $(@D)
	musl-gcc -O2 -g -Wall -Wextra -Werror -static -o $@ $<
$(T)/targets/wrapper_sites_target_musl_static: tests/targets/wrapper_sites_target.c tests/targets/callsites_common.h
	@mkdir -p $(@D)
	musl-gcc -O2 -g -Wall -Wextra -Werror -static -o $@ $<
endif
test-targets: $(T)/targets/syscall_read_target
$(T)/targets/syscall_read_target: tests/targets/syscall_read_target.c tests/targets/callsites_common.h
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<
test-targets: $(T)/targets/wrapper_sites_target
$(T)/targets/wrapper_sites_target: tests/targets/wrapper_sites_target.c tests/targets/callsites_common.h
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -Wno-deprecated-declarations -o $@ $<
test-targets: $(T)/targets/unstubbed_target
$(T)/targets/unstubbed_target: tests/targets/unstubbed_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $< -ldl

# More threads alive at once than the patch's table has slots.
test-targets: $(T)/targets/crowd_target
$(T)/targets/crowd_target: tests/targets/crowd_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $<

# Threads reading as fast as they can, in bursts, paused all together.
test-targets: $(T)/targets/burst_target
$(T)/targets/burst_target: tests/targets/burst_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# Waits in sigsuspend() for a signal: one handled while its thread is
# held must still end the wait.
test-targets: $(T)/targets/sigsuspend_target
$(T)/targets/sigsuspend_target: tests/targets/sigsuspend_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $<

# A SIGUSR1 handler that leaves by siglongjmp(): one that runs on top
# of clockprof's stub must not abandon it half done.
test-targets: $(T)/targets/longjmp_target
$(T)/targets/longjmp_target: tests/targets/longjmp_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# A request function inlined into main (step) and cloned by -O3
# (handle.constprop.0): a func: boundary on either must say so.
test-targets: $(T)/targets/inlined_boundary_target
$(T)/targets/inlined_boundary_target: tests/targets/inlined_boundary_target.c
	@mkdir -p $(@D)
	$(CC) -O3 -g -Wall -Wextra -Werror -o $@ $<

# Pointers to gettimeofday and time initialised in data (test_clock_points.c).
test-fixtures: $(T)/fixtures/fn_pointer_clock
$(T)/fixtures/fn_pointer_clock: tests/targets/fn_pointer_clock.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIE -pie -Wall -Wextra -Werror -o $@ $<

# --anatomy: requests whose reads, and what lies between them, are known.
test-targets: $(T)/targets/anatomy_target
$(T)/targets/anatomy_target: tests/targets/anatomy_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# ... and the program it exec()s into, squatting at its old table's place.
test-targets: $(T)/targets/table_squatter
$(T)/targets/table_squatter: tests/targets/table_squatter.c probes/patch_layout.h
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -Iprobes -o $@ $<

# --anatomy on a thread that made rdtsc fault (PR_SET_TSC).
test-targets: $(T)/targets/notsc_target
$(T)/targets/notsc_target: tests/targets/notsc_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# A process that execs itself every few ms, keeping its pid: an attach
# that spans an exec (test_exec_mid_attach).
test-targets: $(T)/targets/exec_loop_target
$(T)/targets/exec_loop_target: tests/targets/exec_loop_target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<

# A library dlclosed and a copy of it loaded at its place
# (test_dlclose_sites); a process that drops its vDSO's private copy
# mid-run (test_vdso_dropped).
REVIEW_TARGETS := $(T)/targets/dlswap_target $(T)/targets/vdso_dontneed_target
test-targets: $(REVIEW_TARGETS)
$(REVIEW_TARGETS): $(T)/targets/%: tests/targets/%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $< -ldl

# Threads in states a held thread must be sent on from as the kernel
# would (inside an rseq critical section: at its abort handler), that
# must be sent no stub (under syscall user dispatch, as Wine's: the
# stub's system calls would reach its SIGSYS handler as the program's
# own), and a process that locks its future mappings (mlockall), where
# the counter table must not be populated and locked whole.
HELD_STATE_TARGETS := $(patsubst %,$(T)/targets/%,rseq_target sud_target mlock_target)
test-targets: $(HELD_STATE_TARGETS)
$(HELD_STATE_TARGETS): $(T)/targets/%: tests/targets/%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -Wall -Wextra -Werror -o $@ $<
