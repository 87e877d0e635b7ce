/* anatomy_names.c - see anatomy_names.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatomy_names.h"
#include "call_sites.h"
#include "clock_names.h"
#include "symbolize.h"
#include "utf8.h"

static char *address(uint64_t pc)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)pc);
	return strdup(buf);
}

/* *s, now the caller's: moved out, so that freeing its old owner leaves
 * it alone. */
static char *take(char **s)
{
	char *v = *s;

	*s = NULL;
	return v;
}

/* The site, through the call sites' own naming (one raw site); its names
 * are taken from the resolved site rather than copied. */
static void name_site(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
		      struct cp_anatomy_read *r)
{
	struct cp_site_count raw = { 0 };
	struct cp_call_sites cs = { 0 };
	struct cp_call_site *c;

	raw.key.pc = r->id.pc;
	raw.key.via = r->id.via;
	raw.key.entry = r->id.entry;
	raw.counts.all = 1;
	if (cp_call_sites_resolve(sym, t, &raw, 1, &cs) || !cs.n) {
		cp_call_sites_free(&cs);
		return;
	}
	c = &cs.sites[0];
	r->location = cp_call_site_location(c); /* before its names are taken */
	r->function = take(&c->function);
	r->file = take(&c->file);
	r->line = c->line;
	r->module = take(&c->module);
	r->via = take(&c->via);
	r->inlined_at_file = take(&c->inlined_at_file);
	r->inlined_at_line = c->ninlined ? c->inlined_at_line : 0;
	cp_call_sites_free(&cs);
}

/* A caller frame: a return address, so pc - 1 is inside the call. */
static void name_caller(struct cp_symbolizer *sym, uint64_t pc, struct cp_anatomy_caller *c)
{
	struct cp_frame_info f;
	char label[512];

	if (!sym || cp_symbolize(sym, pc - 1, &f)) {
		c->function = address(pc);
		return;
	}
	cp_frame_label(&f, false, label, sizeof(label));
	c->function = cp_utf8_dup(label);
	c->file = cp_utf8_dup(f.file);
	c->line = f.line;
}

/* One read: its site, else its address and the entry called, and its
 * callers; named in n, then into *r whole. */
static void name_read(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
		      struct cp_anatomy_read *r)
{
	struct cp_anatomy_read n = { .id = r->id };

	if (sym)
		name_site(sym, t, &n);
	if (!n.function)
		n.function = address(n.id.pc);
	if (!n.via)
		n.via = strdup(cp_entry_name(n.id.entry));
	while (n.ncallers < CP_ANATOMY_FRAMES && n.id.callers[n.ncallers]) {
		name_caller(sym, n.id.callers[n.ncallers], &n.callers[n.ncallers]);
		n.ncallers++;
	}
	*r = n;
}

void cp_anatomy_name(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
		     struct cp_anatomy *a)
{
	for (size_t i = 0; i < a->nreads; i++)
		name_read(sym, t, &a->reads[i]);
}
