#!/usr/bin/env bash
# Log throughput through taskscope against `cat fifo > file` of the same
# data in the same place, and the streamer's CPU time per MB. Run in the
# guest as root with the build installed (see bench/README.md):
#   bash bench/log_throughput.sh [MB]        (default 200)
set -euo pipefail
MB=${1:-200}
BYTES=$((MB * 1024 * 1024))
CTL=taskscopectl
DIR=/var/lib/taskscope/bench-logs
DROPIN=/etc/taskscope/manager.json.d/50-streamer.json
A=bench$$
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
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

rm -rf "$DIR" && mkdir -p "$DIR"

# Floor: the same writer into a fifo, cat moving it into a file.
mkfifo "$DIR/fifo"
cat "$DIR/fifo" >"$DIR/floor.out" &
t0=$(now)
head -c "${MB}M" /dev/zero >"$DIR/fifo"
wait
t1=$(now)
floor=$(echo "$t0 $t1" | awk -v mb="$MB" '{ printf "%.1f", mb / ($2 - $1) }')
rm -f "$DIR/floor.out"

# taskscope: the task writes into its fifo; the streamer moves it into
# rotated files. The clock starts when the task is let go, not at StartTask.
created_dropin=0
if [[ ! -e $DROPIN ]]; then
    mkdir -p "$(dirname "$DROPIN")" && echo '{"streamer":true}' >"$DROPIN"
    created_dropin=1
    systemctl restart taskscope-manager
fi
trap '[[ $created_dropin == 1 ]] && rm -f "$DROPIN" && systemctl restart taskscope-manager; rm -rf "$DIR"' EXIT
systemctl start taskscope-streamer
mkfifo "$DIR/go"
$CTL run --spec '{"log_max_files":40,"log_max_file_size_mb":10}' $A w -- \
    /bin/sh -c "read x < $DIR/go; exec head -c ${MB}M /dev/zero" >/dev/null
LOGDIR=/var/lib/taskscope/logs/$A
spid=$(systemctl show -p MainPID --value taskscope-streamer)
c0=$(cpu_ticks "$spid")
t0=$(now)
echo go >"$DIR/go"
wait_bytes "$LOGDIR" 'w.stdout.*'
t1=$(now)
c1=$(cpu_ticks "$spid")
hz=$(getconf CLK_TCK)
ts=$(echo "$t0 $t1" | awk -v mb="$MB" '{ printf "%.1f", mb / ($2 - $1) }')
$CTL wait $A w >/dev/null || true
$CTL forget $A w >/dev/null || true
rm -rf "$LOGDIR"

echo "log throughput: ${MB} MB"
echo "  cat fifo > file : ${floor} MB/s"
echo "  taskscope       : ${ts} MB/s"
echo "$ts $floor" | awk '{ printf "  ratio           : %.2fx (target >= 0.8x)\n", $1 / $2 }'
echo "$c0 $c1 $hz" | awk -v mb="$MB" '{ printf "  streamer CPU    : %.2f s for %d MB = %.2f ms/MB\n", ($2 - $1) / $3, mb, 1000 * ($2 - $1) / $3 / mb }'
