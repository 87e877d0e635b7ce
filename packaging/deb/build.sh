#!/bin/sh
# build.sh VERSION DIR OUT.deb - `make deb`: clockprof's Debian package, laid
# out in DIR (a debian/ tree as debhelper would leave it) and built with the
# dpkg tools themselves: dpkg-shlibdeps finds the shared libraries the
# binary needs (${shlibs:Depends}: libbpf1, libdw1, libjansson4 and the
# others it links; any added later is picked up the same way),
# dpkg-gencontrol writes DEBIAN/control from packaging/deb/control, and
# dpkg-deb builds the file, owned by root without fakeroot.
set -eu
version=$1 dir=$2 out=$3
pkg=$dir/debian/clockprof
doc=$pkg/usr/share/doc/clockprof
here=$(dirname "$0")

rm -rf "$dir"
mkdir -p "$dir/debian" "$doc"
cp "$here/control" "$dir/debian/control"
install -D -m 0755 clockprof "$pkg/usr/bin/clockprof"
# Debian ships binaries stripped; clockprof's self-test probes its own code
# by address, not by symbol, so it needs no symbol table.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$pkg/usr/bin/clockprof"
install -D -m 0644 "${BUILD:-build}/clockprof.1" "$pkg/usr/share/man/man1/clockprof.1"
gzip -9n "$pkg/usr/share/man/man1/clockprof.1"
install -D -m 0644 "${BUILD:-build}/clockprof.bash" "$pkg/usr/share/bash-completion/completions/clockprof"
install -m 0644 "$here/copyright" "$doc/copyright"
install -D -m 0644 "$here/lintian-overrides" "$pkg/usr/share/lintian/overrides/clockprof"
install -m 0644 README.md "$doc/README.md"
mkdir -p "$doc/docs/examples" "$doc/examples"
install -m 0644 docs/*.md "$doc/docs/"
install -m 0644 docs/examples/* "$doc/docs/examples/"
# The CI workflow to copy and the bounds file it starts from.
install -m 0644 examples/* "$doc/examples/"
gzip -9n "$doc/README.md"
# A native package's changelog, in Debian's format (dpkg-gencontrol reads
# the version from it): the project's own CHANGELOG.md goes beside it.
cat > "$dir/debian/changelog" <<END
clockprof ($version) unstable; urgency=medium

  * Release $version; see /usr/share/doc/clockprof/changelog.md.gz.

 -- $(sed -n 's/^Maintainer: //p' "$here/control")  $(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
END
install -m 0644 CHANGELOG.md "$doc/changelog.md"
gzip -9n "$doc/changelog.md"
gzip -9n -c "$dir/debian/changelog" > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
(
	cd "$dir"
	mkdir -p debian/clockprof/DEBIAN
	dpkg-shlibdeps -Tdebian/clockprof.substvars debian/clockprof/usr/bin/clockprof
	dpkg-gencontrol -pclockprof -Tdebian/clockprof.substvars -Pdebian/clockprof
)
# md5sums, as dh_md5sums writes them.
(cd "$pkg" && find usr -type f -exec md5sum {} + | sort -k2 > DEBIAN/md5sums)
chmod 0644 "$pkg/DEBIAN/md5sums" "$pkg/DEBIAN/control"
find "$pkg" -type d -exec chmod 0755 {} +
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$out" >/dev/null
echo "wrote $out"
