#!/usr/bin/env bash
# Builds the taskscope .deb with Debian's own tools and checks it with lintian.
#   packaging/build-deb.sh            -> build/packages/taskscope_*.deb and
#                                        nomad-driver-taskscope_*.deb
#   packaging/build-deb.sh --prebuilt DIR
#                                     the same packages from DIR, a tree that
#                                     scripts/build.sh already compiled with
#                                     Debian's flags (scripts/debian-flags.sh):
#                                     dpkg-buildpackage installs, strips and
#                                     describes it without compiling again (the
#                                     system tier's way: one compile per run)
# The build runs in a scratch copy of the working tree (packaging/debian
# copied to debian/), so the repository stays clean. Needs root on
# Debian 12 only to apt-get the packaging tools when they are missing;
# the build dependencies come from scripts/install-deps.sh.
# Env: BUILD_DIR (default build/), DEB_BUILD_OPTIONS (e.g. nocheck).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/suites.sh"
# The suite this runs on decides the package's dependencies (its own
# dpkg-shlibdeps) and version suffix: Debian 12 builds here, Debian 13 in
# its build root (scripts/suite-build.sh).
suite=$(suite_of_host)
suite_require "$suite" build-deb
out=${BUILD_DIR:-$root/build}/packages
prebuilt=""
case "${1:-}" in
"") ;;
--prebuilt)
	prebuilt=$(realpath -e "${2:?--prebuilt takes the build directory}")
	[ -f "$prebuilt/CMakeCache.txt" ] || { echo "build-deb: $prebuilt is not a CMake build directory" >&2; exit 2; }
	# The package must hold Debian's hardening and layout: refuse a tree configured otherwise.
	grep -qx "TASKSCOPE_UNITDIR:PATH=$(suite_unitdir "$suite")" "$prebuilt/CMakeCache.txt" || {
		echo "build-deb: $prebuilt was not configured with scripts/debian-flags.sh (run scripts/build.sh)" >&2
		exit 2
	}
	;;
*) echo "usage: $0 [--prebuilt BUILD_DIR]" >&2; exit 2 ;;
esac

# A suite's build root (scripts/suite-root.sh) was made with every package
# the build needs; elsewhere the setup script brings what is missing.
[ "${TASKSCOPE_SUITE_ROOT:-}" = 1 ] || bash "$root/scripts/install-deps.sh" debhelper dpkg-dev lintian fakeroot >/dev/null

scratch=$(mktemp -d "${TMPDIR:-/tmp}/taskscope-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
src=$scratch/taskscope-0.1.0
mkdir -p "$src"
# The working tree as it is (tracked and untracked files), without build
# output, VCS data or a debian/ left from an earlier manual build.
tar -C "$root" --exclude=./build --exclude='./build-*' --exclude=./.git \
	--exclude=./debian --exclude='./obj-*' -cf - . | tar -C "$src" -xf -
cp -r "$root/packaging/debian" "$src/debian"
version=$(bash "$root/packaging/deb-version.sh" "$root" "$suite")
# The build's own changelog entry on top of the committed one: its version
# sorts after every earlier build's (scripts: packaging/deb-version.sh).
{
	printf 'taskscope (%s) %s; urgency=medium\n\n' "$version" "$suite"
	printf '  * Built from %s for Debian %s (%s).\n\n' "$(git -C "$root" describe --always --dirty 2>/dev/null || echo "a source tree without git")" "$(suite_number "$suite")" "$suite"
	printf ' -- %s  %s\n\n' "$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$root/packaging/debian/changelog" | head -n1)" "$(date -R)"
	cat "$root/packaging/debian/changelog"
} >"$src/debian/changelog"

echo "build-deb: dpkg-buildpackage $version for $suite in $src${prebuilt:+ (prebuilt: $prebuilt)}"
(cd "$src" && TASKSCOPE_PREBUILT=$prebuilt dpkg-buildpackage -us -uc -b) >"$scratch/build.log" 2>&1 || {
	tail -n 60 "$scratch/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log above)" >&2
	exit 1
}
grep -E '(tests passed|tests failed)' "$scratch/build.log" || true

mkdir -p "$out"
rm -f "$out"/taskscope_*.deb "$out"/taskscope-dbgsym_*.deb "$out"/nomad-driver-taskscope*.deb
cp "$scratch"/taskscope_*.deb "$scratch"/nomad-driver-taskscope_*.deb "$out/"
cp "$scratch"/taskscope-dbgsym_*.deb "$scratch"/nomad-driver-taskscope-dbgsym_*.deb "$out/" 2>/dev/null || true
cp "$scratch"/taskscope_*.changes "$scratch"/taskscope_*.buildinfo "$out/" 2>/dev/null || true
deb=$(ls "$out"/taskscope_*.deb "$out"/nomad-driver-taskscope_*.deb)
echo "build-deb: "$deb

echo "build-deb: lintian"
# --fail-on error: warnings are reported, errors fail the build.
lintian --fail-on error --info --display-info $deb | tee "$out/lintian.txt"
echo "build-deb: lintian: $(grep -c '^E:' "$out/lintian.txt" || true) errors, $(grep -c '^W:' "$out/lintian.txt" || true) warnings"
