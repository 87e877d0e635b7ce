/* callsites_lib_target.c - reads the clock through its own shared library:
 * per request 2 reads, both with call site lib_read_clock in
 * libcallsites.so (found next to the program through its rpath). */
#include "callsites_common.h"

long lib_read_clock(void);

static volatile long sink;

NOINLINE void handle_request(long i)
{
	sink += lib_read_clock() + i;
	sink += lib_read_clock();
}

int main(int argc, char **argv)
{
	return callsites_main(argc, argv, handle_request);
}
