#!/usr/bin/env bash
# Issue 48's scenario, as a hostile tenant would try it (root, in the
# guest, installed manager): a task forks to its pids limit and keeps
# forking; once it holds the limit, STARTS new tasks are started at once
# (each in an allocation of its own, its first instruction writing a
# marker), while the node is read every 200 ms (taskscope's GetTask
# against the bus's own GetId: taskscope-bench-reads) and `systemctl
# status dbus` is timed every second. Two phases in one boot:
#   protected   - the shipped defaults (node slice limits, a start's
#                 fate bounded by start_timeout_ms);
#   unprotected - the defaults before issue 48 (node_slice_limits false,
#                 start_timeout_ms a day);
#   favored     - the shipped defaults on a cgroup2 remounted with
#                 favordynmods (then mounted back).
# Per phase: starts answered success and failure (by error), failed
# starts that left anything (a marker, a record, a unit), successes not
# running, each start's time to its answer, the read p99s and their ratio,
# and `systemctl status`'s median and max.
#   fork_bomb.sh [STARTS] [READS_BIN] [PHASES]   (defaults 50,
#   taskscope-bench-reads on PATH, "protected unprotected")
set -uo pipefail
N=${1:-50}
READS=${2:-taskscope-bench-reads}
# taskscope-bench-fill (its `burst`), beside the reads program.
FILL=$(dirname "$(command -v "$READS")")/taskscope-bench-fill
PHASES=${3:-protected unprotected}
I=org.taskscope.Manager1
M=/org/taskscope/Manager1
DROPIN=/etc/taskscope/manager.json.d/60-bench-fork-bomb.json
W=/run/forkbomb-bench
mkdir -p "${DROPIN%/*}"

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
q() { # QUANTILE FILE: a quantile of the numbers in FILE (one a line)
    sort -n "$2" | awk -v q="$1" '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(q * (NR - 1) + 0.5) + 1; print v[i] }'
}
task_state() { busctl --json=short call $I $M $I GetTask ss "$1" "$2" 2>/dev/null | jq -r '.data[0]' | jq -r .state; }

phase() { # NAME CONFIG_JSON
    local name=$1 cfg=$2 bomb=bomb-$1 i
    echo "=== $name: manager drop-in $cfg"
    echo "$cfg" >"$DROPIN"
    systemctl restart taskscope-manager
    local since
    since=$(date '+%Y-%m-%d %H:%M:%S')
    rm -rf $W
    mkdir -p $W/out $W/rc $W/ms
    busctl call $I $M $I StartTask sss $bomb t \
        '{"command":"/bin/sh","args":["-c","f() { f | f & }; f; exec sleep 3600"],"logs":false}' >/dev/null ||
        { echo "the bomb did not start"; return 1; }
    local cg max cur t0
    cg=/sys/fs/cgroup$(busctl --json=short call $I $M $I GetTask ss $bomb t | jq -r '.data[0]' | jq -r .cgroup)
    max=$(cat "$cg/pids.max" 2>/dev/null || echo ?)
    t0=$(date +%s%N)
    # Until the bomb holds 90% of its limit (at most 120 s).
    for ((i = 0; i < 1200; i++)); do
        cur=$(cat "$cg/pids.current" 2>/dev/null || echo 0)
        [[ $max =~ ^[0-9]+$ ]] && ((cur * 10 >= max * 9)) && break
        sleep 0.1  # the poll's pace
    done
    echo "the bomb holds $cur of its pids.max $max after $(ms_since $t0) ms"
    "$READS" $bomb t 200 >$W/reads.txt 2>&1 &
    local reads=$!
    (
        while :; do
            s=$(date +%s%N)
            timeout 120 systemctl status dbus.service >/dev/null 2>&1
            ms_since $s >>$W/status.ms
            sleep 1  # one sample a second
        done
    ) &
    local sampler=$!
    t0=$(date +%s%N)
    # One process sends every start at once and times each to its answer
    # (before stop 48, a subshell, jq and dbus-send per start: under the
    # bomb their forks were timed with the starts).
    "$FILL" burst $N $W fb-$name >$W/burst.txt 2>&1 &
    local burst=$!
    for i in $(seq $N); do
        while [[ ! -s $W/rc/$i ]] && kill -0 $burst 2>/dev/null; do sleep 0.2; done  # the poll's pace
    done
    local all_ms pressure
    all_ms=$(ms_since $t0)
    # What the node was short of meanwhile (PSI, the last 60 s), and what
    # the bomb held.
    pressure=$(for r in cpu memory io; do
        awk -v r=$r '{split($3, a, "="); printf "%s %s %s, ", r, $1, a[2]}' /proc/pressure/$r 2>/dev/null
    done)
    pressure+="the bomb: $(cat "$cg/pids.current" 2>/dev/null || echo ?) pids, memory.current"
    pressure+=" $(($(cat "$cg/memory.current" 2>/dev/null || echo 0) / 1048576)) MiB"
    kill -TERM $sampler
    kill -TERM $reads
    wait $reads 2>/dev/null
    # The bomb goes before anything is counted: the node answers again.
    busctl call $I $M $I StopTask sssx $bomb t SIGKILL 0 >/dev/null 2>&1
    for ((i = 0; i < 1200; i++)); do
        [[ $(task_state $bomb t) == exited ]] && break
        sleep 0.1  # the poll's pace
    done
    for ((i = 0; i < 1200; i++)); do
        [[ -z $(systemctl list-jobs --no-legend 2>/dev/null) ]] && break
        sleep 0.1  # the poll's pace
    done
    local ok=0 failed=0 left=0 notrunning=0 errors="" noreply=0 noreply_ran=0 error
    for i in $(seq $N); do
        if [[ $(cat $W/rc/$i 2>/dev/null) == 0 ]]; then
            ok=$((ok + 1))
            [[ -e $W/out/$i && $(task_state fb-$name-$i t) == running ]] || notrunning=$((notrunning + 1))
        else
            failed=$((failed + 1))
            error=$(grep -o 'org\.[A-Za-z.]*Error\.[A-Za-z]*' $W/rc/$i.out | head -1 || echo other)
            errors+=" $error"
            # A start the client gave up on (the bus's NoReply) was never
            # answered: the manager goes on with it (start_timeout_ms), and
            # one that then ran left its task, as it should. Only a start
            # the manager refused must leave nothing.
            if [[ $error == org.freedesktop.DBus.Error.NoReply ]]; then
                noreply=$((noreply + 1))
                [[ ! -e $W/out/$i ]] || noreply_ran=$((noreply_ran + 1))
            elif [[ -e $W/out/$i ]] || busctl call $I $M $I GetTask ss fb-$name-$i t >/dev/null 2>&1 ||
                systemctl list-units --all --plain --no-legend | grep -qF "fb-$name-$i-"; then
                left=$((left + 1))
            fi
        fi
    done
    cat $W/ms/* >$W/all.ms
    echo "$name: $ok of $N starts succeeded, $failed failed ($(tr ' ' '\n' <<<"$errors" | sort | uniq -c | awk 'NF { printf "%s %s, ", $1, $2 }'))"
    echo "$name: how far the failed starts got, and their answers' median ms: $(for f in $W/rc/*.out; do
        [[ -e $f ]] || continue  # none failed
        i=${f##*/}
        i=${i%.out}
        step=$(grep -o 'it reached "[^"]*"' "$f" | tr -d '"' | sed 's/it reached //; s/ /_/g')
        echo "${step:-unanswered} $(cat $W/ms/$i)"
    done 2>/dev/null | sort -k1,1 -k2,2n | awk '{ n[$1]++; v[$1, n[$1]] = $2 }
        END { for (k in n) printf "%s %d x, %d ms; ", k, n[k], v[k, int((n[k] + 1) / 2)] }')"
    echo "$name: the manager's warnings of failed starts' undo: $(journalctl -u taskscope-manager --since "$since" \
        --no-pager -o cat | grep -oE 'did not exit within|Failed to remove the dirs|was not stopped|was not removed' |
        sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s x%s; ", c, $0 }')"
    echo "$name: refused starts that left something (a marker, a record or a unit): $left; successes not running: $notrunning"
    echo "$name: starts the client gave up on (NoReply): $noreply, of which ran later (the manager went on): $noreply_ran"
    echo "$name: time to each start's answer: median $(q 0.5 $W/all.ms) ms, max $(q 1 $W/all.ms) ms; all answered after $all_ms ms"
    sed "s/^/$name: /" $W/reads.txt
    echo "$name: pressure over the last 60 s (avg60): $pressure"
    sed "s/^/$name: /" $W/burst.txt
    echo "$name: systemctl status dbus.service: $(wc -l <$W/status.ms) samples, median $(q 0.5 $W/status.ms) ms, max $(q 1 $W/status.ms) ms"
    for i in $(seq $N); do
        busctl call $I $M $I StopTask sssx fb-$name-$i t SIGKILL 0 >/dev/null 2>&1
    done
    for i in $(seq $N); do
        for ((t = 0; t < 100; t++)); do
            [[ $(task_state fb-$name-$i t) != running ]] && break
            sleep 0.1  # the poll's pace
        done
        busctl call $I $M $I ForgetTask ss fb-$name-$i t >/dev/null 2>&1
    done
    busctl call $I $M $I ForgetTask ss $bomb t >/dev/null 2>&1
}

echo "guest: $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MB, systemd $(systemctl --version | awk 'NR==1 {print $2}'), kernel $(uname -r)"
for p in $PHASES; do
    case $p in
    protected) phase protected '{}' ;;
    unprotected) phase unprotected '{"node_slice_limits": false, "start_timeout_ms": 86400000}' ;;
    favored)
        # The shipped defaults on a cgroup2 mounted with favordynmods (Linux
        # 6.0+: cgroup migrations no longer wait for every fork and exit on
        # the node, at a cost to each fork and exit), the options systemd
        # mounted it with kept; mounted back after.
        opts=$(findmnt -no OPTIONS /sys/fs/cgroup | tr ',' '\n' | grep -E '^(nsdelegate|memory_recursiveprot)$' | paste -sd, -)
        if mount -o "remount,${opts:+$opts,}favordynmods" /sys/fs/cgroup; then
            echo "cgroup2 remounted: $(findmnt -no OPTIONS /sys/fs/cgroup)"
            phase favored '{}'
            mount -o "remount${opts:+,$opts}" /sys/fs/cgroup
        else
            echo "this kernel's cgroup2 takes no favordynmods"
        fi
        ;;
    *) echo "unknown phase $p" >&2 ;;
    esac
done
rm -f "$DROPIN"
systemctl restart taskscope-manager
