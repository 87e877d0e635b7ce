/* redirect_code.c - see redirect_code.h. The rooms are the ones the
 * pieces' REDIRECT_CODE_END checks as they are assembled. */
#include "patch_layout.h"
#include "redirect_code.h"

extern const uint8_t cp_boundary_close_start[], cp_boundary_close_end[];
extern const uint8_t cp_syscall_count_start[], cp_syscall_count_end[];
extern const uint8_t cp_anatomy_close_start[], cp_anatomy_close_end[];

const struct cp_redirect_code cp_boundary_close = {
	.start = cp_boundary_close_start,
	.end = cp_boundary_close_end,
	.off = CP_PATCH_BOUNDARY_CODE_OFF,
	.room = CP_PATCH_SYSCALL_CODE_OFF - CP_PATCH_BOUNDARY_CODE_OFF,
};

const struct cp_redirect_code cp_syscall_count = {
	.start = cp_syscall_count_start,
	.end = cp_syscall_count_end,
	.off = CP_PATCH_SYSCALL_CODE_OFF,
	.room = CP_PATCH_CODE_OFF + 4096 - CP_PATCH_SYSCALL_CODE_OFF,
};

const struct cp_redirect_code cp_anatomy_close = {
	.start = cp_anatomy_close_start,
	.end = cp_anatomy_close_end,
	.off = CP_PATCH_AN_CLOSE_OFF,
	.room = CP_PATCH_CODE_OFF + 8192 - CP_PATCH_AN_CLOSE_OFF,
};

const struct cp_redirect_code *cp_redirect_code_of(enum cp_redirect_kind kind)
{
	return kind == CP_REDIRECT_SYSCALL ? &cp_syscall_count : &cp_boundary_close;
}
