// chrono_target.cpp - a C++ reference target: per request, K reads of
// std::chrono::steady_clock::now() (clock_gettime CLOCK_MONOTONIC) and K of
// std::chrono::system_clock::now() (clock_gettime CLOCK_REALTIME), both
// through libstdc++.
//
//   chrono_target K [REQUESTS]
#include <chrono>
#include <cstdlib>
#include <ctime>

static volatile long sink;
static int k;

__attribute__((noinline)) void handle_request()
{
	for (int i = 0; i < k; i++) {
		sink += std::chrono::steady_clock::now().time_since_epoch().count();
		sink += std::chrono::system_clock::now().time_since_epoch().count();
	}
}

int main(int argc, char **argv)
{
	const struct timespec gap = { 0, 1000000 };
	long requests;

	if (argc < 2)
		return 2;
	k = std::atoi(argv[1]);
	requests = argc > 2 ? std::atol(argv[2]) : 0;
	for (long i = 0; requests == 0 || i < requests; i++) {
		handle_request();
		nanosleep(&gap, nullptr);
	}
	return 0;
}
