/* atomic_file.h - output files appear whole or not at all.
 *
 * Every file clockprof writes (run.json, verdict.json, reports) goes through
 * here: the bytes go to a temporary file in the same directory (O_TMPFILE,
 * so a kill leaves nothing behind, where the filesystem has it), are
 * flushed, and are renamed over the destination, the directory flushed
 * after, so a reader (or a CI step after a crash) never sees half a file.
 * Only regular files are replaced so: a symlink keeps pointing where it did
 * (the file it points to is replaced), and devices, FIFOs, sockets and open
 * descriptors (/dev/stdout, /dev/fd/N, >(...)) are written in place. A new
 * file gets 0666 less the umask, an existing one keeps its mode. */
#ifndef CP_ATOMIC_FILE_H
#define CP_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

struct cp_error;

/* Writes len bytes to path atomically. "-" means standard output. */
int cp_write_file_atomic(const char *path, const void *buf, size_t len,
			 struct cp_error *err);

/* The same, written piece by piece: a text that would be as big as its
 * input (verdict.json of 100,000 measures is ~100 MB) is never held whole.
 * cp_atomic_open() classifies path and opens the temporary file (or the
 * device or FIFO, or standard output); the caller writes to
 * cp_atomic_stream(); cp_atomic_commit() flushes and publishes it, and
 * cp_atomic_abort() drops it (a replaced file then stays as it was). Both
 * release the handle. Open and commit fail with CP_EXIT_USAGE. */
struct cp_atomic_out;

struct cp_atomic_out *cp_atomic_open(const char *path, struct cp_error *err);
FILE *cp_atomic_stream(struct cp_atomic_out *o);
int cp_atomic_commit(struct cp_atomic_out *o, struct cp_error *err);
void cp_atomic_abort(struct cp_atomic_out *o);

/* Checks, before any work is done, that path could be written: a file can
 * be made in its directory (tried, not just asked: /proc passes access()),
 * or the existing device or FIFO takes writes; path is not a directory.
 * Fails with CP_EXIT_USAGE. "-" (standard output) always passes. */
int cp_check_writable(const char *path, struct cp_error *err);

/* Writes all len bytes to fd, again after EINTR and short writes; 0, or -1
 * with errno set. */
int cp_write_all(int fd, const void *buf, size_t len);

#endif
