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
