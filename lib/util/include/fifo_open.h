/* fifo_open.h - opening an output that may wait: a FIFO with no reader.
 *
 * open(O_WRONLY) of a FIFO waits in the kernel until a reader comes, deaf
 * to Ctrl-C, SIGTERM and SIGHUP while clockprof keeps them blocked for its
 * profiling window: `-o FIFO` with no reader then only died to SIGKILL.
 * Here the open is tried without waiting and, while there is no reader,
 * retried with those signals watched, so that one of them ends the wait. */
#ifndef CP_FIFO_OPEN_H
#define CP_FIFO_OPEN_H

#include <sys/types.h>

/* Told once, before the wait, which path waits for a reader (cmd/ says
 * so on stderr; the library never prints). */
typedef void (*cp_wait_notice)(const char *path);

/* open(path, flags | O_WRONLY, mode); a FIFO without a reader calls
 * notice(path) (when not NULL) and waits for one. -1 with errno EINTR
 * when SIGINT, SIGTERM or SIGHUP came first (that signal is taken, not
 * left pending), else -1 with open's errno. The descriptor returned
 * blocks as usual. */
int cp_open_for_writing(const char *path, int flags, mode_t mode, cp_wait_notice notice);

#endif
