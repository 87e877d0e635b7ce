/* wait_status.c - see wait_status.h. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "wait_status.h"

void cp_describe_exit(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exit code %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, size, "status 0x%x", status);
}
