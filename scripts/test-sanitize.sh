#!/usr/bin/env bash
# The unit and bus tiers under AddressSanitizer and UndefinedBehaviorSanitizer
# (issue 58): every library, daemon, tool and test program, and the shim's C
# (against glibc: musl has no sanitizer runtime), built in build-sanitize/
# (BUILD_DIR overrides) and run by ctest. Any finding ends its program with
# an error, so a test that meets one fails. LeakSanitizer is on too: a leak
# at a daemon's exit is a finding like any other. The system tier is not
# built: the guests install the package, not this build.
# Extra arguments go to ctest (e.g. -R manager_store).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-sanitize}
# Debian's install layout (the daemons find each other by these paths), but
# -O1 rather than the package's -O2: the sanitizers' own advice, and a
# quicker compile of code that runs only here.
mapfile -t layout < <(cd "$root" && bash scripts/debian-flags.sh | grep -v -E '^-DCMAKE_(C|CXX|EXE_LINKER|SHARED_LINKER|MODULE_LINKER)_FLAGS=|^-DCMAKE_BUILD_TYPE=')
t=$SECONDS
cmake -S "$root" -B "$build" -G Ninja "${layout[@]}" \
	-DCMAKE_BUILD_TYPE= "-DCMAKE_C_FLAGS=-O1 -g1" "-DCMAKE_CXX_FLAGS=-O1 -g1" \
	-DTASKSCOPE_SANITIZE=ON -DTASKSCOPE_WERROR=ON >/dev/null
cmake --build "$build"
echo "timing: sanitize.build $((SECONDS - t))"
# halt_on_error: the first finding ends the program with an error (UBSan's
# too, through -fno-sanitize-recover). No core: an ASan process maps
# terabytes of shadow, and abort_on_error's core dump of one held a test
# for minutes. Every report goes to a file of its own under reports/: the
# bus tier's daemons are started by their private dbus-daemon, whose
# output the test deletes, and a leak is only found when a daemon exits
# after its test's last check; so the run fails on any report, whoever
# wrote it.
reports=$build/sanitizer-reports
rm -rf "$reports" && mkdir -p "$reports"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:disable_coredump=1:log_path=$reports/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan}
t=$SECONDS
rc=0
ctest --test-dir "$build" --output-on-failure -j2 -L 'unit|bus' "$@" || rc=$?
echo "timing: sanitize.ctest $((SECONDS - t))"
# The bus tier's daemons may still be on their way out.
sleep 2
if compgen -G "$reports/*" >/dev/null; then
	echo "sanitize: $(ls "$reports" | wc -l) report(s) in $reports:"
	for f in "$reports"/*; do
		echo "== $f"
		head -n 60 "$f"
	done
	rc=1
else
	echo "sanitize: no ASan, LSan or UBSan report"
fi
exit $rc
