#!/bin/bash
# report.sh RESULTS_DIR NAME: replays one system test's result recorded by guest-suite.sh.
set -u
[ $# -eq 2 ] || { echo "usage: $0 RESULTS_DIR NAME" >&2; exit 2; }
results=$1 name=$2

if [ ! -f "$results/$name.rc" ]; then
	echo "report: no result for $name in $results: the guest suite did not run it" >&2
	echo "report: (did system.<variant>.boot fail? see its output and the serial log path it printed)" >&2
	exit 1
fi
[ ! -f "$results/$name.out" ] || cat "$results/$name.out"
rc=$(cat "$results/$name.rc")
case "$rc" in
skip) exit 77 ;;
'' | *[!0-9]*) echo "report: bad exit code '$rc' for $name" >&2; exit 1 ;;
*) exit "$rc" ;;
esac
