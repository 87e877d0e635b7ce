/* metrics_sink.c - see metrics_sink.h. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "buf.h"
#include "error.h"
#include "metrics_serve.h"
#include "metrics_sink.h"

void cp_metrics_sink_init(struct cp_metrics_sink *k, const char *file, size_t max_sites)
{
	struct stat st;

	memset(k, 0, sizeof(*k));
	k->state.max_sites = max_sites;
	k->file = file;
	k->file_each_interval = file && strcmp(file, "-") &&
				(lstat(file, &st) ? errno == ENOENT : S_ISREG(st.st_mode));
}

/* Renders p into b, gives it to the server; -1 when out of memory. */
static int render(struct cp_metrics_sink *k, const struct cp_profile *p, struct cp_buf *b,
		  struct cp_error *err)
{
	cp_metrics_render(&k->state, p, b);
	if (b->failed)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory rendering the metrics");
	if (k->server)
		cp_metrics_serve_send(k->server, b->data, b->len);
	return 0;
}

int cp_metrics_sink_interval(struct cp_metrics_sink *k, const struct cp_profile *p,
			     struct cp_error *err)
{
	struct cp_buf b = { 0 };
	int rc = render(k, p, &b, err);

	if (!rc && k->file_each_interval && cp_write_file_atomic(k->file, b.data, b.len, err)) {
		k->failures++;
		rc = -1;
	}
	cp_buf_free(&b);
	return rc;
}

void cp_metrics_sink_live(struct cp_metrics_sink *k, const struct cp_profile *p)
{
	struct cp_buf b = { 0 };

	if (k->server)
		render(k, p, &b, NULL);
	cp_buf_free(&b);
}

int cp_metrics_sink_final(struct cp_metrics_sink *k, const struct cp_profile *p, FILE *f,
			  struct cp_error *err)
{
	struct cp_buf b = { 0 };
	int rc = render(k, p, &b, err);

	if (!rc && f)
		fwrite(b.data, 1, b.len, f);
	cp_buf_free(&b);
	return rc;
}

void cp_metrics_sink_release(struct cp_metrics_sink *k)
{
	cp_metrics_serve_stop(k->server);
	k->server = NULL;
	cp_metrics_state_free(&k->state);
}
