/* fuzz_run_file.c - a run.json from anywhere (CI artifacts, another
 * branch) through every reader: the validator, the gate (compared with
 * itself and with nothing changed), the verdict it builds (which must pass
 * the verdict validator), the table, markdown, annotations and the HTML
 * report. */
#include <stdio.h>

#include "bounds.h"
#include "compare.h"
#include "compare_run.h"
#include "compare_texts.h"
#include "error.h"
#include "fuzz_common.h"
#include "github_annotations.h"
#include "report.h"
#include "run_file.h"
#include "verdict_file.h"
#include "verdict_measures.h"

static void gate(const json_t *doc, FILE *sink)
{
	struct cp_compare_run run;
	const char *name = "fuzz.json";
	struct cp_compare_side side = { &run, &name, 1 };
	struct cp_compare_opts opts = { .alpha = 0.05 };
	struct cp_compare_texts texts = { 0 };
	struct cp_compare_result r;
	struct cp_bounds bounds;
	struct cp_error err;
	json_t *verdict, *docs[3];

	if (cp_compare_run_from_doc(doc, 1, &run))
		return;
	cp_bounds_init_defaults(&bounds);
	if (cp_compare(&side, &side, &bounds, &opts, &r, &err) == 0) {
		verdict = cp_verdict_build(&r, &bounds, &side, &side);
		if (verdict) {
			struct cp_verdict_measures ms;
			struct cp_compare_texts_request rq = { sink, FUZZ_SINK, 1, 1 };
			json_t *skel = cp_verdict_skeleton(&r, &bounds, &side, &side);

			if (cp_verdict_file_validate(verdict, "built", &err))
				abort();	/* we wrote what we cannot read */
			/* What the gate writes: from the result, measure by
			 * measure. */
			cp_verdict_measures_of_result(&ms, &r);
			cp_compare_texts_render(skel, &ms, &rq, &texts, &err);
			cp_compare_texts_free(&texts);
			cp_compare_texts_table(sink, skel, &ms, 1);
			json_decref(skel);
			cp_github_annotations_write(sink, verdict);
			docs[0] = verdict;
			docs[1] = docs[2] = (json_t *)doc;
			cp_report_write(docs, 3, sink, FUZZ_SINK, &err);
			json_decref(verdict);
		}
		cp_compare_result_free(&r);
	}
	cp_bounds_free(&bounds);
	cp_compare_run_free(&run);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct cp_error err;
	json_t *doc = fuzz_json(data, size);

	if (!sink)
		sink = fopen(FUZZ_SINK, "w");
	if (doc && cp_run_file_validate(doc, "fuzz.json", &err) == 0) {
		cp_report_write(&doc, 1, sink, FUZZ_SINK, &err);
		gate(doc, sink);
	}
	json_decref(doc);
	return 0;
}
