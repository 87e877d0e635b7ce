/* clock_names.h - the names under which counts are reported: entry points
 * ("clock_gettime", "gettimeofday", "time"), paths ("vdso", "syscall") and
 * clock ids ("CLOCK_MONOTONIC", ...), for run.json and the summary. */
#ifndef CP_CLOCK_NAMES_H
#define CP_CLOCK_NAMES_H

const char *cp_entry_name(int entry);
const char *cp_path_name(int path);
const char *cp_clock_name(int slot);

#endif
