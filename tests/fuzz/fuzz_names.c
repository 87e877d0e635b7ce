/* fuzz_names.c - symbol names from the target's ELF files: the demangler
 * (C++ and both Rust schemes, through libiberty, plus clockprof's own
 * clean-up of Rust names) and the escaping every printed name goes
 * through. */
#include "demangle.h"
#include "escape_display.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[512], *s = fuzz_string(data, size), *d;

	if (!s)
		return 0;
	d = cp_demangle(s);
	if (d)
		cp_escape_display(buf, sizeof(buf), d, 200);
	free(d);
	cp_escape_display(buf, sizeof(buf), s, 100);
	cp_escape_display(buf, 7, s, 3);
	free(s);
	return 0;
}
