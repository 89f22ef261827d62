#!/usr/bin/env bash
# `taskscopectl logs -f` across restarts of the streamer, on a private bus:
# killed -9 while the follower waits, stopped with SIGTERM, killed -9 in
# the middle of a burst, with lines written while no streamer runs (they
# wait in the fifo, whose write end this test holds as a task would). The
# follower gets every numbered line exactly once and ends when the logs
# are complete. The spool entry is written here as taskscope-manager writes
# it (manager/records/log_spool.cpp). Under systemd the fifo's read end also
# survives in the fd store: tests/system/test_streamer_restart.sh.
source "$(dirname "$0")/lib.sh"
bus_start

S=org.taskscope.Streamer1
CTL="$TASKSCOPE_BUILD_DIR/src/cli/taskscopectl"
STREAMER="$TASKSCOPE_BUILD_DIR/src/stream/taskscope-streamer"
SPOOL="$BUS_TMP/spool"
UNIT=a1-lines.scope
OUT="$BUS_TMP/follow.out"
ERR="$BUS_TMP/follow.err"
fail() {
    echo "FAIL: $*"
    tail -n 20 "$BUS_TMP/streamer.log" 2>/dev/null
    cat "$ERR" 2>/dev/null
    exit 1
}
on_bus() { busctl --address="$BUS_ADDRESS" list --no-legend 2>/dev/null | grep -q "^$S "; }
off_bus() { ! on_bus; }
lines_seen() { (($(wc -l <"$OUT") >= $1)); }
start_streamer() {
    "$STREAMER" --bus-address "$BUS_ADDRESS" --spool-dir "$SPOOL" --state-dir "$STATE_DIR/streamer" -v \
        2>>"$BUS_TMP/streamer.log" &
    STREAMER_PID=$!
    wait_for "the streamer to take its name" on_bus
}
stop_streamer() {
    kill "-$1" "$STREAMER_PID"
    wait "$STREAMER_PID" 2>/dev/null || true
    wait_for "the streamer to leave the bus" off_bus
}
describe() {
    echo "{\"alloc_id\":\"a1\",\"task\":\"lines\",\"log_dir\":\"$BUS_TMP/logs/a1\",\"max_files\":10,\"max_file_size_mb\":1,\"exited\":$1}" \
        >"$SPOOL/.tmp.json"
    mv "$SPOOL/.tmp.json" "$SPOOL/$UNIT.json"
}

mkdir -p "$SPOOL"
mkfifo "$SPOOL/$UNIT.stdout" "$SPOOL/$UNIT.stderr"
describe false
# The task's end of the fifos, held across every restart.
exec 3<>"$SPOOL/$UNIT.stdout" 4<>"$SPOOL/$UNIT.stderr"
start_streamer
seq 1 1000 >&3
"$CTL" logs -f a1 lines >"$OUT" 2>"$ERR" &
follower=$!
wait_for "the follower to see line 1000" lines_seen 1000
echo "ok: following, 1000 lines"

stop_streamer KILL
seq 1001 2000 >&3
start_streamer
wait_for "the follower to see line 2000 after kill -9" lines_seen 2000
echo "ok: kill -9 while the follower waited; lines written meanwhile arrived"

stop_streamer TERM
seq 2001 3000 >&3
start_streamer
wait_for "the follower to see line 3000 after SIGTERM" lines_seen 3000
echo "ok: SIGTERM (as systemctl restart does); lines written meanwhile arrived"

# ~2 MiB: more than the fifo holds, so the writer blocks while no streamer runs.
seq 3001 300000 >&3 &
burst=$!
wait_for "the follower to see line 20000" lines_seen 20000
stop_streamer KILL
seen=$(wc -l <"$OUT")
start_streamer
wait $burst
wait_for "the follower to see line 300000 after kill -9 in a burst" lines_seen 300000
echo "ok: kill -9 during a burst, at $seen lines"

exec 3>&- 4>&-
describe true
for ((i = 0; i < 300; i++)); do
    kill -0 $follower 2>/dev/null || break
    sleep 0.1  # the poll's pace
done
kill -0 $follower 2>/dev/null && fail "logs -f did not end when the logs were complete"
wait $follower || fail "logs -f failed: $(cat "$ERR")"
echo "ok: logs -f ended when the logs were complete"

lost=$(seq 1 300000 | sort | comm -23 - <(sort -u "$OUT") | wc -l)
twice=$(sort "$OUT" | uniq -d | wc -l)
resumed=$(grep -c "resuming at byte" "$ERR" || true)
echo "lines: $(wc -l <"$OUT") of 300000, lost $lost, twice $twice; the follower resumed $resumed times"
((lost == 0 && twice == 0)) || fail "lines lost or doubled"
seq 1 300000 | cmp -s - "$OUT" || fail "the lines are out of order"
((resumed == 3)) || fail "the follower resumed $resumed times, not 3"
echo "bus logs -f across streamer restarts: all checks passed"
