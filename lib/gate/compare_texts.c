/* compare_texts.c - see compare_texts.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_markdown.h"
#include "compare_table.h"
#include "compare_texts.h"
#include "error.h"
#include "github_annotations.h"
#include "parallel.h"
#include "verdict_file.h"
#include "verdict_measures.h"

enum text_kind { TEXT_JSON, TEXT_MARKDOWN, TEXT_ANNOTATIONS, NTEXTS };

struct render_job {
	const json_t *verdict;
	const struct cp_verdict_measures *ms;
	const struct cp_compare_texts_request *rq;
	int wanted[NTEXTS];
	char *text[NTEXTS];
	int json_failed;
	struct cp_error json_err;
};

int cp_compare_texts_json(FILE *f, const char *name, const json_t *verdict,
			  const struct cp_verdict_measures *ms, struct cp_error *err)
{
	errno = 0;
	if (cp_verdict_write(f, verdict, ms) || (!strcmp(name, "-") && fputc('\n', f) == EOF)) {
		const char *why = ferror(f) && errno ? strerror(errno) : "out of memory";

		return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", name, why);
	}
	return 0;
}

static int write_json(struct render_job *job)
{
	return cp_compare_texts_json(job->rq->json, job->rq->json_name, job->verdict, job->ms,
				     &job->json_err);
}

static char *annotations_string(const json_t *verdict, const struct cp_verdict_measures *ms)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	cp_github_annotations_write_of(f, verdict, ms);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Each worker only reads the verdict and the measures: jansson's reads
 * and its dumper leave values untouched, and each measure is built anew
 * by whoever asks for it, so the walks do not interfere. */
static void render_one(void *ctx, size_t i, size_t worker)
{
	struct render_job *job = ctx;

	(void)worker;
	if (!job->wanted[i])
		return;
	switch ((enum text_kind)i) {
	case TEXT_JSON: job->json_failed = write_json(job) != 0; break;
	case TEXT_MARKDOWN: job->text[i] = cp_compare_markdown_of(job->verdict, job->ms, 0); break;
	case TEXT_ANNOTATIONS: job->text[i] = annotations_string(job->verdict, job->ms); break;
	default: break;
	}
}

int cp_compare_texts_render(const json_t *verdict, const struct cp_verdict_measures *ms,
			    const struct cp_compare_texts_request *rq, struct cp_compare_texts *out,
			    struct cp_error *err)
{
	struct render_job job = { verdict,  ms,
				  rq,	    { rq->json != NULL, rq->markdown, rq->annotations },
				  { NULL }, 0,
				  { 0 } };

	cp_parallel_for(NTEXTS, cp_parallel_workers(NTEXTS), render_one, &job);
	out->markdown = job.text[TEXT_MARKDOWN];
	out->annotations = job.text[TEXT_ANNOTATIONS];
	if (job.json_failed) {
		if (err)
			*err = job.json_err;
		cp_compare_texts_free(out);
		return -1;
	}
	for (size_t i = TEXT_MARKDOWN; i < NTEXTS; i++)
		if (job.wanted[i] && !job.text[i]) {
			cp_compare_texts_free(out);
			return cp_fail(err, CP_EXIT_USAGE, "out of memory");
		}
	return 0;
}

int cp_compare_texts_table(FILE *f, const json_t *verdict, const struct cp_verdict_measures *ms,
			   int color)
{
	return cp_compare_table_write_of(f, verdict, ms, color);
}

void cp_compare_texts_free(struct cp_compare_texts *texts)
{
	free(texts->markdown);
	free(texts->annotations);
	memset(texts, 0, sizeof(*texts));
}
