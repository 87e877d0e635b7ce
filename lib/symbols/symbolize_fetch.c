/* symbolize_fetch.c - --debuginfod: once the window has closed, the
 * modules whose addresses have no name are reported to a second libdwfl
 * session whose debug file search ends in libdw's debuginfod client, and
 * those addresses named from what it finds (symbolize.h). Apart from
 * symbolize.c because it runs once, after everything else, and only on
 * request. */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_id.h"
#include "symbolize.h"
#include "symbolizer_internal.h"

static bool entry_unnamed(const struct cache_entry *e)
{
	return e && e->info.module && !e->info.function && !e->info.stale;
}

size_t cp_symbolizer_unnamed(struct cp_symbolizer *s, struct cp_unnamed_module *out, size_t max)
{
	size_t n = 0, j;

	for (size_t i = 0; i < s->cap; i++) {
		const struct cache_entry *e = s->vals[i];

		if (!entry_unnamed(e))
			continue;
		for (j = 0; j < n && out[j].path != e->info.module; j++)
			;
		if (j < n)
			out[j].addresses++;
		else if (n < max)
			out[n++] = (struct cp_unnamed_module){ e->info.module, e->info.build_id,
							       1 };
	}
	return n;
}

/* The module's file again, checked by its build-id: the target's copy
 * (through its root) or, once it is gone, this machine's. */
static int reopen_module(const struct cp_symbolizer *s, const struct sym_module *m, char *name,
			 size_t size)
{
	for (int i = 0; i < 2; i++) {
		char hex[128];
		int fd;

		if (i == 0)
			snprintf(name, size, "%s%s", s->root, m->path);
		else
			snprintf(name, size, "%s", m->path);
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && cp_build_id_of_fd(fd, hex, sizeof(hex)) == 0 &&
		    !strcmp(hex, m->build_id))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* m's file reported to the second session at its bias: its symbol table
 * is then looked for by libdwfl's standard search, which ends in libdw's
 * debuginfod client. */
static Dwfl_Module *report_for_fetch(struct cp_symbolizer *s, const struct sym_module *m)
{
	char name[PATH_MAX + 64];
	int fd = reopen_module(s, m, name, sizeof(name));
	Dwfl_Module *mod;

	if (fd < 0)
		return NULL;
	if (!s->fetch_dwfl) {
		s->fetch_cb = (Dwfl_Callbacks){ .find_elf = dwfl_linux_proc_find_elf,
						.find_debuginfo = dwfl_standard_find_debuginfo,
						.debuginfo_path = &s->debuginfo_path };
		s->fetch_dwfl = dwfl_begin(&s->fetch_cb);
	}
	if (!s->fetch_dwfl) {
		close(fd);
		return NULL;
	}
	dwfl_report_begin_add(s->fetch_dwfl);
	mod = dwfl_report_elf(s->fetch_dwfl, m->path, name, fd, m->bias, true);
	dwfl_report_end(s->fetch_dwfl, NULL, NULL);
	if (!mod)
		close(fd); /* libdwfl keeps fd only with the module */
	return mod;
}

/* Names m's unnamed addresses from what the second session found. */
static size_t fetch_module(struct cp_symbolizer *s, struct sym_module *m)
{
	struct sym_module side = { .bias = m->bias };
	size_t named = 0;

	side.mod = report_for_fetch(s, m);
	if (!side.mod)
		return 0;
	for (size_t i = 0; i < s->cap; i++) {
		struct cache_entry *e = s->vals[i];

		if (!entry_unnamed(e) || e->info.module != m->path)
			continue;
		cp_sym_name_by_symbol(e, &side, e->info.addr);
		if (!e->info.function)
			continue;
		cp_sym_name_by_dwarf(e, &side, e->info.addr);
		e->shallow = false;
		named++;
	}
	free(side.syms);
	return named;
}

size_t cp_symbolizer_fetch_debuginfo(struct cp_symbolizer *s)
{
	size_t named = 0;

	for (size_t i = 0; i < s->n_mods; i++) {
		struct sym_module *m = s->mods[i];
		bool wanted = false;

		if (!m->verified || m->is_vdso || !m->build_id)
			continue;
		for (size_t k = 0; k < s->cap && !wanted; k++)
			wanted = entry_unnamed(s->vals[k]) && s->vals[k]->info.module == m->path;
		if (wanted)
			named += fetch_module(s, m);
	}
	return named;
}
