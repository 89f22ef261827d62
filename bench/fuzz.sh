#!/usr/bin/env bash
# Builds one fuzz target with clang (libFuzzer, ASan+UBSan; fuzz/) and runs
# it for SECONDS, then prints what the run did: execs/s, the edges covered
# (libFuzzer's cov:) and what it found (crashes, leaks, timeouts, out of
# memory: the files libFuzzer saved).
#   bench/fuzz.sh TARGET SECONDS        e.g. bench/fuzz.sh task_spec 60
#   bench/fuzz.sh --list                the targets
# The build has its own tree (FUZZ_BUILD_DIR, default build-fuzz/), so the
# project's g++ build and CI need no clang. The committed seeds
# (fuzz/corpus/TARGET) are read, never written: new inputs go to
# build-fuzz/corpus/TARGET, findings to build-fuzz/findings/TARGET/. A
# finding goes into fuzz/corpus/TARGET with its fix, in one commit; the
# unit tier then replays it (unit.fuzz_replay_TARGET).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
if [[ "${1:-}" == --list ]]; then
	sed -n 's/^taskscope_fuzz_target(\([a-z_0-9]*\) .*/\1/p' "$root/fuzz/CMakeLists.txt"
	exit 0
fi
target=${1:?usage: bench/fuzz.sh TARGET SECONDS}
seconds=${2:?usage: bench/fuzz.sh TARGET SECONDS}
[[ -d "$root/fuzz/corpus/$target" ]] || { echo "fuzz.sh: no corpus fuzz/corpus/$target" >&2; exit 2; }

if [[ ! -f "$build/build.ninja" ]]; then
	# -O1 as libFuzzer's documentation builds; no Debian flags (their
	# _FORTIFY_SOURCE only hides what ASan would say).
	CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DTASKSCOPE_FUZZ=ON \
		-DTASKSCOPE_SYSTEM_TESTS=OFF -DCMAKE_BUILD_TYPE=None "-DCMAKE_C_FLAGS=-O1 -g" "-DCMAKE_CXX_FLAGS=-O1 -g" >/dev/null
fi
nice ninja -C "$build" -j"${FUZZ_JOBS:-2}" "fuzz_$target" >/dev/null

work=$build/corpus/$target
findings=$build/findings/$target
mkdir -p "$work" "$findings"
log=$build/fuzz-$target.log
# A 2 GiB rss and malloc limit and a 10 s limit per input: past them is a
# finding (an allocation without bound, a loop), as a crash is.
before=$(ls "$findings")
rc=0
"$build/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$findings/" "$work" "$root/fuzz/corpus/$target" >"$log" 2>&1 || rc=$?
done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1 || true)
execs=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log" | tail -n 1)
runs=$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$log" | tail -n 1)
cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
found=$(comm -13 <(echo "$before") <(ls "$findings") | tr '\n' ' ')
echo "target=$target seconds=$seconds execs/s=${execs:-?} runs=${runs:-?} cov=${cov:-?} ft=${ft:-?} rc=$rc"
echo "findings: ${found:-none}"
if [[ $rc -ne 0 ]]; then
	echo "--- the log's end ($log):"
	grep -E 'ERROR|SUMMARY|fuzz check failed|#0 |#1 |#2 |#3 |#4 |#5 |Test unit written' "$log" | head -n 30
fi
exit $rc
