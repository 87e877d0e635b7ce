/* leader_exit_target.c - a process whose main thread exits (pthread_exit)
 * while another serves on, and that loads a library after it did. Its
 * /proc/PID then shows no memory: the maps read empty, and root,
 * map_files and mem are gone, though the process lives.
 *
 *   leader_exit_target LIBRARY REQUESTS_BEFORE REQUESTS_AFTER
 *
 * The main thread starts the worker, waits for a line on stdin (or its
 * end: at once from /dev/null) and exits. The worker waits until it has,
 * serves REQUESTS_BEFORE requests (handle_request: one clock_gettime),
 * loads LIBRARY (dl_clock.c: three reads a call, two of them through its
 * own gettimeofday PLT stub), prints "loaded", pauses 300 ms (a profiler
 * that follows dlopen probes it meanwhile), serves REQUESTS_AFTER
 * requests (four reads each) and ends the process. Every read comes after
 * the main thread's exit: a profiler attached before that line counts
 * them all. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dl_requests.h"

static char **args;

/* The main thread's state letter, from the process's stat line. */
static char leader_state(void)
{
	char buf[512], *end;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	end = strrchr(buf, ')');
	return end && end[1] && end[2] ? end[2] : '?';
}

static void *worker(void *unused)
{
	struct timespec tick = { 0, 1000000 };
	void *h;

	(void)unused;
	while (leader_state() != 'Z')
		nanosleep(&tick, NULL);
	serve(atol(args[2]));
	h = dlopen(args[1], RTLD_NOW);
	if (!h || !(*(void **)&lib_read = dlsym(h, "dl_clock_read"))) {
		fprintf(stderr, "leader_exit_target: %s\n", dlerror());
		exit(1);
	}
	printf("loaded\n");
	fflush(stdout);
	usleep(300000);
	serve(atol(args[3]));
	exit(0);
}

int main(int argc, char **argv)
{
	pthread_t t;
	char line[16];

	if (argc != 4) {
		fprintf(stderr, "usage: leader_exit_target LIBRARY REQUESTS_BEFORE REQUESTS_AFTER\n");
		return 2;
	}
	args = argv;
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	pthread_exit(NULL);
}
