/* dpkg_owner.h - which Debian package installed a file. A stripped file
 * whose functions have no name is named by that package's -dbgsym
 * package: the summary says which (it never installs anything). */
#ifndef CP_DPKG_OWNER_H
#define CP_DPKG_OWNER_H

#include <stddef.h>

/* The package (without its architecture) whose file list in dpkg's
 * database (/var/lib/dpkg/info/PKG.list; admindir for tests) holds path,
 * also as /usr-merged systems list it (/bin/x for /usr/bin/x). 0, or -1
 * when no package lists it, it lies where no package installs (/usr/local,
 * /home, /root, /tmp, /var/tmp), or there is no dpkg database. */
int cp_dpkg_owner(const char *admindir, const char *path, char *pkg, size_t size);

#endif
