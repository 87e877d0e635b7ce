/* pagefault_target.c - a reference target for the software counters: each
 * request touches exactly K pages it has never touched, so page-faults:u/op
 * is K by construction.
 *
 *   pagefault_target K [REQUESTS]
 *
 * A request is one call of handle_request() (the boundary probe
 * func:handle_request counts them). It maps K fresh anonymous pages, writes
 * one byte to each (one minor fault per page: transparent huge pages are
 * switched off for the mapping, and fault-around applies to files only) and
 * unmaps them, so the next request faults afresh. Nothing else in the loop
 * faults: the code, the stack and libc's pages are touched by a warm-up
 * request first. Requests come at most one per millisecond. REQUESTS = 0
 * (the default) serves until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long page_size;

__attribute__((noinline)) int handle_request(long k)
{
	size_t len = (size_t)k * (size_t)page_size;
	volatile char *p;

	if (k == 0)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	for (long i = 0; i < k; i++)
		p[i * page_size] = 1;
	munmap((void *)p, len);
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec gap = { 0, 1000000 };
	long k, requests;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: pagefault_target K [REQUESTS]\n");
		return 2;
	}
	k = atol(argv[1]);
	requests = argc > 2 ? atol(argv[2]) : 0;
	page_size = sysconf(_SC_PAGESIZE);
	if (k < 0 || requests < 0) {
		fprintf(stderr, "pagefault_target: K and REQUESTS must be >= 0\n");
		return 2;
	}
	/* Warm-up, not a request: fault in everything the loop uses. */
	if (handle_request(k)) {
		perror("pagefault_target: mmap");
		return 1;
	}
	nanosleep(&gap, NULL);
	for (long i = 0; requests == 0 || i < requests; i++) {
		if (handle_request(k)) {
			perror("pagefault_target: mmap");
			return 1;
		}
		nanosleep(&gap, NULL);
	}
	return 0;
}
