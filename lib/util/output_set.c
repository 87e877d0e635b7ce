/* output_set.c - see output_set.h. */
#include <string.h>

#include "atomic_file.h"
#include "error.h"
#include "output_set.h"

int cp_outputs_open(struct cp_output *outs, size_t n, cp_wait_notice notice, struct cp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		outs[i].out = NULL;
		if (outs[i].path && !(outs[i].out = cp_atomic_open(outs[i].path, notice, err))) {
			cp_outputs_abort(outs, i);
			return -1;
		}
	}
	return 0;
}

/* Writes and flushes one output; on failure drops it. */
static int write_one(struct cp_output *o, struct cp_error *err)
{
	FILE *f = cp_atomic_stream(o->out);

	if ((o->write && o->write(f, o->ctx, err)) || cp_atomic_flush(o->out, err)) {
		cp_atomic_abort(o->out);
		o->out = NULL;
		return -1;
	}
	return 0;
}

int cp_outputs_write(struct cp_output *outs, size_t n, enum cp_outputs_policy policy,
		     struct cp_error *err)
{
	struct cp_error first = { 0 }, e;
	int failed = 0;

	/* Pass 0: the staged outputs; pass 1: those written where they are. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			if (!outs[i].out || cp_atomic_staged(outs[i].out) != (pass == 0))
				continue;
			memset(&e, 0, sizeof(e));
			if (write_one(&outs[i], &e) == 0)
				continue;
			if (!failed++)
				first = e;
			if (policy == CP_OUTPUTS_ALL_OR_NONE) {
				cp_outputs_abort(outs, n);
				pass = 2;
				break;
			}
		}
	}
	if (failed && err)
		*err = first;
	return failed ? -1 : 0;
}

int cp_outputs_publish(struct cp_output *outs, size_t n, struct cp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!outs[i].out)
			continue;
		int rc = cp_atomic_commit(outs[i].out, err);

		outs[i].out = NULL;
		if (rc) {
			cp_outputs_abort(outs, n);
			return -1;
		}
	}
	return 0;
}

void cp_outputs_abort(struct cp_output *outs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cp_atomic_abort(outs[i].out);
		outs[i].out = NULL;
	}
}
