#!/usr/bin/env bash
# suite-root.sh SUITE: makes (or reuses) a build root of that Debian suite
# from nothing, as sbuild does: mmdebstrap's buildd variant with the
# suite's build, go-plugin and packaging packages (scripts/suites.sh). The
# Debian 12 machine builds, tests and packages Debian 13 in such a root
# (scripts/suite-build.sh). Prints the root's path as its last line.
#   TASKSCOPE_SUITE_ROOTS  where roots live (default /var/cache/taskscope-suites)
#   TASKSCOPE_TESTBED_DEBS downloaded .debs kept between builds (time only)
set -euo pipefail
trap 'echo "suite-root: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/suites.sh"
suite=${1:?usage: suite-root.sh SUITE}
suite_require "$suite" suite-root
say() { echo "suite-root: $*" >&2; }

pkgs=("${suite_build_deps[@]}" "${suite_goplugin_deps[@]}" "${suite_package_deps[@]}" "${suite_bus_deps[@]}")
key=$({ echo "$suite"; printf '%s\n' "${pkgs[@]}"; sha256sum <"$here/suite-root.sh"; } | sha256sum | cut -c1-12)
cache=${TASKSCOPE_SUITE_ROOTS:-/var/cache/taskscope-suites}
out=$cache/$suite-$key
if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
[ -f "$out/.complete" ] && { echo "$out"; exit 0; }
rm -rf "$out"
mapfile -t mirrors < <(suite_mirrors "$suite") || { say "no Debian mirror found in /etc/apt"; exit 1; }
debs=${TASKSCOPE_TESTBED_DEBS:-$cache/debs}/$suite-root
mkdir -p "$debs"
t0=$SECONDS
say "mmdebstrap --variant=buildd $suite (${#pkgs[@]} packages)"
mmdebstrap --quiet --variant=buildd --mode=root --format=directory \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
	--setup-hook="sync-in $debs /var/cache/apt/archives/" \
	--customize-hook="sync-out /var/cache/apt/archives $debs" \
	--include="$(IFS=,; echo "${pkgs[*]}")" \
	--aptopt='APT::Install-Recommends "false"' \
	--aptopt='Acquire::Languages "none"' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	"$suite" "$out" "${mirrors[@]}" >&2 || { say "mmdebstrap failed (its output is above)"; rm -rf "$out"; exit 1; }
rm -f "$out"/var/cache/apt/archives/*.deb
touch "$out/.complete"
# Keep the two newest roots of the suite (a root is a plain directory: its
# mounts live only in suite-run.sh's private namespace).
ls -1dt "$cache/$suite"-*/ 2>/dev/null | tail -n +3 | while read -r old; do
	findmnt -rno TARGET | grep -q "^${old%/}" || rm -rf "$old"
done
say "$suite root in $((SECONDS - t0)) s: $out"
echo "$out"
