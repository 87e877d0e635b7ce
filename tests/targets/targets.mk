# Reference targets (programs whose clock reads per request are known by
# construction) and unit-test fixtures, built into $(O)/tests.
T := $(O)/tests

.PHONY: test-targets test-fixtures
test-targets:
test-fixtures:
