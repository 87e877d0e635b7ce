/* local_debuginfo.c - see local_debuginfo.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local_debuginfo.h"

/* Whether the file the format makes is there. */
__attribute__((format(printf, 1, 2))) static bool exists(const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0;
}

/* .build-id/xx/yyyy[.debug] under the absolute directory dir. */
static bool by_build_id(const char *dir, const char *hex)
{
	char xx[3];

	if (!hex || strlen(hex) < 3)
		return false;
	memcpy(xx, hex, 2);
	xx[2] = '\0';
	return exists("%s/.build-id/%s/%s", dir, xx, hex + 2) ||
	       exists("%s/.build-id/%s/%s.debug", dir, xx, hex + 2);
}

/* name in the main file's directory (element ""), a directory relative to
 * it (".debug"), or, for an absolute element, under it at every tail of
 * the main file's directory, longest first: /usr/lib/debug/usr/bin, then
 * /usr/lib/debug/bin, then /usr/lib/debug. */
static bool by_name(const char *elem, const char *dir, const char *name)
{
	const char *tail = dir;

	if (elem[0] == '\0')
		return exists("%s/%s", dir, name);
	if (elem[0] != '/')
		return exists("%s/%s/%s", dir, elem, name);
	for (;;) {
		if (exists("%s%s/%s", elem, tail, name))
			return true;
		if (!*tail)
			return false;
		tail = strchr(tail + 1, '/');
		if (!tail)
			tail = "";
	}
}

bool cp_local_debuginfo_may_exist(const char *debuginfo_path, const char *file_name,
				  const char *debuglink, const char *build_id_hex)
{
	char *path = strdup(debuginfo_path ? debuginfo_path : "");
	char *dir = NULL, *name = NULL;
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	bool found = false;

	if (!path)
		return true; /* cannot tell: let libdwfl search */
	if (slash) {
		dir = strndup(file_name, (size_t)(slash - file_name));
		if (debuglink)
			name = strdup(debuglink);
		else if (asprintf(&name, "%s.debug", slash + 1) < 0)
			name = NULL;
	}
	/* strsep, not strtok: an empty element is one (the file's directory) */
	for (char *p = path, *elem; !found && (elem = strsep(&p, ":"));) {
		if (*elem == '+' || *elem == '-')
			elem++;
		if (*elem == '/' && by_build_id(elem, build_id_hex))
			found = true;
		else if (dir && name && by_name(elem, dir, name))
			found = true;
	}
	free(name);
	free(dir);
	free(path);
	return found;
}
