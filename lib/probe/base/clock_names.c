/* clock_names.c - see clock_names.h. */
#include <linux/types.h>

#include "clock_names.h"
#include "clockreads.h"

static const char *const entry_names[CP_ENTRY_MAX] = {
	[CP_ENTRY_CLOCK_GETTIME] = "clock_gettime",
	[CP_ENTRY_GETTIMEOFDAY] = "gettimeofday",
	[CP_ENTRY_TIME] = "time",
};

static const char *const clock_names[CP_CLOCK_SLOTS] = {
	"CLOCK_REALTIME",
	"CLOCK_MONOTONIC",
	"CLOCK_PROCESS_CPUTIME_ID",
	"CLOCK_THREAD_CPUTIME_ID",
	"CLOCK_MONOTONIC_RAW",
	"CLOCK_REALTIME_COARSE",
	"CLOCK_MONOTONIC_COARSE",
	"CLOCK_BOOTTIME",
	"CLOCK_REALTIME_ALARM",
	"CLOCK_BOOTTIME_ALARM",
	"CLOCK_SGI_CYCLE",
	"CLOCK_TAI",
	"dynamic",
};

const char *cp_entry_name(int entry)
{
	return entry >= 0 && entry < CP_ENTRY_MAX ? entry_names[entry] : "?";
}

const char *cp_path_name(int path)
{
	return path == CP_PATH_VDSO ? "vdso" : path == CP_PATH_SYSCALL ? "syscall" : "?";
}

const char *cp_clock_name(int slot)
{
	return slot >= 0 && slot < CP_CLOCK_SLOTS ? clock_names[slot] : "?";
}
