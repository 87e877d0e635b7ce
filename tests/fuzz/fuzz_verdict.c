/* fuzz_verdict.c - a verdict.json given to `clockprof report`: the
 * validator, then the report, the table, markdown and annotations it
 * vouches for. */
#include <stdio.h>

#include "compare_texts.h"
#include "error.h"
#include "fuzz_common.h"
#include "github_annotations.h"
#include "report.h"
#include "verdict_file.h"
#include "verdict_measures.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct cp_compare_texts texts = { 0 };
	struct cp_error err;
	json_t *doc = fuzz_json(data, size);

	if (!sink)
		sink = fopen(FUZZ_SINK, "w");
	if (doc && cp_verdict_file_validate(doc, "fuzz.json", &err) == 0) {
		cp_report_write(&doc, 1, sink, FUZZ_SINK, &err);
		struct cp_verdict_measures ms;
		struct cp_compare_texts_request rq = { sink, FUZZ_SINK, 1, 1 };

		cp_verdict_measures_of_doc(&ms, doc);
		cp_compare_texts_render(doc, &ms, &rq, &texts, &err);
		cp_compare_texts_free(&texts);
		cp_compare_texts_table(sink, doc, &ms, 0);
		cp_github_annotations_write(sink, doc);
	}
	json_decref(doc);
	return 0;
}
