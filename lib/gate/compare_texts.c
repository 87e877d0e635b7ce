/* compare_texts.c - see compare_texts.h. */
#include <stdlib.h>
#include <string.h>

#include "compare_markdown.h"
#include "compare_table.h"
#include "compare_texts.h"
#include "json_file.h"
#include "parallel.h"

enum text_kind { TEXT_JSON, TEXT_MARKDOWN, TEXT_TABLE, NTEXTS };

struct render_job {
	const json_t *verdict;
	int color;
	int wanted[NTEXTS];
	char *text[NTEXTS];
};

/* Each worker only reads the verdict: jansson's reads and its dumper
 * leave values untouched, so the walks do not interfere. */
static void render_one(void *ctx, size_t i, size_t worker)
{
	struct render_job *job = ctx;

	(void)worker;
	if (!job->wanted[i])
		return;
	switch ((enum text_kind)i) {
	case TEXT_JSON:
		job->text[i] = cp_json_text(job->verdict);
		break;
	case TEXT_MARKDOWN:
		job->text[i] = cp_compare_markdown(job->verdict, 0);
		break;
	case TEXT_TABLE:
		job->text[i] = cp_compare_table_string(job->verdict, job->color);
		break;
	default:
		break;
	}
}

int cp_compare_texts_render(const json_t *verdict, int want_json,
			    int want_markdown, int want_table, int color,
			    struct cp_compare_texts *out)
{
	struct render_job job = { verdict, color,
				  { want_json, want_markdown, want_table },
				  { NULL, NULL, NULL } };

	cp_parallel_for(NTEXTS, cp_parallel_workers(NTEXTS), render_one, &job);
	out->json = job.text[TEXT_JSON];
	out->markdown = job.text[TEXT_MARKDOWN];
	out->table = job.text[TEXT_TABLE];
	for (size_t i = 0; i < NTEXTS; i++)
		if (job.wanted[i] && !job.text[i]) {
			cp_compare_texts_free(out);
			return -1;
		}
	return 0;
}

void cp_compare_texts_free(struct cp_compare_texts *texts)
{
	free(texts->json);
	free(texts->markdown);
	free(texts->table);
	memset(texts, 0, sizeof(*texts));
}
