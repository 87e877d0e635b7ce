/* atomic_file.h - output files appear whole or not at all.
 *
 * Every file clockprof writes (run.json, verdict.json, reports) goes through
 * here: the bytes go to a temporary file in the same directory, are flushed,
 * and are renamed over the destination, so a reader (or a CI step after a
 * crash) never sees half a file. */
#ifndef CP_ATOMIC_FILE_H
#define CP_ATOMIC_FILE_H

#include <stddef.h>

struct cp_error;

/* Writes len bytes to path atomically. "-" means standard output. */
int cp_write_file_atomic(const char *path, const void *buf, size_t len,
			 struct cp_error *err);

/* Checks, before any work is done, that path could be written: its directory
 * exists and is writable and path is not a directory. Fails with
 * CP_EXIT_USAGE. "-" (standard output) always passes. */
int cp_check_writable(const char *path, struct cp_error *err);

#endif
