/* core_btf.c - see core_btf.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core_btf.h"
#include "core_btf_kernel.h"

extern const char cp_core_btf[];
extern const uint64_t cp_core_btf_len;

static int same_kernel(void)
{
	struct utsname u;
	struct stat st;

	return uname(&u) == 0 && !strcmp(u.release, CP_CORE_BTF_RELEASE) &&
	       !strcmp(u.version, CP_CORE_BTF_VERSION) &&
	       stat("/sys/kernel/btf/vmlinux", &st) == 0 &&
	       (long long)st.st_size == (long long)CP_CORE_BTF_SIZE;
}

int cp_core_btf_open(char *path, size_t size, int *fd)
{
	*fd = -1;
	if (!cp_core_btf_len || !same_kernel())
		return -1;
	*fd = memfd_create("clockprof-core-btf", MFD_CLOEXEC);
	if (*fd < 0)
		return -1;
	if (write(*fd, cp_core_btf, cp_core_btf_len) != (ssize_t)cp_core_btf_len ||
	    snprintf(path, size, "/proc/self/fd/%d", *fd) >= (int)size) {
		cp_core_btf_close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

void cp_core_btf_close(int fd)
{
	if (fd >= 0)
		close(fd);
}
