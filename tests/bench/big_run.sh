#!/bin/sh
# Memory and time of compare and report on huge run files (issue 12):
#   sh tests/bench/big_run.sh ./clockprof [MEASURES...]
# For each count, writes two run files of that many measures
# (tests/bench/gen_big_run.py) and prints the input size, the peak RSS and
# the elapsed/user time of `compare` and `report` (GNU time), and the exit
# code (2: refused by the limit, CP_RUN_MAX_MEASURES). Figures, not a test.
set -e
clockprof=${1:-./clockprof}
shift || true
[ $# -gt 0 ] || set -- 100000 199999 1100000
here=$(dirname "$0")
dir=$(mktemp -d /tmp/clockprof-big.XXXXXX)
trap 'rm -rf "$dir"' EXIT
for n in "$@"; do
	python3 "$here/gen_big_run.py" "$dir/base.json" "$n" 1
	python3 "$here/gen_big_run.py" "$dir/head.json" "$n" 2
	mb=$(du -m "$dir/base.json" | cut -f1)
	set +e
	/usr/bin/time -f "%M %e %U" -o "$dir/t" "$clockprof" compare --base "$dir/base.json" \
		--head "$dir/head.json" -o "$dir/verdict.json" >/dev/null 2>"$dir/err"
	rc=$?
	printf 'compare %8d measures, 2 x %4d MB: rc %d, %6d MB RSS, %6.1f s elapsed, %6.1f s user  %s\n' \
		"$n" "$mb" "$rc" $(tail -n1 "$dir/t" | awk '{print int($1/1024), $2, $3}') "$(grep -m1 clockprof: "$dir/err")"
	/usr/bin/time -f "%M %e %U" -o "$dir/t" "$clockprof" report "$dir/base.json" \
		-o "$dir/r.html" >/dev/null 2>"$dir/err"
	rc=$?
	printf 'report  %8d measures, 1 x %4d MB: rc %d, %6d MB RSS, %6.1f s elapsed, %6.1f s user  %s\n' \
		"$n" "$mb" "$rc" $(tail -n1 "$dir/t" | awk '{print int($1/1024), $2, $3}') "$(grep -m1 clockprof: "$dir/err" | grep -v wrote)"
	set -e
	rm -f "$dir"/*.json "$dir/r.html"
done
