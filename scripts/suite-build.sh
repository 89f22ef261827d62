#!/usr/bin/env bash
# suite-build.sh SUITE BUILD_DIR [unit|bus|package]...: in SUITE's build
# root (scripts/suite-root.sh, made from nothing with mmdebstrap), compiles
# this tree into BUILD_DIR with that suite's compiler and libraries and
# Debian's flags (scripts/build.sh), then for each step named:
#   unit     the unit tier (ctest -L unit)
#   bus      the bus tier (ctest -L bus; a private dbus-daemon of the suite)
#   package  the .debs, from that very compile, with the suite's own
#            dpkg-shlibdeps and lintian (packaging/build-deb.sh --prebuilt),
#            into BUILD_DIR/packages
# Without steps: package. This is how the Debian 12 machine builds, tests
# and packages Debian 13 (and the other way round).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
. "$here/suites.sh"
suite=${1:?usage: suite-build.sh SUITE BUILD_DIR [unit|bus|package]...}
build=${2:?usage: suite-build.sh SUITE BUILD_DIR [unit|bus|package]...}
shift 2
suite_require "$suite" suite-build
steps=("$@")
((${#steps[@]})) || steps=(package)
mkdir -p "$build"
build=$(realpath -e "$build")

# "timing:" lines, also kept in BUILD_DIR/timings.txt for CI's table
# (scripts/ci-times.sh): ctest shows a passing test's output to nobody.
timing() { echo "timing: $1 $2" | tee -a "$build/timings.txt"; }
t=$SECONDS
bash "$here/suite-root.sh" "$suite" >/dev/null
timing suite.root $((SECONDS - t))
t=$SECONDS
rc=0
TASKSCOPE_SUITE_BIND=$build bash "$here/suite-run.sh" "$suite" bash -c '
	set -euo pipefail
	src=$1 build=$2; shift 2
	cd "$src"
	git config --global --add safe.directory "$src" 2>/dev/null || true
	t=$SECONDS
	BUILD_DIR=$build bash scripts/build.sh
	echo "timing: suite.build $((SECONDS - t))" | tee -a "$build/timings.txt"
	rc=0
	for step in "$@"; do
		t=$SECONDS
		case "$step" in
		unit | bus) ctest --test-dir "$build" -L "^$step\$" --output-on-failure -j2 --output-junit "$build/ctest-$step.xml" || rc=1 ;;
		package) BUILD_DIR=$build DEB_BUILD_OPTIONS="nocheck parallel=2" bash packaging/build-deb.sh --prebuilt "$build" || rc=1 ;;
		*) echo "suite-build: unknown step $step" >&2; exit 2 ;;
		esac
		echo "timing: suite.$step $((SECONDS - t))" | tee -a "$build/timings.txt"
	done
	exit $rc
' suite-build "$src" "$build" "${steps[@]}" || rc=$?
echo "suite-build: $suite in $((SECONDS - t)) s, rc=$rc"
exit $rc
