/* churn_target.c - a target that never settles, for --interval's memory
 * bench (tests/bench/churn_rss.py): everything that could make clockprof's
 * state grow with time keeps coming.
 *
 *   churn_target LIB PERIOD_S DIR
 *
 * Every PERIOD_S seconds it copies LIB (libdl_clock.so) to a new file in
 * DIR (kept: a deleted file could not be probed; the caller removes DIR) and
 * dlopens it (a new module: new call sites), ~100 threads a second are
 * born, read the clock and die, and a child process is forked every second
 * (reads the clock, exits). Runs until killed. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

static void *short_thread(void *arg)
{
	struct timespec ts;

	(void)arg;
	for (int i = 0; i < 3; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
	return NULL;
}

/* A copy of lib under a new name: the loader maps it as a new module. */
static void *load_copy(const char *lib, const char *dir, int n)
{
	char path[4096];
	struct stat st;
	int in = open(lib, O_RDONLY), out;
	void *h = NULL;

	snprintf(path, sizeof(path), "%s/libchurn%d.so", dir, n);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in >= 0 && out >= 0 && fstat(in, &st) == 0 &&
	    sendfile(out, in, NULL, (size_t)st.st_size) == st.st_size) {
		close(out);
		out = -1;
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return h;
}

static void fork_child(void)
{
	pid_t pid = fork();
	struct timespec ts;

	if (pid == 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		_exit(0);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(int argc, char **argv)
{
	void (*read_fn)(void) = NULL;
	double period = argc > 2 ? atof(argv[2]) : 60;
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	long loops = 0, per_lib = (long)(period * 100), n = 0;

	if (argc < 4 || period <= 0) {
		fprintf(stderr, "usage: churn_target LIB PERIOD_S DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	for (;; loops++) {
		pthread_t t;

		if (loops % per_lib == 0) {
			void *h = load_copy(argv[1], argv[3], (int)n++);

			read_fn = h ? (void (*)(void))dlsym(h, "dl_clock_read") : read_fn;
		}
		if (read_fn)
			read_fn();
		if (pthread_create(&t, NULL, short_thread, NULL) == 0)
			pthread_detach(t);
		if (loops % 100 == 0)
			fork_child();
		nanosleep(&tick, NULL);
	}
}
