/* redirect_place.h - a function's redirect planned against a running
 * target (redirect_plan.h): the function found where the target maps its
 * file, its bytes read there and in the file, and its trampoline placed
 * in the unused end of the function's executable segment, in the same
 * mapping (the part of the last page past the segment's file size: no
 * code of the file is there, and the mapping is the target's private
 * copy, so the file's other mappings never see it). */
#ifndef CP_REDIRECT_PLACE_H
#define CP_REDIRECT_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "redirect_plan.h"

struct cp_redirect_place {
	enum cp_redirect_kind kind;
	struct cp_redirect_plan plan;
	int prot;     /* the function's page's protection */
	bool written; /* the trampoline is there already (a
					 * leftover of an earlier clockprof's) */
};

struct stat;

/* Whether pid maps the file st (its dev and inode) executable (its new
 * image at an exec: the program, and its interpreter). */
bool cp_redirect_place_maps(pid_t pid, const struct stat *st);

/* The redirect of the function at file offset off (size bytes: its
 * symbol's) of the file at path, calling the code at call. 0, or -1 with
 * why. pid 0: planned against the file alone, as an exec of it would map
 * it (its own addresses, its bytes, zeros past its segment's end): whether
 * it can be redirected in a process that has yet to map it. */
int cp_redirect_place(pid_t pid, enum cp_redirect_kind kind, const char *path, uint64_t off,
		      uint64_t size, uint64_t call, struct cp_redirect_place *out, char *why,
		      size_t whylen);

#endif
