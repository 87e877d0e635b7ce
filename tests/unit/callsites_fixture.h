/* callsites_fixture.h - helpers for the unit tests that run the call-site
 * fixtures (tests/targets/callsites_*, built by `make test-fixtures` into
 * $CP_TEST_BUILD/fixtures): start one and wait until it is loaded, find the
 * address a symbol of it has in the running process, find a source line by
 * its SITE: marker, find the vDSO clock entries. Static functions: include
 * from one test file each. */
#ifndef CALLSITES_FIXTURE_H
#define CALLSITES_FIXTURE_H

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize.h"

static __attribute__((unused)) void fixture_path(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/fixtures/%s", unit_build_dir(), name);
}

/* Starts fixture `path` serving requests forever at 200/s and waits for its
 * "ready" line. Returns the pid, or -1: a fixture that was not built is for
 * the caller to skip; one that does not become ready fails the test here
 * (after a generous 60 s: a slow host is not a missing fixture). */
static __attribute__((unused)) pid_t fixture_spawn_path(const char *path)
{
	int fds[2];
	pid_t pid;
	char buf[64] = "";
	struct pollfd p;
	ssize_t n;

	if (access(path, X_OK) != 0 || pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, "0", "200", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	p.fd = fds[0];
	p.events = POLLIN;
	n = poll(&p, 1, 60000) == 1 ? read(fds[0], buf, sizeof(buf) - 1) : -1;
	close(fds[0]);
	if (n <= 0 || strncmp(buf, "ready", 5) != 0) {
		unit_fail(__FILE__, __LINE__, "fixture %s %s", path,
			  n < 0 ? "printed no \"ready\" line within 60 s" :
				  "exited or wrote something else before its \"ready\" line");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static __attribute__((unused)) pid_t fixture_spawn(const char *name)
{
	char path[PATH_MAX];

	fixture_path(name, path, sizeof(path));
	return fixture_spawn_path(path);
}

static __attribute__((unused)) void fixture_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* Start of the mapping of file offset 0 of the module whose path ends with
 * suffix, in process pid. */
static __attribute__((unused)) int fixture_map_start(pid_t pid, const char *suffix, uint64_t *start)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char name[PATH_MAX] = "";
		size_t len;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*u %s", &s, &e, &off, name) < 4)
			continue;
		len = strlen(name);
		if (off == 0 && len >= strlen(suffix) &&
		    strcmp(name + len - strlen(suffix), suffix) == 0) {
			*start = s;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* The bounds of libc's code (its r-xp mapping) in process pid, left as
 * they were (callers start them at 0) when not found. */
static __attribute__((unused)) void fixture_libc_code(pid_t pid, unsigned long long *lo,
						      unsigned long long *hi)
{
	char path[64], line[PATH_MAX + 128];
	FILE *m;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	m = fopen(path, "r");
	while (m && fgets(line, sizeof(line), m))
		if (strstr(line, "r-xp") && strstr(line, "/libc.so.6") &&
		    sscanf(line, "%llx-%llx", lo, hi) == 2)
			break;
	if (m)
		fclose(m);
}

/* Address in process pid of symbol `name`, read from ELF file elf_path
 * (.symtab, else .dynsym), in the module whose maps path ends with suffix. */
static __attribute__((unused)) int fixture_symbol(pid_t pid, const char *suffix,
						  const char *elf_path, const char *name,
						  uint64_t *addr, uint64_t *size)
{
	int fd = open(elf_path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t start, first_load = UINT64_MAX;
	size_t nph;
	int rc = -1;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || fixture_map_start(pid, suffix, &start) != 0 || elf_getphdrnum(elf, &nph) != 0)
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_vaddr & ~4095ull) < first_load)
			first_load = ph.p_vaddr & ~4095ull;
	}
	for (int pass = 0; pass < 2 && rc != 0; pass++) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *n;

				if (!gelf_getsym(d, (int)i, &sym))
					continue;
				n = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (n && strcmp(n, name) == 0 && sym.st_value) {
					*addr = start - first_load + sym.st_value;
					if (size)
						*size = sym.st_size;
					rc = 0;
					break;
				}
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

/* Line of the "SITE:marker" comment in a source file, or 0. */
static __attribute__((unused)) int fixture_marker_line(const char *src, const char *marker)
{
	char line[512], tag[128];
	FILE *f = fopen(src, "r");
	int n = 0;

	if (!f)
		return 0;
	snprintf(tag, sizeof(tag), "SITE:%s", marker);
	while (fgets(line, sizeof(line), f)) {
		char *p;

		n++;
		p = strstr(line, tag);
		if (p && (p[strlen(tag)] == ' ' || p[strlen(tag)] == '\n')) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

/* Addresses of the vDSO's exported function `name` in process pid. */
static __attribute__((unused)) int fixture_vdso_symbol(pid_t pid, const char *name, uint64_t *addr)
{
	char path[64], line[512];
	unsigned long long s = 0, e = 0;
	FILE *f;
	int fd, rc = -1;
	char *buf;
	Elf *elf;
	Elf_Scn *scn = NULL;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2)
			break;
	fclose(f);
	if (!e)
		return -1;
	buf = malloc(e - s);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	if (!buf || fd < 0 || pread(fd, buf, e - s, (off_t)s) != (ssize_t)(e - s)) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return -1;
	}
	close(fd);
	elf_version(EV_CURRENT);
	elf = elf_memory(buf, e - s);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (n = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
			    strcmp(n, name) == 0) {
				*addr = s + sym.st_value;
				rc = 0;
			}
		}
	}
	if (elf)
		elf_end(elf);
	free(buf);
	return rc;
}

static __attribute__((unused)) int fixture_libc_pages(Dwfl_Module *mod, void **ud, const char *name,
						      Dwarf_Addr start, void *arg)
{
	Dwarf_Addr bias;
	Elf *elf = strstr(name, "/libc.so.6") ? dwfl_module_getelf(mod, &bias) : NULL;
	size_t size = 0;
	char *image = elf ? elf_rawfile(elf, &size) : NULL;

	(void)ud;
	(void)start;
	if (image)
		*(long *)arg = unit_pages_held(image, size);
	return image ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* How many pages of libc's file, as symbolizer s maps it, this process
 * holds in memory (unit_pages_held); -2 when s has no libc. */
static __attribute__((unused)) long fixture_libc_pages_held(struct cp_symbolizer *s)
{
	long held = -2;

	dwfl_getmodules(cp_symbolizer_dwfl(s), fixture_libc_pages, &held, 0);
	return held;
}

#endif
