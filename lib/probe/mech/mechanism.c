/* mechanism.c - see mechanism.h: the table of mechanisms, their names, and
 * the calls the window makes, each passed to the chosen mechanism with the
 * session's part done here once for all. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_points.h"
#include "error.h"
#include "mechanism.h"
#include "session_probes.h"

static const struct cp_mechanism_ops *const mechanisms[CP_MECHANISM_COUNT] = {
	[CP_MECHANISM_UPROBE] = &cp_uprobe_mechanism,
	[CP_MECHANISM_BREAKPOINT] = &cp_breakpoint_mechanism,
	[CP_MECHANISM_PATCH] = &cp_patch_mechanism,
};

static const struct cp_mechanism_ops *ops_of(enum cp_mechanism kind)
{
	return (unsigned)kind < CP_MECHANISM_COUNT ? mechanisms[kind] : mechanisms[0];
}

/* The choice that is not a mechanism (mech_choice.c). */
#define AUTO_NAME "auto"

const char *cp_mechanism_name(enum cp_mechanism m)
{
	return m == CP_MECHANISM_AUTO ? AUTO_NAME : ops_of(m)->name;
}

/* "a, b, c or auto": the names, for a message. */
static void list_names(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < CP_MECHANISM_COUNT && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
					mechanisms[i]->name);
	if (len < size)
		snprintf(buf + len, size - len, " or " AUTO_NAME);
}

int cp_mechanism_parse(const char *name, enum cp_mechanism *m, struct cp_error *err)
{
	char names[128];

	for (int i = 0; i < CP_MECHANISM_COUNT; i++)
		if (!strcmp(name, mechanisms[i]->name)) {
			*m = (enum cp_mechanism)i;
			return 0;
		}
	if (!strcmp(name, AUTO_NAME)) {
		*m = CP_MECHANISM_AUTO;
		return 0;
	}
	list_names(names, sizeof(names));
	return cp_fail(err, CP_EXIT_USAGE, "unknown --mechanism '%s': give %s", name, names);
}

bool cp_mechanism_has(enum cp_mechanism kind, enum cp_mech_cap cap)
{
	return (ops_of(kind)->caps & cap) != 0;
}

int cp_mech_configure(enum cp_mechanism kind, struct cp_session_config *cfg, struct cp_error *err)
{
	const struct cp_mechanism_ops *ops = ops_of(kind);

	if (cfg->stacks && !(ops->caps & CP_MECH_STACKS))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"--stacks needs the kernel to walk each read's stack: --mechanism %s cannot",
			ops->name);
	if (cfg->nmembers && !(ops->caps & CP_MECH_FOLLOWS_FORKS))
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"counting several processes needs the vDSO patch: --mechanism %s counts one",
			ops->name);
	if (!(ops->caps & CP_MECH_FOLLOWS_FORKS))
		cfg->follow_forks = false; /* its probes are the target's alone */
	return ops->configure ? ops->configure(cfg, err) : 0;
}

void cp_mech_await_early(enum cp_mechanism kind)
{
	const struct cp_mechanism_ops *ops = ops_of(kind);

	if (ops->await_early)
		ops->await_early();
}

void cp_mech_drop_early(enum cp_mechanism kind)
{
	const struct cp_mechanism_ops *ops = ops_of(kind);

	if (ops->drop_early)
		ops->drop_early();
}

int cp_mech_open(struct cp_mech **out, enum cp_mechanism kind, struct cp_session *s,
		 const struct cp_session_config *cfg, struct cp_error *err)
{
	struct cp_mech *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	m->ops = ops_of(kind);
	m->s = s;
	m->pause_ms[0] = m->pause_ms[1] = -1;
	m->pid = cfg->pid;
	if (m->ops->open && m->ops->open(m, cfg, err)) {
		cp_mech_close(m, NULL, NULL, NULL);
		return -1;
	}
	*out = m;
	return 0;
}

bool cp_mech_has(const struct cp_mech *m, enum cp_mech_cap cap)
{
	return (m->ops->caps & cap) != 0;
}

