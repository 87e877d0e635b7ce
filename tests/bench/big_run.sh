#!/bin/sh
# Memory and time of compare and report on huge run files (issue 12):
#   sh tests/bench/big_run.sh ./clockprof [MEASURES...]
# For each count, writes two run files of that many measures
# (tests/bench/gen_big_run.py) and prints, for `compare` (base against
# head) and `report` (base), the exit code (2: refused past the limit,
# CP_RUN_MAX_MEASURES), the peak RSS and the elapsed/user time (GNU time),
# the peak RSS over the bytes of input read, and the verdict against the
# goal: at most 4x the input (or, for a refused file, 400 MB) and 15 s.
# Figures, not a test: a loaded host moves the times.
set -e
clockprof=${1:-./clockprof}
shift || true
[ $# -gt 0 ] || set -- 100000 199999 1100000
here=$(dirname "$0")
dir=$(mktemp -d /tmp/clockprof-big.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# line WHAT N FILES INPUT_BYTES RC: one line from $dir/t ("RSS_KB ELAPSED USER").
line() {
	tail -n1 "$dir/t" | awk -v what="$1" -v n="$2" -v files="$3" -v bytes="$4" -v rc="$5" -v msg="$6" '{
		rss = $1 * 1024; ratio = rss / bytes
		ok = (rc == 2 ? rss <= 400e6 : ratio <= 4) && $2 <= 15
		printf "%-7s %8d measures, %d x %5.1f MB: rc %d, %5d MB RSS, %5.2fx input, %5.1f s elapsed, %5.1f s user  %s  %s\n",
			what, n, files, bytes / files / 1e6, rc, rss / 1e6, ratio, $2, $3,
			ok ? "goal met" : "GOAL MISSED", msg
	}'
}

for n in "$@"; do
	python3 "$here/gen_big_run.py" "$dir/base.json" "$n" 1
	python3 "$here/gen_big_run.py" "$dir/head.json" "$n" 2
	bytes=$(( $(stat -c %s "$dir/base.json") + $(stat -c %s "$dir/head.json") ))
	set +e
	/usr/bin/time -f "%M %e %U" -o "$dir/t" "$clockprof" compare --base "$dir/base.json" \
		--head "$dir/head.json" -o "$dir/verdict.json" >/dev/null 2>"$dir/err"
	rc=$?
	line compare "$n" 2 "$bytes" "$rc" "$(grep -m1 clockprof: "$dir/err")"
	bytes=$(stat -c %s "$dir/base.json")
	/usr/bin/time -f "%M %e %U" -o "$dir/t" "$clockprof" report "$dir/base.json" \
		-o "$dir/r.html" >/dev/null 2>"$dir/err"
	rc=$?
	line report "$n" 1 "$bytes" "$rc" "$(grep -m1 clockprof: "$dir/err" | grep -v wrote)"
	set -e
	rm -f "$dir"/*.json "$dir/r.html"
done
