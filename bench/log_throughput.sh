#!/usr/bin/env bash
# Log throughput through taskscope against `cat fifo > file` of the same
# data in the same place, and the streamer's CPU time per MB; then the same
# task with log_journal on (issue 59): what the journal's copy costs in
# throughput and in the streamer's CPU per MB, and journald's CPU beside it;
# and a task writing Nomad's log fifo itself against the streamer between
# it and the fifo, copying to the journal.
# The writer prints 100-byte lines, as a task's log does (the journal's
# stream takes lines; NULs would be empty entries). Run in the guest as
# root with the build installed (see bench/README.md):
#   bash bench/log_throughput.sh [MB [ROUNDS]]     (default 200 MB, 2 rounds)
set -euo pipefail
MB=${1:-200}
ROUNDS=${2:-2}
BYTES=$((MB * 1024 * 1024))
CTL=taskscopectl
DIR=/var/lib/taskscope/bench-logs
DROPIN=/etc/taskscope/manager.json.d/50-streamer.json
A=bench$$
LINE=$(printf '%099d' 0)
now() { date +%s.%N; }
sum_sizes() { find "$1" -maxdepth 1 -name "$2" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
wait_bytes() {  # dir glob: until the files hold all the bytes (bounded: 10 min)
    for ((i = 0; i < 12000; i++)); do
        (($(sum_sizes "$1" "$2") >= BYTES)) && return 0
        sleep 0.05
    done
    echo "timed out: $(sum_sizes "$1" "$2") of $BYTES bytes" >&2
    exit 1
}
wait_complete() {  # NAME: the task ended and its logs complete (bounded: 60 s)
    $CTL wait $A "$1" >/dev/null || true
    for ((i = 0; i < 600; i++)); do
        [[ -e /run/taskscope/logs/$A-$1.scope.json ]] || break
        sleep 0.1
    done
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
rate() { echo "$1 $2" | awk -v mb="$MB" '{ printf "%.1f", mb / ($2 - $1) }'; }
ms_per_mb() { echo "$1 $2" | awk -v mb="$MB" -v hz="$hz" '{ printf "%.2f", 1000 * ($2 - $1) / hz / mb }'; }

rm -rf "$DIR" && mkdir -p "$DIR"

# The data, written once (page cache): the floor and the tasks cat it.
{ yes "$LINE" 2>/dev/null || true; } | head -c "${MB}M" >"$DIR/data"

# Floor: the same data into a fifo, cat moving it into a file.
mkfifo "$DIR/fifo"

created_dropin=0
if [[ ! -e $DROPIN ]]; then
    mkdir -p "$(dirname "$DROPIN")" && echo '{"streamer":true}' >"$DROPIN"
    created_dropin=1
    systemctl restart taskscope-manager
fi
trap '[[ $created_dropin == 1 ]] && rm -f "$DROPIN" && systemctl restart taskscope-manager; rm -rf "$DIR"' EXIT
systemctl start taskscope-streamer
spid=$(systemctl show -p MainPID --value taskscope-streamer)
jpid=$(systemctl show -p MainPID --value systemd-journald)

# One task: it writes into its fifo; the streamer moves it into rotated
# files. The clock starts when the task is let go, not at StartTask. Prints
# "MB/s streamer-ms/MB journald-ms/MB" and, with the journal on, what
# GetJournalCopy says (bytes sent, lines and bytes dropped).
run_task() {  # NAME SPEC
    rm -f "$DIR/go" && mkfifo "$DIR/go"
    $CTL run --spec "$2" $A "$1" -- /bin/sh -c "read x < $DIR/go; exec cat $DIR/data" >/dev/null
    local logdir=/var/lib/taskscope/logs/$A c0 c1 j0 j1 t0 t1 copy
    c0=$(cpu_ticks "$spid") j0=$(cpu_ticks "$jpid") t0=$(now)
    echo go >"$DIR/go"
    wait_bytes "$logdir" "$1.stdout.*"
    t1=$(now)
    c1=$(cpu_ticks "$spid")
    # The journal's copy may still be on its way: journald's CPU is
    # counted until the task's logs are complete (the copy drained).
    wait_complete "$1"
    j1=$(cpu_ticks "$jpid")
    copy=$(busctl --json=short call org.taskscope.Streamer1 /org/taskscope/Streamer1 org.taskscope.Streamer1 \
        GetJournalCopy ss $A "$1" | jq -r '.data[1:] | map(tostring) | join("/")')
    echo "$(rate "$t0" "$t1") $(ms_per_mb "$c0" "$c1") $(ms_per_mb "$j0" "$j1") $copy"
    $CTL forget $A "$1" >/dev/null || true
    rm -rf "${logdir:?}"/"$1".*
}
# A task Nomad starts writes Nomad's log fifo, which logmon reads (here
# cat into a file). Without the journal the task writes the fifo itself;
# with it the streamer stands between and copies (issue 59). Prints
# "MB/s streamer-ms/MB journald-ms/MB".
run_fifo_task() {  # NAME JOURNAL(true|false)
    rm -f "$DIR/go" "$DIR/nomad.fifo" "$DIR/nomad.err" "$DIR/nomad.out" && mkfifo "$DIR/go" "$DIR/nomad.fifo"
    cat "$DIR/nomad.fifo" >"$DIR/nomad.out" &
    local logmon=$! c0 c1 j0 j1 t0 t1
    $CTL run --spec '{"log_journal":'"$2"',"stdout_path":"'"$DIR/nomad.fifo"'","stderr_path":"'"$DIR/nomad.err"'"}' \
        $A "$1" -- /bin/sh -c "read x < $DIR/go; exec cat $DIR/data" >/dev/null
    c0=$(cpu_ticks "$spid") j0=$(cpu_ticks "$jpid") t0=$(now)
    echo go >"$DIR/go"
    wait_bytes "$DIR" nomad.out
    t1=$(now)
    c1=$(cpu_ticks "$spid")
    wait_complete "$1"
    j1=$(cpu_ticks "$jpid")
    kill $logmon 2>/dev/null || true
    wait $logmon 2>/dev/null || true
    echo "$(rate "$t0" "$t1") $(ms_per_mb "$c0" "$c1") $(ms_per_mb "$j0" "$j1")"
    $CTL forget $A "$1" >/dev/null || true
}
floor() {
    cat "$DIR/fifo" >"$DIR/floor.out" &
    local t0 t1
    t0=$(now)
    cat "$DIR/data" >"$DIR/fifo"
    wait
    t1=$(now)
    rm -f "$DIR/floor.out"
    rate "$t0" "$t1"
}

echo "log throughput: ${MB} MB in 100-byte lines, ${ROUNDS} rounds (floor, journal off, journal on)"
for ((r = 1; r <= ROUNDS; r++)); do
    f=$(floor)
    read -r off off_cpu off_j _ <<<"$(run_task off$r '{"log_max_files":40,"log_max_file_size_mb":10}')"
    read -r on on_cpu on_j copy <<<"$(run_task on$r '{"log_max_files":40,"log_max_file_size_mb":10,"log_journal":true}')"
    echo "round $r:"
    echo "  cat fifo > file    : $f MB/s"
    echo "  taskscope          : $off MB/s, streamer CPU $off_cpu ms/MB, journald $off_j ms/MB"
    echo "$off $f" | awk '{ printf "  ratio              : %.2fx (target >= 0.8x)\n", $1 / $2 }'
    echo "  with log_journal   : $on MB/s, streamer CPU $on_cpu ms/MB, journald $on_j ms/MB"
    echo "$on $off $on_cpu $off_cpu" | awk '{ printf "  journal on vs off  : %.2fx throughput, %+.2f ms/MB streamer CPU\n", $1 / $2, $3 - $4 }'
    echo "  the journal's copy : bytes sent/lines dropped/bytes dropped $copy"
    read -r direct direct_cpu _ <<<"$(run_fifo_task fifo$r false)"
    read -r fwd fwd_cpu fwd_j <<<"$(run_fifo_task fwd$r true)"
    echo "  Nomad's fifo, task : $direct MB/s (the task writes it; streamer CPU $direct_cpu ms/MB)"
    echo "  Nomad's fifo, copy : $fwd MB/s through the streamer, streamer CPU $fwd_cpu ms/MB, journald $fwd_j ms/MB"
    echo "$fwd $direct" | awk '{ printf "  fifo copy vs task  : %.2fx throughput\n", $1 / $2 }'
done
