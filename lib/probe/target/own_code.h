/* own_code.h - where a function of clockprof's own is, as a uprobe takes
 * it (a file and an offset in it): the mechanism's self-test and the
 * uprobe registration warm-up probe clockprof itself. */
#ifndef CP_OWN_CODE_H
#define CP_OWN_CODE_H

#include <stddef.h>
#include <stdint.h>

/* The file that holds fn (/proc/self/exe for the main program) into
 * path[0..size) and fn's offset in it; -1 with errno set when no loaded
 * image holds it. */
int cp_own_code_offset(const void *fn, char *path, size_t size, uint64_t *offset);

#endif
