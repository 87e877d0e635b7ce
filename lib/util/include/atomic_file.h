/* atomic_file.h - output files appear whole or not at all.
 *
 * Every file clockprof writes (run.json, verdict.json, reports) goes through
 * here: the bytes go to a temporary file in the same directory (O_TMPFILE,
 * so a kill leaves nothing behind, where the filesystem has it), are
 * flushed, and are renamed over the destination, the directory flushed
 * after, so a reader (or a CI step after a crash) never sees half a file.
 * Only regular files (and new ones) are replaced so. A symlink is never
 * resolved and renamed over: it is opened as given, as a shell's `>` opens
 * it, so the kernel's rules (fs.protected_symlinks, permissions) decide
 * where root may write, and written in place. Devices, FIFOs, sockets and
 * open descriptors (/dev/stdout, /dev/fd/N, >(...)) are written in place
 * too, a FIFO after waiting for its reader (fifo_open.h). A new file gets
 * 0666 less the umask, an existing one keeps its mode. */
#ifndef CP_ATOMIC_FILE_H
#define CP_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fifo_open.h"

struct cp_error;

/* Writes len bytes to path atomically. "-" means standard output. */
int cp_write_file_atomic(const char *path, const void *buf, size_t len, struct cp_error *err);

/* The same, written piece by piece: a text that would be as big as its
 * input (verdict.json of 100,000 measures is ~100 MB) is never held whole.
 * cp_atomic_open() classifies path and opens the temporary file (or the
 * device, FIFO or symlink, or standard output): opened before the work,
 * it also proves that path can be written, and a FIFO waits for its
 * reader there (notice may be NULL). The caller writes to
 * cp_atomic_stream(); cp_atomic_flush() gets the bytes written so far to
 * their file (a temp file to the disk), so that a commit only renames;
 * cp_atomic_commit() flushes and publishes it, and cp_atomic_abort() drops
 * it (a replaced file then stays as it was). Both release the handle.
 * Open, flush and commit fail with CP_EXIT_USAGE. */
struct cp_atomic_out;

struct cp_atomic_out *cp_atomic_open(const char *path, cp_wait_notice notice, struct cp_error *err);
FILE *cp_atomic_stream(struct cp_atomic_out *o);
int cp_atomic_flush(struct cp_atomic_out *o, struct cp_error *err);
int cp_atomic_commit(struct cp_atomic_out *o, struct cp_error *err);
void cp_atomic_abort(struct cp_atomic_out *o);

/* Whether o is a temp file put in place only by the commit (a regular or
 * new file), rather than written where it is. */
bool cp_atomic_staged(const struct cp_atomic_out *o);

/* Writes all len bytes to fd, again after EINTR and short writes; 0, or -1
 * with errno set. */
int cp_write_all(int fd, const void *buf, size_t len);

#endif
