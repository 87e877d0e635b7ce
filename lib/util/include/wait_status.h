/* wait_status.h - a process's wait status in words, for the summary and
 * run.json of a command clockprof launched, and for anything else that
 * waits on a child. */
#ifndef CP_WAIT_STATUS_H
#define CP_WAIT_STATUS_H

#include <stddef.h>

/* Describes a wait status ("exit code 3", "killed by SIGKILL"). */
void cp_describe_exit(int status, char *buf, size_t size);

#endif
