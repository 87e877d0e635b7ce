/* duration.c - see duration.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "error.h"

static const struct {
	const char *suffix;
	double seconds;
} units[] = {
	{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "m", 60 }, { "h", 3600 },
};

int cp_parse_duration(const char *text, double *seconds, struct cp_error *err)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || errno || !isfinite(v) || v <= 0 || *text == '-' || *text == '+' ||
	    *text == ' ')
		goto bad;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			*seconds = v * units[i].seconds;
			if (*seconds > 366 * 86400.0)
				goto bad;
			return 0;
		}
	}
bad:
	return cp_fail(err, CP_EXIT_USAGE,
		       "invalid duration '%s': use seconds or a unit, e.g. 10, 2.5s, 500ms, 1m",
		       text);
}
