/* core_btf.h - a small BTF for libbpf's CO-RE relocations (lib/probe/session/core_btf_data.S).
 *
 * libbpf reads and parses the running kernel's whole BTF (5 MB here, 10-15
 * ms, a third of the time before the probes are live) to relocate the few
 * kernel fields the BPF programs read. The build cuts those types out of
 * the build machine's kernel BTF; on that same kernel (same release,
 * version string and BTF size) they are what libbpf would find, so they are
 * used instead. On any other kernel libbpf reads the kernel's own. */
#ifndef CP_CORE_BTF_H
#define CP_CORE_BTF_H

#include <stddef.h>

/* When the running kernel is the build's, writes a path to the embedded
 * BTF (a memfd, open until cp_core_btf_close) into path and returns 0;
 * else -1 and libbpf's default applies. */
int cp_core_btf_open(char *path, size_t size, int *fd);
void cp_core_btf_close(int fd);

#endif
