/* vdso_count_anatomy.S - vdso_count.S's paths with the anatomy's log
 * (--anatomy): see there. */
#define CP_VDSO_ANATOMY 1
#include "vdso_count.S"
