/* test_dpkg_owner.c - lib/util/dpkg_owner: which package lists a file, in
 * a dpkg database of the test's own (architecture suffixes, dots in
 * package names, /usr-merged spellings, files no package lists). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpkg_owner.h"
#include "unit.h"

static void list_file(const char *dir, const char *name, const char *lines)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/info/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(lines, f);
		fclose(f);
	}
}

TEST(dpkg_owner_names_the_package_listing_a_file)
{
	char dir[] = "/tmp/clockprof-dpkg-XXXXXX", info[64], pkg[64];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(info, sizeof(info), "%s/info", dir);
	CHECK(mkdir(info, 0755) == 0);
	list_file(dir, "redis-tools.list", "/.\n/usr\n/usr/bin\n/usr/bin/redis-check-rdb\n");
	list_file(dir, "python3.11-minimal:amd64.list", "/usr/bin/python3.11\n");
	list_file(dir, "coreutils.list", "/bin/ls\n");
	list_file(dir, "redis-tools.md5sums", "/usr/bin/not-this-one\n");
	/* its name begins as the file's, read first, but lists it only inside
	 * longer lines: the owner is another list's, whose last line has no
	 * newline */
	list_file(dir, "libjemalloc-dev.list",
		  "/usr/lib/libjemalloc.so.2-gdb.py\nx/usr/lib/libjemalloc.so.2\n");
	list_file(dir, "jemalloc2.list", "/usr/share/doc\n/usr/lib/libjemalloc.so.2");
	CHECK_INT(cp_dpkg_owner(dir, "/usr/bin/redis-check-rdb", pkg, sizeof(pkg)), 0);
	CHECK_STR(pkg, "redis-tools");
	CHECK_INT(cp_dpkg_owner(dir, "/usr/bin/python3.11", pkg, sizeof(pkg)), 0);
	CHECK_STR(pkg, "python3.11-minimal");
	CHECK_INT(cp_dpkg_owner(dir, "/usr/bin/ls", pkg, sizeof(pkg)), 0); /* /usr-merged */
	CHECK_STR(pkg, "coreutils");
	CHECK_INT(cp_dpkg_owner(dir, "/usr/lib/libjemalloc.so.2", pkg, sizeof(pkg)), 0);
	CHECK_STR(pkg, "jemalloc2");
	CHECK_INT(cp_dpkg_owner(dir, "/usr/bin/not-this-one", pkg, sizeof(pkg)), -1);
	CHECK_INT(cp_dpkg_owner(dir, "/opt/app/server", pkg, sizeof(pkg)), -1);
	/* listed, but where no package installs: a list made up, never read */
	list_file(dir, "local.list", "/usr/local/bin/tool\n");
	CHECK_INT(cp_dpkg_owner(dir, "/usr/local/bin/tool", pkg, sizeof(pkg)), -1);
	CHECK_INT(cp_dpkg_owner("/nonexistent", "/usr/bin/ls", pkg, sizeof(pkg)), -1);
	for (const char *n =
		     "redis-tools.list\0python3.11-minimal:amd64.list\0coreutils.list\0redis-tools.md5sums\0"
		     "libjemalloc-dev.list\0jemalloc2.list\0local.list\0";
	     *n; n += strlen(n) + 1) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", info, n);
		unlink(path);
	}
	rmdir(info);
	rmdir(dir);
}
