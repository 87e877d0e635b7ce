/* call_sites.c - see call_sites.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_sites.h"
#include "clock_names.h"
#include "grow.h"
#include "symbolize.h"
#include "utf8.h"
#include "unwind_table.h"

/* Copies a name for run.json: valid UTF-8 whatever the target's bytes. */
static char *dup_or_null(const char *s)
{
	return cp_utf8_dup(s);
}

/* Every named field (call_sites.h). Sites are merged by sorting on this
 * key, so 10,000 sites cost n log n, not n^2. */
char *cp_call_site_place_key(const struct cp_call_site *c)
{
	size_t len = 64;
	char *key, *p;

	if (!c->function || !c->via) /* out of memory naming the site */
		return NULL;
	len += strlen(c->function) + strlen(c->via);
	len += (c->file ? strlen(c->file) : 0) + (c->module ? strlen(c->module) : 0);
	len += c->inlined_at_file ? strlen(c->inlined_at_file) : 0;
	for (size_t i = 0; i < c->ninlined; i++) {
		if (!c->inlined[i]) /* likewise, an inlined function's */
			return NULL;
		len += strlen(c->inlined[i]) + 1;
	}
	key = p = malloc(len);
	if (!key)
		return NULL;
	p += sprintf(p, "%s\x1f%s\x1f%d\x1f%s\x1f%s\x1f%s\x1f%d", c->function,
		     c->file ? c->file : "", c->line, c->via, c->module ? c->module : "",
		     c->inlined_at_file ? c->inlined_at_file : "", c->inlined_at_line);
	for (size_t i = 0; i < c->ninlined; i++)
		p += sprintf(p, "\x1f%s", c->inlined[i]);
	return key;
}

char *cp_call_site_location(const struct cp_call_site *c)
{
	const char *at = c->inlined_at_file;
	char *out;
	int n;

	if (!c->file || c->line <= 0)
		n = asprintf(&out, "%s", c->file ? c->file : c->module ? c->module : "");
	else if (c->inlined_at_line <= 0)
		n = asprintf(&out, "%s:%d", c->file, c->line);
	else if (!at || !strcmp(at, c->file))
		n = asprintf(&out, "%s:%d (inlined at line %d)", c->file, c->line,
			     c->inlined_at_line);
	else
		n = asprintf(&out, "%s:%d (inlined at %s:%d)", c->file, c->line, at,
			     c->inlined_at_line);
	return n < 0 ? NULL : out;
}

struct keyed {
	char *key;
	struct cp_call_site site;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

static char *via_name(const struct cp_unwind_table *t, const struct cp_site_key *k)
{
	char buf[64];

	if (k->via != CP_VIA_NONE && t && k->via < t->n_via)
		return dup_or_null(t->via[k->via]);
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
	site->function = dup_or_null(label);
	site->file = dup_or_null(f.file);
	site->line = f.line;
	site->module = dup_or_null(f.module);
	site->build_id = dup_or_null(f.build_id);
	if (f.n_inlined) {
		site->inlined = calloc(f.n_inlined, sizeof(char *));
		for (size_t i = 0; site->inlined && i < f.n_inlined; i++)
			site->inlined[site->ninlined++] = dup_or_null(
				f.inlined[i].function ? f.inlined[i].function : "?");
		/* the line alone, where DWARF names no file, still tells the
		 * calls apart */
		if (f.inlined[0].call_line > 0) {
			site->inlined_at_file = dup_or_null(f.inlined[0].call_file);
			site->inlined_at_line = f.inlined[0].call_line;
		}
	}
	if ((f.file && f.file[0] != '/') ||
	    (site->inlined_at_file && site->inlined_at_file[0] != '/'))
		site->comp_dir = dup_or_null(f.comp_dir);
}

static void free_site(struct cp_call_site *s)
{
	free(s->function);
	free(s->file);
	cp_free_strings(s->inlined, s->ninlined);
	free(s->inlined_at_file);
	free(s->comp_dir);
	free(s->module);
	free(s->build_id);
	free(s->via);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct cp_call_site *x = a, *y = b;
	int by_name;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if ((by_name = strcmp(x->function, y->function)))
		return by_name;
	/* one function's sites as its lines run, a helper's calls too */
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (x->inlined_at_line > y->inlined_at_line) -
	       (x->inlined_at_line < y->inlined_at_line);
}

int cp_call_sites_resolve(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
			  const struct cp_site_count *raw, size_t nraw, struct cp_call_sites *out)
{
	struct keyed *all = calloc(nraw ? nraw : 1, sizeof(*all));
	size_t n = 0;

	out->n = 0;
	out->sites = calloc(nraw ? nraw : 1, sizeof(*out->sites));
	if (!out->sites || !all) {
		free(all);
		return -1;
	}
	for (size_t i = 0; i < nraw; i++) {
		if (!raw[i].counts.all)
			continue;
		describe(sym, t, &raw[i], &all[n].site);
		all[n].key = cp_call_site_place_key(&all[n].site);
		if (!all[n].key) {
			free_site(&all[n].site);
			continue;
		}
		n++;
	}
	qsort(all, n, sizeof(*all), by_key);
	for (size_t i = 0; i < n; i++) {
		if (out->n && !strcmp(all[i].key, all[i - 1].key)) {
			out->sites[out->n - 1].count += all[i].site.count;
			out->sites[out->n - 1].in_requests += all[i].site.in_requests;
			free_site(&all[i].site);
		} else {
			out->sites[out->n++] = all[i].site;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(all[i].key);
	free(all);
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
