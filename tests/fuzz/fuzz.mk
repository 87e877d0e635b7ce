# libFuzzer harnesses for every reader of untrusted input (tests/fuzz/),
# included by the top-level Makefile. Built with clang, ASan and UBSan,
# against the library compiled the same way into $(O)/fuzz.
#
#   make check-fuzz        each harness over its seed corpus once (seconds;
#                          part of make check)
#   make fuzz FUZZ_S=N     each harness N seconds (default 60); new inputs go
#                          to $(O)/fuzz/corpus/NAME, crashes to $(O)/fuzz/crashes

FUZZ_CC    ?= clang
FUZZ_S     ?= 60
FUZZ_O     := $(O)/fuzz
# Files are read in tiny pieces (lib/util/json_walk.c), so that values
# cross read boundaries in inputs of a few kilobytes.
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -DCP_JSON_WALK_FIRST_READ=16
FUZZ_SRCS  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS  := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_O)/%)
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_O)/%.o) $(LIB_ASMS:%.S=$(FUZZ_O)/%.o) \
	$(FUZZ_O)/gen/runfile/profile.pb-c.o

.PHONY: fuzz fuzz-build check-fuzz

$(FUZZ_O)/lib/probe/base/syscall_names.o: $(O)/syscall_table.h
# The report's CSP hashes are generated (Makefile: GEN_INC_report), here too.
$(FUZZ_O)/lib/report/report.o: $(O)/gen/report/report_csp.h
# So is pprof's profile.proto as C (Makefile: PPROF_GEN).
$(FUZZ_O)/lib/runfile/pprof_file.o: $(PPROF_GEN).h
$(FUZZ_O)/gen/runfile/profile.pb-c.o: $(PPROF_GEN).c
	@mkdir -p $(@D)
	$(FUZZ_CC) -I$(O)/gen/runfile $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(WARN) -c $< -o $@
$(FUZZ_O)/lib/%.o: lib/%.c $(SKELS) $(wildcard lib/*/*.h lib/*/include/*.h lib/*/*/*.h lib/*/*/include/*.h lib/*/*/*/*.h probes/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(call layer_flags,$<) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(WARN) -c $< -o $@

$(FUZZ_O)/lib/%.o: lib/%.S $(REPORT_ASSETS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(call layer_flags,$<) -Ireports -c $< -o $@

$(FUZZ_O)/libclockprof.a: $(FUZZ_LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_O)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_O)/libclockprof.a
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) -o $@ $< \
		$(FUZZ_O)/libclockprof.a $(LDLIBS)

fuzz-build: deps $(FUZZ_BINS)

check-fuzz: fuzz-build
	@python3 tests/fuzz/run.py --build $(FUZZ_O)

fuzz: fuzz-build
	@python3 tests/fuzz/run.py --build $(FUZZ_O) --seconds $(FUZZ_S)
