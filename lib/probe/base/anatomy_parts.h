/* anatomy_parts.h - the parts of cp_anatomy_judge (anatomy.c): the
 * shapes (anatomy_shapes.c) and the rule (anatomy_rule.c), each over the
 * requests sampled whole. */
#ifndef CP_ANATOMY_PARTS_H
#define CP_ANATOMY_PARTS_H

#include "anatomy.h"

/* The common shapes of whole[0..n) into out (shapes, other_requests).
 * 0, or -1 when out of memory. */
int cp_anatomy_shapes(const struct cp_anatomy_samples *in,
		      const struct cp_anatomy_request *const *whole, size_t n,
		      struct cp_anatomy *out);

/* The reusable reads of whole[0..n) into out (reusable, nreusable,
 * reusable_per_op), by out's reuse_gap_ns and reuse_share. 0, or -1 when
 * out of memory. */
int cp_anatomy_rule(const struct cp_anatomy_samples *in,
		    const struct cp_anatomy_request *const *whole, size_t n,
		    struct cp_anatomy *out);

/* The q-quantile (nearest rank) of v[0..n), which it sorts; 0 when empty. */
uint64_t cp_anatomy_rank(uint64_t *v, size_t n, double q);

/* Whether event ev is a read of a known read id. */
static inline bool cp_anatomy_is_read(const struct cp_anatomy_samples *in,
				      const struct cp_anatomy_event *ev)
{
	return ev->kind == CP_ANATOMY_READ && ev->what < in->nreads;
}

#endif
