/* build_id.h - GNU build-ids as hex, of a file on disk and of an ELF image
 * in a live process's memory: the symbolizer checks that the file it opens
 * is the one mapped, and run.json names the executable by it. One reading
 * for both, with libelf's notes (dwelf). */
#ifndef CP_BUILD_ID_H
#define CP_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The build-id of the ELF file open on fd, as hex in hex[size]; -1 when it
 * has none (or it does not fit). */
int cp_build_id_of_fd(int fd, char *hex, size_t size);

/* The same for the file at path; hex is "" when it has none. */
void cp_build_id_of_path(const char *path, char *hex, size_t size);

/* The build-id of the ELF image whose file offset 0 is mapped at map0 in
 * pid's memory (read through /proc/PID/mem): the ground truth a file on
 * disk is checked against. -1 when there is none. */
int cp_build_id_in_memory(pid_t pid, uint64_t map0, char *hex, size_t size);

#endif
