// callsites_cpp_target.cpp - C++ call sites: template names holding <, >,
// &, :: and reads through libstdc++'s std::chrono clocks.
//
// Per request (handle_request):
//   app::Timer<int>::elapsed(std::vector<int> const&)          1 steady_clock::now
//   app::Timer<std::string>::elapsed(std::vector<std::string> const&) 1 steady_clock::now
//   app::wall_seconds()                                        1 system_clock::now
// = 3 reads, each through std::chrono::*::now -> libc clock_gettime -> vDSO.
// serve<Req<int> >, a function template that reads no clock, is called
// once per request: a boundary whose demangled name carries a return type
// ("long serve<Req<int> >(Req<int>)") that users do not write; noipa: no
// clone (".isra") takes its calls.
#include <chrono>
#include <string>
#include <vector>

extern "C" {
#include "callsites_common.h"
}

static volatile long sink;

namespace app {

template <typename T> struct Timer {
	NOINLINE static long elapsed(const std::vector<T> &items)
	{
		auto t = std::chrono::steady_clock::now(); // SITE:Timer::elapsed
		return (long)items.size() + (long)t.time_since_epoch().count();
	}
};

NOINLINE long wall_seconds()
{
	auto t = std::chrono::system_clock::now(); // SITE:wall_seconds
	return (long)t.time_since_epoch().count();
}

} // namespace app

template <typename T> struct Req {
	T id;
};

template <typename R> __attribute__((noipa)) long serve(R r)
{
	return (long)r.id;
}

extern "C" NOINLINE void handle_request(long i)
{
	static const std::vector<int> ints{1, 2, 3};
	static const std::vector<std::string> strings{"a", "b"};

	sink += app::Timer<int>::elapsed(ints) + i;
	sink += app::Timer<std::string>::elapsed(strings);
	sink += app::wall_seconds();
	sink += serve(Req<int>{(int)i});
}

int main(int argc, char **argv)
{
	return callsites_main(argc, argv, handle_request);
}
