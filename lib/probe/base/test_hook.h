/* test_hook.h - the tests' hooks into the probe: environment variables
 * named CLOCKPROF_TEST_*, each documented where it is read, that widen a
 * race a loaded host opens now and then (so that a test can open it every
 * time) or cut a step short. Unset, they cost a getenv. */
#ifndef CP_TEST_HOOK_H
#define CP_TEST_HOOK_H

/* The variable's value as a number; 0 when it is unset. */
unsigned cp_test_hook(const char *name);

#endif
