#!/bin/sh
# check.sh DEB TARGETS OUT - `make check-deb` (called by .ci/run after make
# check): lintian finds no error or warning in DEB and its Depends names
# libbpf1 and libdw1; `apt-get install ./DEB` installs it
# with what it Depends on; the installed /usr/bin/clockprof gives its
# version, has its man page and completion, and runs the demo (tests/demo.sh,
# into OUT); `apt-get purge` removes every file again. Silent when all
# holds, so that .ci/run's last line stays the test summary; on a failure,
# the step that failed and the end of its log (OUT.log), exit 1.
set -eu
deb=$(realpath "$1") targets=$2 out=$3
log=$out.log
version=$(dpkg-deb -f "$deb" Version)
mkdir -p "$(dirname "$log")"
: > "$log"
export DEBIAN_FRONTEND=noninteractive

purge() { apt-get purge -y -q -o DPkg::Lock::Timeout=300 clockprof >>"$log" 2>&1; }
fail() {
	echo "check-deb: $*" >&2
	tail -n 20 "$log" >&2
	if dpkg-query -W -f='${Status}' clockprof 2>/dev/null | grep -q 'ok installed'; then
		purge || :
	fi
	exit 1
}
step() { what=$1; shift; "$@" >>"$log" 2>&1 || fail "$what failed: $*"; }

# Never replace, then purge, a clockprof the machine had installed.
if dpkg-query -W -f='${Status}' clockprof 2>/dev/null | grep -q 'ok installed'; then
	echo "check-deb: a clockprof package is installed already; remove it first (apt-get purge clockprof)" >&2
	exit 1
fi
if command -v lintian >/dev/null; then
	step "lintian" lintian --fail-on error,warning "$deb"
else
	echo "check-deb: lintian is not installed (make test-deps installs it); not run" >>"$log"
fi
# Debian's security updates of libbpf and elfutils reach clockprof only
# when it links their shared libraries.
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libbpf1 libdw1; do
	case ", $depends," in *", $lib "*|*", $lib,"*) ;; *) fail "Depends does not name $lib: $depends" ;; esac
done
step "install" apt-get install -y -q -o DPkg::Lock::Timeout=300 "$deb"
[ "$(/usr/bin/clockprof --version)" = "clockprof $version" ] ||
	fail "/usr/bin/clockprof --version: '$(/usr/bin/clockprof --version)', not 'clockprof $version'"
[ "$(man -w clockprof 2>/dev/null)" = /usr/share/man/man1/clockprof.1.gz ] ||
	fail "man -w clockprof: '$(man -w clockprof 2>&1)'"
step "the completion" bash -c '. /usr/share/bash-completion/completions/clockprof && complete -p clockprof'
step "the demo" sh tests/demo.sh /usr/bin/clockprof "$targets" "$out"
[ -s "$out/run.json" ] || fail "the demo wrote no $out/run.json"
step "purge" purge
for f in /usr/bin/clockprof /usr/share/man/man1/clockprof.1.gz \
	/usr/share/bash-completion/completions/clockprof /usr/share/doc/clockprof; do
	[ ! -e "$f" ] || fail "$f is still there after the purge"
done
