/* metrics_sites.c - see metrics_sites.h. Sites are matched by their three
 * label values, not by address: a snapshot's sites are merged by name
 * already (call_sites.h), and the labels are what Prometheus keys on. A
 * linear search: at most CP_METRICS_SITES_MAX labelled sites, once per
 * interval. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "metrics_sites.h"

/* The label values of c, in three malloc'd strings; -1 out of memory. */
static int site_labels(const struct cp_call_site *c, struct cp_metrics_site *out)
{
	size_t len = strlen(c->function) + 1;

	for (size_t i = 0; i < c->ninlined; i++)
		len += strlen(c->inlined[i]) + 3;
	out->site = malloc(len);
	if (out->site) {
		strcpy(out->site, c->function);
		for (size_t i = 0; i < c->ninlined; i++)
			strcat(strcat(out->site, " > "), c->inlined[i]);
	}
	out->location = cp_call_site_location(c);
	out->via = strdup(c->via ? c->via : "");
	out->value = 0;
	if (out->site && out->location && out->via)
		return 0;
	free(out->site);
	free(out->location);
	free(out->via);
	return -1;
}

static struct cp_metrics_site *find(struct cp_metrics_state *s, const struct cp_metrics_site *k)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->sites[i].site, k->site) &&
		    !strcmp(s->sites[i].location, k->location) && !strcmp(s->sites[i].via, k->via))
			return &s->sites[i];
	return NULL;
}

/* This snapshot's counts of the labelled sites (now[i]) and of the rest. */
static int fold(struct cp_metrics_state *s, const struct cp_call_sites *cs, uint64_t *now,
		uint64_t *other)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct cp_metrics_site k, *hit;

		if (site_labels(&cs->sites[i], &k))
			return -1;
		hit = find(s, &k);
		if (!hit && s->n < s->max_sites &&
		    !cp_grow(&s->sites, &s->cap, s->n + 1, sizeof(*s->sites))) {
			s->sites[s->n] = k;
			hit = &s->sites[s->n++];
		} else {
			free(k.site);
			free(k.location);
			free(k.via);
		}
		if (hit)
			now[hit - s->sites] += cs->sites[i].count;
		else
			*other += cs->sites[i].count;
	}
	return 0;
}

int cp_metrics_sites_update(struct cp_metrics_state *s, const struct cp_call_sites *cs)
{
	size_t room = s->n + (s->max_sites > s->n ? s->max_sites - s->n : 0);
	uint64_t *now, other = 0;
	int rc;

	if (room > s->n + cs->n)
		room = s->n + cs->n;
	now = calloc(room ? room : 1, sizeof(*now));
	if (!now)
		return -1;
	rc = fold(s, cs, now, &other);
	for (size_t i = 0; i < s->n; i++)
		if (now[i] > s->sites[i].value)
			s->sites[i].value = now[i];
	if (other > s->other)
		s->other = other;
	free(now);
	return rc;
}

void cp_metrics_state_free(struct cp_metrics_state *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->sites[i].site);
		free(s->sites[i].location);
		free(s->sites[i].via);
	}
	free(s->sites);
	s->sites = NULL;
	s->n = s->cap = 0;
}
