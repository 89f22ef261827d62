#!/usr/bin/env bash
# Builds the taskscope .rpm with rpmbuild (Debian's `rpm` package) from a
# tarball of the working tree and lists it with `rpm -qlp`.
#   packaging/build-rpm.sh            -> build/packages/taskscope-*.rpm
# The BuildRequires are Fedora names that rpm cannot check on Debian (its
# database is empty here; dpkg holds the real ones, from
# scripts/install-deps.sh), so rpmbuild runs with --nodeps.
# The tarball is the working tree, not `git archive HEAD`: HEAD's CMake
# lists files that are not committed yet (the streamer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${BUILD_DIR:-$root/build}/packages
version=0.1.0

if ! command -v rpmbuild >/dev/null; then
	echo "build-rpm: installing rpm"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends rpm >/dev/null
fi
bash "$root/scripts/install-deps.sh" >/dev/null

top=$(mktemp -d "${TMPDIR:-/tmp}/taskscope-rpm.XXXXXX")
trap 'rm -rf "$top"' EXIT
mkdir -p "$top"/{SOURCES,SPECS,BUILD,RPMS,SRPMS}
tar -C "$root" --exclude=./build --exclude='./build-*' --exclude=./.git \
	--exclude=./debian --exclude='./obj-*' \
	--transform "s,^\.,taskscope-$version," -czf "$top/SOURCES/taskscope-$version.tar.gz" .
cp "$root/packaging/rpm/taskscope.spec" "$top/SPECS/"

echo "build-rpm: rpmbuild in $top"
rpmbuild --nodeps --define "_topdir $top" -bb "$top/SPECS/taskscope.spec" >"$top/build.log" 2>&1 || {
	tail -n 60 "$top/build.log" >&2
	echo "build-rpm: rpmbuild failed (log above)" >&2
	exit 1
}
mkdir -p "$out"
rm -f "$out"/taskscope-*.rpm
cp "$top"/RPMS/*/taskscope-*.rpm "$out/"
rpm=$(ls "$out"/taskscope-$version-*.rpm)
echo "build-rpm: $rpm"
rpm -qip "$rpm" | sed -n '/^Name/p;/^Version/p;/^Release/p;/^Architecture/p;/^License/p'
echo "build-rpm: rpm -qlp"
rpm -qlp "$rpm"
echo "build-rpm: scriptlets"
rpm -qp --scripts "$rpm"
