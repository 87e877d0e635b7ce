/* call_sites.c - see call_sites.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_sites.h"
#include "clock_names.h"
#include "symbolize.h"
#include "unwind_table.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same_place(const struct cp_call_site *a, const struct cp_call_site *b)
{
	if (!same_str(a->function, b->function) || !same_str(a->file, b->file) ||
	    a->line != b->line || !same_str(a->via, b->via) ||
	    !same_str(a->module, b->module) || a->ninlined != b->ninlined)
		return 0;
	for (size_t i = 0; i < a->ninlined; i++)
		if (!same_str(a->inlined[i], b->inlined[i]))
			return 0;
	return 1;
}

static char *via_name(const struct cp_unwind_table *t, const struct cp_site_key *k)
{
	char buf[64];

	if (k->via != CP_VIA_NONE && t && k->via < t->n_via)
		return strdup(t->via[k->via]);
	if (k->direct_syscall)
		snprintf(buf, sizeof(buf), "syscall(SYS_%s)", cp_entry_name(k->entry));
	else
		snprintf(buf, sizeof(buf), "%s", cp_entry_name(k->entry));
	return strdup(buf);
}

static void describe(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
		     const struct cp_site_count *raw, struct cp_call_site *site)
{
	struct cp_frame_info f;
	char label[512];

	memset(site, 0, sizeof(*site));
	site->count = raw->counts.all;
	site->in_requests = raw->counts.in_requests;
	site->via = via_name(t, &raw->key);
	if (raw->key.pc == 0) {
		site->function = strdup("[stack not readable]");
		return;
	}
	/* A return address follows the call: pc - 1 is inside the call. */
	cp_symbolize(sym, raw->key.pc - 1, &f);
	cp_frame_label(&f, false, label, sizeof(label));
	site->function = strdup(label);
	site->file = dup_or_null(f.file);
	site->line = f.line;
	site->module = dup_or_null(f.module);
	site->build_id = dup_or_null(f.build_id);
	if (f.n_inlined) {
		site->inlined = calloc(f.n_inlined, sizeof(char *));
		for (size_t i = 0; site->inlined && i < f.n_inlined; i++)
			site->inlined[site->ninlined++] = dup_or_null(f.inlined[i].function ?
								     f.inlined[i].function : "?");
	}
}

static void free_site(struct cp_call_site *s)
{
	free(s->function);
	free(s->file);
	for (size_t i = 0; i < s->ninlined; i++)
		free(s->inlined[i]);
	free(s->inlined);
	free(s->module);
	free(s->build_id);
	free(s->via);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct cp_call_site *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->function, y->function);
}

int cp_call_sites_resolve(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
			  const struct cp_site_count *raw, size_t nraw,
			  struct cp_call_sites *out)
{
	out->n = 0;
	out->sites = calloc(nraw ? nraw : 1, sizeof(*out->sites));
	if (!out->sites)
		return -1;
	for (size_t i = 0; i < nraw; i++) {
		struct cp_call_site site;
		size_t j;

		if (!raw[i].counts.all)
			continue;
		describe(sym, t, &raw[i], &site);
		for (j = 0; j < out->n; j++)
			if (same_place(&out->sites[j], &site))
				break;
		if (j < out->n) {
			out->sites[j].count += site.count;
			out->sites[j].in_requests += site.in_requests;
			free_site(&site);
		} else {
			out->sites[out->n++] = site;
		}
	}
	qsort(out->sites, out->n, sizeof(*out->sites), by_count_desc);
	return 0;
}

void cp_call_sites_free(struct cp_call_sites *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		free_site(&cs->sites[i]);
	free(cs->sites);
	cs->sites = NULL;
	cs->n = 0;
}
