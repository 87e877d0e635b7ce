/* local_debuginfo.h - whether a module's debug file is on this machine,
 * asked before libdwfl's standard search. When that search finds nothing
 * it ends in libdebuginfod, which libdw dlopen()s with libcurl, GnuTLS and
 * some thirty libraries more (~6 ms, measured) and which goes to the
 * network where DEBUGINFOD_URLS is set: before the window opens, for every
 * library without a debug file (with --stacks, all of them). clockprof
 * names from local files only, so it asks here first. */
#ifndef CP_LOCAL_DEBUGINFO_H
#define CP_LOCAL_DEBUGINFO_H

#include <stdbool.h>

/* Whether one of the places libdwfl's standard search looks in holds a
 * file for the module: a debug file named by the build-id (hex, may be
 * NULL) under an absolute element of debuginfo_path, or one named
 * debuglink (NULL: the main file's name + ".debug") beside file_name (may
 * be NULL), in its relative elements or under its absolute ones, as
 * libdwfl.h documents debuginfo_path. The file is not opened: libdwfl
 * does that, and checks it. */
bool cp_local_debuginfo_may_exist(const char *debuginfo_path, const char *file_name,
				  const char *debuglink, const char *build_id_hex);

#endif