int cp_mech_attach_file(struct cp_mech *m, const char *path, const struct cp_clock_points *pts,
			struct cp_error *err)
{
	return m->ops->attach_file(m, path, pts, err);
}

int cp_mech_set_unwind(struct cp_mech *m, const struct cp_unwind_table *t, struct cp_error *err)
{
	if (cp_session_set_unwind(m->s, t, err))
		return -1;
	return m->ops->set_unwind ? m->ops->set_unwind(m, t, err) : 0;
}

int cp_mech_start(struct cp_mech *m, struct cp_error *err)
{
	return m->ops->start ? m->ops->start(m, err) : 0;
}

int cp_mech_prove(struct cp_mech *m, struct cp_error *err)
{
	return m->ops->prove ? m->ops->prove(m, err) : cp_mech_selftest_run(m, err);
}

void cp_mech_selftest(const struct cp_mech *m, struct cp_selftest *st)
{
	*st = m->selftest;
}

void cp_mech_stats(const struct cp_mech *m, struct cp_session_stats *st)
{
	cp_session_stats(m->s, st);
	if (m->ops->stats)
		m->ops->stats(m, st);
}

int cp_mech_read(struct cp_mech *m, struct cp_totals *t)
{
	int rc = cp_session_read(m->s, t);

	return rc || !m->ops->read ? rc : m->ops->read(m, t);
}

void cp_mech_stop(struct cp_mech *m)
{
	if (m->ops->stop)
		m->ops->stop(m);
}

int cp_mech_read_sites(struct cp_mech *m, struct cp_site_count **sites, size_t *n)
{
	int rc = cp_session_read_sites(m->s, sites, n);

	return rc || !m->ops->read_sites ? rc : m->ops->read_sites(m, sites, n);
}

uint64_t cp_mech_patch_table(const struct cp_mech *m)
{
	return m->ops->patch_table ? m->ops->patch_table(m) : 0;
}

void cp_mech_follow_execs(struct cp_mech *m)
{
	if (m->ops->follow_execs)
		m->ops->follow_execs(m);
}

void cp_mech_detach(struct cp_mech *m)
{
	if (m->ops->detach)
		m->ops->detach(m);
	cp_session_detach_clock_probes(m->s);
}

void cp_mech_close(struct cp_mech *m, double pause_ms[2], unsigned stops[2], char **warning)
{
	if (!m)
		return;
	if (m->ops->close)
		m->ops->close(m);
	free(m->state); /* what close released the insides of */
	if (pause_ms)
		memcpy(pause_ms, m->pause_ms, sizeof(m->pause_ms));
	if (stops)
		memcpy(stops, m->stops, sizeof(m->stops));
	if (warning)
		*warning = m->closing_warning;
	else
		free(m->closing_warning);
	for (int i = 0; i < m->nwarnings; i++)
		free(m->warnings[i]);
	free(m->procs);
	free(m);
}

void cp_mech_warn(struct cp_mech *m, const char *fmt, ...)
{
	char *text;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		m->warnings_dropped++;
		return;
	}
	for (int i = 0; i < m->nwarnings; i++)
		if (!strcmp(m->warnings[i], text)) {
			free(text);
			return;
		}
	if (m->nwarnings == CP_MECH_WARNINGS) {
		m->warnings_dropped++;
		free(text);
	} else {
		m->warnings[m->nwarnings++] = text;
	}
}

void cp_mech_warn_closing(struct cp_mech *m, const char *fmt, ...)
{
	char *text;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) >= 0) {
		char *both = NULL;

		/* Each said: a later one joins the earlier (one warning). */
		if (m->closing_warning &&
		    asprintf(&both, "%s; %s", m->closing_warning, text) >= 0) {
			free(text);
			text = both;
		}
		free(m->closing_warning);
		m->closing_warning = text;
	}
	va_end(ap);
}

int cp_mech_attach_syscall_only(struct cp_mech *m, const char *path,
				const struct cp_clock_points *pts, struct cp_error *err)
{
	struct cp_clock_points syscall_only = *pts;

	syscall_only.n = 0;
	return cp_session_attach_file(m->s, path, &syscall_only, err);
}
