#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs all three
# tiers (unit, bus, system). Extra arguments go to ctest, e.g. -L unit.
#   --all-variants (first argument): the cgroup v1 guest also runs the tests
#   whose behaviour is the same there (each test's "# variants:" line says;
#   tests/README.md). CI runs without it; run it on demand or on a schedule.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [[ "${1:-}" == --all-variants ]]; then
	export TASKSCOPE_ALL_VARIANTS=1
	shift
fi
t=$SECONDS
bash "$root/scripts/install-deps.sh"
echo "timing: test.deps $((SECONDS - t))"
if [[ "${1:-}" == --sanitize ]]; then
	shift
	exec bash "$root/scripts/test-sanitize.sh" "$@"
fi
t=$SECONDS
bash "$root/scripts/build.sh"
echo "timing: test.build $((SECONDS - t))"
# -j2: unit and bus tests run beside the package step and the guest boots,
# which lock each other out (RESOURCE_LOCK testbed) since each wants both
# host cores. The JUnit file keeps each test's time for scripts/ci-times.sh.
t=$SECONDS
rc=0
ctest --test-dir "$build" --output-on-failure -j2 --output-junit "$build/ctest-junit.xml" "$@" || rc=$?
echo "timing: test.ctest $((SECONDS - t))"
exit $rc
