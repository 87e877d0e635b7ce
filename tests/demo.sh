#!/bin/sh
# make demo: profile the bundled demo target (a small request loop whose
# clock reads per request are known: tests/targets/callsites_target.c) for
# three seconds, print the summary and write the run file.
set -e
clockprof=$1
targets=$2
out=${3:-build/demo}
mkdir -p "$out"
set -- "$clockprof" run -d 3 -r func:handle_request --stacks -o "$out/run.json"
if "$clockprof" report --help >/dev/null 2>&1; then
	set -- "$@" --html "$out/report.html"
fi
echo "\$ clockprof run -d 3 -r func:handle_request --stacks -o $out/run.json --html $out/report.html -- callsites_target" >&2
"$@" -- "$targets/callsites_target" 0 500 | grep -v '^ready '
echo >&2
echo "wrote $out/run.json$( [ -f "$out/report.html" ] && echo " and $out/report.html")" >&2
