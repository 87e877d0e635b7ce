#!/bin/sh
# make demo: profile the bundled demo target (a small request loop whose
# clock reads per request are known: tests/targets/callsites_target.c) for
# three seconds with --anatomy, print the summary and write the run file.
# The README's sample output is this script's, kept in step by
# tests/integration/test_demo.py.
set -e
clockprof=$1
targets=$2
out=${3:-build/demo}
mkdir -p "$out"
set -- "$clockprof" run -d 3 -r func:handle_request --anatomy -o "$out/run.json"
if "$clockprof" report --help >/dev/null 2>&1; then
	set -- "$@" --html "$out/report.html"
fi
cat >&2 <<TEXT
The demo target (tests/targets/callsites_target.c) serves requests in a
loop; each request (handle_request) reads the clock 7 times, by
construction: clock_gettime 4 times (2 of them in now_ns, inlined into
handle_request; 1 through timespec_get), gettimeofday 2, time 1. The right
answer is 7.000 reads per request, from the call sites below. 2 of them
could reuse the value of the read just before, only a call between them:
read_mono's (now_ns's first) and read_wall_twice's second (its first). The
last, after a syscall (the request's I/O), could not.

TEXT
echo "\$ clockprof run -d 3 -r func:handle_request --anatomy -o $out/run.json --html $out/report.html -- callsites_target" >&2
# sh has no pipefail: clockprof's own status is kept apart from the pipe's.
status=0
"$@" -- "$targets/callsites_target" 0 500 > "$out/summary.raw" || status=$?
grep -v '^ready ' "$out/summary.raw" | tee "$out/summary.txt"
per_op=$(awk '$1 == "total" { print $3; exit }' "$out/summary.txt")
reusable=$(awk '/ could go in all / { print $1; exit }' "$out/summary.txt")
echo >&2
if [ "$status" -ne 0 ]; then
	echo "result: clockprof failed (exit $status)" >&2
	exit "$status"
fi
if [ "$per_op" = "7.000/op" ]; then
	echo "result: 7.000 reads per request, as constructed" >&2
else
	echo "result: ${per_op:-no} reads per request, where 7.000 were constructed" >&2
	exit 1
fi
# the reads that could go: judged only where the patch counts (the summary
# says why not elsewhere)
if [ "$reusable" = "2.000" ]; then
	echo "result: 2.000 of them could reuse an earlier value, as constructed" >&2
elif [ -n "$reusable" ]; then
	echo "result: $reusable reads per request could reuse an earlier value, where 2.000 were constructed" >&2
	exit 1
fi
echo "wrote $out/run.json$( [ -f "$out/report.html" ] && echo " and $out/report.html")" >&2
