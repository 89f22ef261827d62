#!/usr/bin/env bash
# ci-times.sh DEMO_LOG TEST_LOG BUILD_DIR TOTAL_S BUDGET_S
# CI's table of where the time went, from what the run left behind:
# - "timing: NAME SECONDS" lines (scripts/demo.sh, scripts/test.sh,
#   testbed/run.sh) and testbed/run.sh's "guest ready after" line;
# - ctest's JUnit file (BUILD_DIR/ctest-junit.xml): each unit, bus and
#   package test's own time;
# - the guest suite's report (BUILD_DIR/system-results/GUEST/*.time):
#   each guest's boot, the package's install and each system test's time.
# Prints the table, then a WARNING naming the slowest tests when TOTAL_S
# passes BUDGET_S: growth shows at the change that causes it, not when CI
# runs out of time. Never fails the run.
set -uo pipefail
[ $# -eq 5 ] || { echo "usage: $0 DEMO_LOG TEST_LOG BUILD_DIR TOTAL_S BUDGET_S" >&2; exit 2; }
demo_log=$1 test_log=$2 build=$3 total=$4 budget=$5
junit=$build/ctest-junit.xml

row() { printf '  %-52s %8s\n' "$1" "$2"; }
# The value of the first "timing: NAME N" in a log, or "-" (the demo's boot
# prints testbed.image again, 0, once the image made beside the build is there).
timing() { awk -v n="$2" '$1 == "timing:" && $2 == n && v == "" {v = $3} END {print (v == "" ? "-" : v)}' "$1" 2>/dev/null; }
# The testbed line "...: guest ready after Xs uptime, command done at Ys, wall Zs, rc=N".
guest_line() { grep -m1 'guest ready after' "$1" 2>/dev/null | sed -E 's/.*ready after ([0-9.?]+)s uptime, command done at ([0-9.?]+)s, wall ([0-9.]+)s.*/\1 \2 \3/'; }
# JUnit test cases as "NAME SECONDS".
junit_times() {
	[ -f "$junit" ] || return 0
	grep -o '<testcase name="[^"]*"[^>]*time="[0-9.]*"' "$junit" |
		sed -E 's/<testcase name="([^"]*)".*time="([0-9.]*)"/\1 \2/'
}

echo "ci: where the time went (seconds)"
row "demo: install deps" "$(timing "$demo_log" demo.deps)"
row "demo: build (the one compile of the run)" "$(timing "$demo_log" demo.build)"
row "demo: guest image from nothing (beside the build)" "$(timing "$demo_log" testbed.image)"
row "demo: accelerator probe (beside the build)" "$(timing "$demo_log" testbed.probe)"
row "demo: wait for the image after the build" "$(timing "$demo_log" demo.image-wait)"
read -r ready done_at wall < <(guest_line "$demo_log"; echo "- - -")
row "demo: guest boot to ready (v2)" "$ready"
row "demo: the demo in the guest" "$(awk -v a="$ready" -v b="$done_at" 'BEGIN{ if (a+0 > 0 && b+0 > 0) printf "%.0f", b - a; else print "-" }')"
row "demo: guest wall (boot, demo, power-off)" "$wall"
row "test: deps and build (nothing left to do)" "$(awk -v a="$(timing "$test_log" test.deps)" -v b="$(timing "$test_log" test.build)" 'BEGIN{print a + b}')"
row "test: ctest -j2 (below: each test's own time)" "$(timing "$test_log" test.ctest)"

junit_times | awk '
	$1 ~ /^unit\./ { u += $2; nu++ }
	$1 ~ /^bus\./ { b += $2; nb++; bus[$1] = $2 }
	END {
		printf "  %-52s %8.0f\n", "  unit tier, " nu " tests (summed; beside the guests)", u
		printf "  %-52s %8.0f\n", "  bus tier, " nb " tests (summed; beside the guests)", b
	}'
secs() { junit_times | awk -v n="$1" '$1 == n {printf "%.0f", $2; f = 1} END {if (!f) print "-"}'; }
row "  package: dpkg-buildpackage --prebuilt + lintian" "$(secs system.package.build)"
# The other suite, in its own build root: root, compile, tiers and package.
for suite in bookworm trixie; do
	[ "$(secs "suite.$suite.build")" != - ] || continue
	row "  $suite (build root): root + compile + package + image" "$(secs "suite.$suite.build")"
	for step in root build package image; do
		# The longest of each step's lines: the unit and bus runs find the root and the build ready (0 s).
		v=$(awk -v n="suite.$step" '$1 == "timing:" && $2 == n && $3 + 0 >= v + 0 {v = $3} END {print (v == "" ? "-" : v)}' "$build/suite-$suite/timings.txt" 2>/dev/null)
		row "    $step" "$v"
	done
	row "    unit tier (ctest in the root)" "$(secs "suite.$suite.unit")"
	row "    bus tier (ctest in the root)" "$(secs "suite.$suite.bus")"
done
for guest in deb13-v2 deb12-v1 deb12-v2 deb13-v1; do
	res=$build/system-results/$guest
	[ -d "$res" ] || continue
	row "  $guest guest: wall (boot, install, tests)" "$(secs "system.$guest.boot")"
	row "    boot to the suite's start" "$(cat "$res/boot.time" 2>/dev/null || echo -)"
	row "    apt install of the .debs" "$(cat "$res/install.time" 2>/dev/null || echo -)"
	ran=0 skipped=0
	for f in "$res"/test_*.rc; do
		[ -f "$f" ] || continue
		name=$(basename "$f" .rc)
		if [ "$(cat "$f")" = skip ]; then
			skipped=$((skipped + 1))
			continue
		fi
		ran=$((ran + 1))
		row "    $name" "$(cat "$res/$name.time" 2>/dev/null || echo -)"
	done
	row "    ($ran run, $skipped not for $guest in this mode)" ""
done
row "total" "$total"

if [ "$total" -gt "$budget" ]; then
	slowest=$(for res in "$build"/system-results/*; do
		[ -d "$res" ] || continue
		for f in "$res"/test_*.time; do
			[ -f "$f" ] && echo "$(cat "$f") $(basename "$res").$(basename "$f" .time)"
		done
	done | sort -rn | head -n 5 | awk '{printf "%s%s (%s s)", (NR > 1 ? ", " : ""), $2, $1}')
	echo "WARNING: CI took $total s, over its budget of $budget s (CI stops counting at 5400 s; the target is 2700 s)." \
		"Slowest system tests: $slowest. See the table above for the phases."
fi
exit 0
