/* github_annotations.c - see github_annotations.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "compare_table.h"
#include "github_annotations.h"
#include "json_file.h"
#include "verdict_measures.h"

static void escape(char *buf, size_t len, const char *s, int property)
{
	size_t w = 0;

	if (!len)
		return;
	for (; s && *s; s++) {
		const char *rep = NULL;
		size_t n;

		switch (*s) {
		case '%': rep = "%25"; break;
		case '\r': rep = "%0D"; break;
		case '\n': rep = "%0A"; break;
		case ':': rep = property ? "%3A" : NULL; break;
		case ',': rep = property ? "%2C" : NULL; break;
		}
		n = rep ? 3 : 1;
		if (w + n + 1 > len) {
			/* Never split a UTF-8 character. */
			while (w > 0 && ((unsigned char)buf[w - 1] & 0xc0) == 0x80)
				w--;
			if (w > 0 && ((unsigned char)buf[w - 1] & 0xc0) == 0xc0)
				w--;
			break;
		}
		if (rep)
			memcpy(buf + w, rep, 3);
		else
			buf[w] = *s;
		w += n;
	}
	buf[w] = '\0';
}

void cp_github_escape_data(char *buf, size_t len, const char *s)
{
	escape(buf, len, s, 0);
}

void cp_github_escape_property(char *buf, size_t len, const char *s)
{
	escape(buf, len, s, 1);
}

static int fails(const json_t *m)
{
	return !strcmp(cp_json_str(m, "status", ""), "regressed") ||
	       json_is_true(json_object_get(m, "fails_gate"));
}

/* Whether the runner can take path as it is in a property: no control
 * byte, and short enough that its escaped form is never cut. */
static int placeable(const char *path)
{
	if (!path || strlen(path) > 1000)
		return 0;
	for (const char *c = path; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return 0;
	return 1;
}

/* file=PATH,line=N, (ending in a comma) for the line that gained most of
 * a per-site measure among those in the repository; "" when none is (a
 * path the runner could not take points nowhere rather than elsewhere). */
static void where(char *buf, size_t len, const json_t *m)
{
	const json_t *line;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(json_object_get(m, "lines"), i, line) {
		const char *path = cp_json_str(line, "repo_path", NULL);
		char prop[4096];

		if (!placeable(path) || !json_is_integer(json_object_get(line, "line")))
			continue;
		cp_github_escape_property(prop, sizeof(prop), path);
		snprintf(buf, len, "file=%s,line=%lld,", prop,
			 (long long)json_integer_value(json_object_get(line, "line")));
		return;
	}
}

/* The lines the measure gained, for the message: its file= and line=
 * name only the first, and none when it is not in the repository. */
static void gained_text(char *buf, size_t len, const json_t *m)
{
	const json_t *lines = json_object_get(m, "lines"), *line;
	size_t k, w = 0;

	buf[0] = '\0';
	json_array_foreach(lines, k, line) {
		char one[1500];
		int n;

		if (k == 3) {
			snprintf(buf + w, len - w, " and %zu more", json_array_size(lines) - k);
			return;
		}
		cp_format_gained_line(one, sizeof(one), line);
		n = snprintf(buf + w, len - w, "%s%s", k ? ", " : "; gained reads at ", one);
		if (n < 0 || (size_t)n >= len - w)
			return;
		w += (size_t)n;
	}
}

static void error_line(FILE *out, const json_t *m)
{
	char name[1024], change[128], text[10000], title[4096], msg[30000];
	char reason[1200], at[4200], gained[5000];
	int regressed = !strcmp(cp_json_str(m, "status", ""), "regressed");

	/* C-escape first (no control bytes at all), then the runner's own
	 * escaping. */
	cp_escape_display(name, sizeof(name), cp_json_str(m, "name", ""), 200);
	cp_escape_display(reason, sizeof(reason), cp_json_str(m, "reason", ""), 300);
	cp_format_change(change, sizeof(change), m);
	snprintf(text, sizeof(text), "clockprof: %s %s", name,
		 regressed ? "regressed" : cp_json_str(m, "status", ""));
	cp_github_escape_property(title, sizeof(title), text);
	gained_text(gained, sizeof(gained), m);
	if (regressed)
		snprintf(text, sizeof(text), "Measure '%s' changed %s, bound %s: %s%s", name,
			 change, cp_json_str(m, "bound", ""), reason, gained);
	else
		snprintf(text, sizeof(text), "Measure '%s': %s", name, reason);
	cp_github_escape_data(msg, sizeof(msg), text);
	where(at, sizeof(at), m);
	fprintf(out, "::error %stitle=%s::%s\n", at, title, msg);
}

/* One ::warning per run-level reason for inconclusive and per warning of
 * the verdict (the runs' own among them: a profiler that saw nothing),
 * at most CP_GITHUB_MAX_ERRORS of each. */
static int warning_lines(FILE *out, const json_t *verdict, const char *key)
{
	const json_t *e;
	size_t i;
	int lines = 0;

	json_array_foreach(json_object_get(verdict, key), i, e) {
		char text[1200], msg[8192];

		if (i == CP_GITHUB_MAX_ERRORS)
			break;
		cp_escape_display(text, sizeof(text), json_string_value(e), 300);
		cp_github_escape_data(msg, sizeof(msg), text);
		fprintf(out, "::warning title=clockprof%s::%s\n",
			!strcmp(key, "warnings") ? "" : " inconclusive", msg);
		lines++;
	}
	return lines;
}

int cp_github_annotations_write_of(FILE *out, const json_t *verdict,
				   const struct cp_verdict_measures *ms)
{
	size_t failing = 0, shown = 0;
	int lines = 0;

	for (size_t i = 0; i < ms->n; i++) {
		json_t *m = cp_verdict_measures_get(ms, i);

		if (fails(m)) {
			failing++;
			if (shown < CP_GITHUB_MAX_ERRORS) {
				shown++;
				error_line(out, m);
				lines++;
			}
		}
		json_decref(m);
	}
	if (failing > shown) {
		fprintf(out,
			"::notice title=clockprof::%zu more measures regressed "
			"beyond their bounds; see the job summary or verdict.json\n",
			failing - shown);
		lines++;
	}
	lines += warning_lines(out, verdict, "inconclusive_reasons");
	lines += warning_lines(out, verdict, "warnings");
	return lines;
}

int cp_github_annotations_write(FILE *out, const json_t *verdict)
{
	struct cp_verdict_measures ms;

	cp_verdict_measures_of_doc(&ms, verdict);
	return cp_github_annotations_write_of(out, verdict, &ms);
}

int cp_github_stop_commands(FILE *out, char token[33])
{
	unsigned char r[16];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(r)) {
		/* No entropy source: still unguessable by a name written
		 * before this run. */
		unsigned long long x = (unsigned long long)time(NULL) ^
				       ((unsigned long long)getpid() << 32) ^
				       (unsigned long long)(size_t)&r;

		for (size_t i = 0; i < sizeof(r);
		     i++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
			r[i] = (unsigned char)(x >> 56);
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(token + 2 * i, 3, "%02x", r[i]);
	fprintf(out, "::stop-commands::%s\n", token);
	return 0;
}

void cp_github_resume_commands(FILE *out, const char token[33])
{
	fprintf(out, "::%s::\n", token);
}
