/* fuzz_options.c - the command-line values clockprof parses itself: a
 * duration, a request spec (func:/syscall:), a --probe spec and a perf
 * event list. The first byte picks the parser. */
#include "duration.h"
#include "error.h"
#include "fuzz_common.h"
#include "perf_event_names.h"
#include "request_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cp_request_spec spec;
	struct cp_func_spec func;
	struct cp_event_spec *events = NULL;
	struct cp_error err;
	size_t n = 0;
	double seconds;
	char *s;

	if (size < 1 || !(s = fuzz_string(data + 1, size - 1)))
		return 0;
	switch (data[0] % 4) {
	case 0:
		cp_parse_duration(s, &seconds, &err);
		break;
	case 1:
		cp_request_spec_parse(s, &spec, &err);
		break;
	case 2:
		cp_func_spec_parse(s, &func, "--probe", &err);
		break;
	default:
		if (cp_events_parse(s, &events, &n, &err) == 0)
			free(events);
		break;
	}
	free(s);
	return 0;
}
