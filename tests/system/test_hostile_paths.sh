#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Hostile tasks (issue 32), as nobody and as root, isolated and not, in a
# Nomad-like allocation (alloc/logs 0777 with root's 0600 log fifos, a task
# dir, a shared alloc/data that is also a volume source):
# - a task swaps its log fifos for symlinks to /etc (Nomad's CVE-2026-6959
#   class), replaces alloc/logs by a symlink to /etc, swaps a fifo for a
#   device node, replaces a volume source by a symlink to /etc: its next
#   start fails with ExecFailed naming the step and the errno, and no host
#   file outside its reach was created or changed;
# - every isolation setting is applied where it is accepted (the task's
#   /proc/self/status: CapEff, CapBnd, CapAmb, NoNewPrivs) and refused by
#   name where it is not (InvalidSpec naming the field);
# - an isolated task, and an exec into it, see only their own cgroup: their
#   own cgroup namespace, their own tree at /sys/fs/cgroup (read-only);
# - a task's dirs that taskscope made go on ForgetTask, following none of
#   the links the task planted;
# - (v2) a forced kill of a task whose record names a cgroup that is not its
#   scope writes no cgroup.kill there: a decoy process in that cgroup lives,
#   the task is killed through systemd.
source "$(dirname "$0")/lib.sh"

W=/srv/hostile-test # not /run: a device node there would be nodev anyway
A=hostile
NA=$W/$A # Nomad's allocation dir
LOGS=$NA/alloc/logs
OUT=$W/out
VICTIM=/etc/ts-hostile-victim
PWNED=/etc/ts-hostile-pwned
TASKS="web m-root m-nobody m-drop m-bound m-iso m-iso-nobody m-iso-drop k"
FULL_CAPS=$(printf '%016x' $(((1 << ($(cat /proc/sys/kernel/cap_last_cap) + 1)) - 1)))
DEFAULT_CAPS=00000000a80405fb

cleanup() {
    set +e
    for t in $TASKS; do mgr StopTask sssx $A $t SIGKILL 0 >/dev/null 2>&1; done
    for t in $TASKS; do mgr ForgetTask ss $A $t >/dev/null 2>&1; done
    [[ -n ${DECOY:-} ]] && kill "$DECOY" 2>/dev/null
    rmdir /sys/fs/cgroup/hostile-decoy 2>/dev/null
    rm -rf "$W" "$VICTIM" "$PWNED" /etc/.web.stdout.fifo /etc/.web.stderr.fifo
}
trap cleanup EXIT
systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl start taskscope-manager

echo orig >$VICTIM
victim_sum=$(sha256sum $VICTIM)
etc_before=$(ls -la /etc | sha256sum)
host_intact() {
    [[ ! -e $PWNED && ! -e /etc/.web.stdout.fifo && ! -e /etc/.web.stderr.fifo ]] ||
        fail "$1: root created a file in /etc: $(ls -la $PWNED /etc/.web.std* 2>&1)"
    [[ $(sha256sum $VICTIM) == "$victim_sum" ]] || fail "$1: $VICTIM changed: $(cat $VICTIM)"
    [[ $(ls -la /etc | sha256sum) == "$etc_before" ]] || fail "$1: /etc changed"
    ok "$1: no file in /etc created or changed"
}

# Nomad's layout: alloc/ shared, alloc/logs 0777 with the fifos its log
# collector makes (root's, 0600), the task dir web/ with local/ and secrets/.
fresh_fifos() {
    rm -rf "$LOGS" && mkdir -p "$LOGS" && chmod 0777 "$LOGS"
    mkfifo -m 600 "$LOGS/.web.stdout.fifo" "$LOGS/.web.stderr.fifo"
}
mkdir -p $NA/alloc/data $NA/web/local $NA/web/secrets $OUT
chmod 0777 $NA/alloc/data $NA/web/local
chmod 0700 $OUT
fresh_fifos

exited() { [[ "$(task_field $A "$1" state 2>/dev/null)" =~ ^(exited|lost)$ ]]; }
forget() { mgr ForgetTask ss $A "$1" >/dev/null 2>&1 || true; }
# start_refused TASK SPEC ERROR TEXT: the start fails with that D-Bus error
# (dbus-send prints the error's name), its message holding TEXT.
start_refused() {
    local t=$1 spec=$2 name=$3 text=$4 out
    if out=$(dbus-send --system --print-reply --dest=$I $M $I.StartTask string:$A string:"$t" "string:$spec" 2>&1); then
        fail "$t: the start was not refused: $out"
    fi
    grep -qF "org.taskscope.Error.$name" <<<"$out" || fail "$t: got '$out', want org.taskscope.Error.$name"
    grep -qF -- "$text" <<<"$out" || fail "$t: got '$out', want '$text'"
    ok "$t refused: $(tail -n1 <<<"$out" | tr -s ' ')"
    forget "$t"
}

# --- 1. not isolated, as nobody: the task swaps its log fifos for symlinks,
# one to a new file in /etc, one to an existing root file; Nomad starts it
# again with the same stdout_path/stderr_path ---
attack='cd "$0" && rm -f .web.stdout.fifo .web.stderr.fifo && ln -s /etc/ts-hostile-pwned .web.stdout.fifo &&
        ln -s /etc/ts-hostile-victim .web.stderr.fifo && echo planted'
spec=$(jq -cn --arg a "$attack" --arg l "$LOGS" --arg cwd "$NA/web" '{command:"/bin/sh", args:["-c",$a,$l], user:"nobody",
    cwd:$cwd, stdout_path:($l+"/.web.stdout.fifo"), stderr_path:($l+"/.web.stderr.fifo")}')
mgr StartTask sss $A web "$spec" >/dev/null || fail "the first start of $A/web"
wait_until "$A/web to plant its links" 300 exited web
[[ -L $LOGS/.web.stdout.fifo && -L $LOGS/.web.stderr.fifo ]] || fail "the task did not plant its links: $(ls -la $LOGS)"
forget web
start_refused web "$spec" ExecFailed "(stdout): Too many levels of symbolic links"
host_intact "fifos swapped for symlinks by a nobody task"

# --- 2. isolated, as root, Nomad's dirs handed in (task_dir, alloc_dir,
# secrets_dir), alloc/data also a volume: the task replaces alloc/logs by a
# symlink to /etc, swaps its stderr fifo for a device node and alloc/data
# for a symlink to /etc. Each start after it fails at the first of them,
# until the scheduler (here, the test) repairs what the task did ---
fresh_fifos
attack='mv /alloc/logs /alloc/logs.old && ln -s /etc /alloc/logs &&
        rm /alloc/logs.old/.web.stderr.fifo && mknod /alloc/logs.old/.web.stderr.fifo c 1 5 &&
        mv /alloc/data /alloc/data.old && ln -s /etc /alloc/data && echo planted'
spec=$(jq -cn --arg a "$attack" --arg na "$NA" '{command:"/bin/sh", args:["-c",$a], user:"root",
    stdout_path:($na+"/alloc/logs/.web.stdout.fifo"), stderr_path:($na+"/alloc/logs/.web.stderr.fifo"),
    isolation:{task_dir:($na+"/web"), alloc_dir:($na+"/alloc"), secrets_dir:($na+"/web/secrets"),
               volumes:[{source:($na+"/alloc/data"), target:"/data"}]}}')
mgr StartTask sss $A web "$spec" >/dev/null || fail "the first isolated start of $A/web"
wait_until "$A/web (isolated) to plant" 300 exited web
[[ -L $LOGS && -c $NA/alloc/logs.old/.web.stderr.fifo && -L $NA/alloc/data ]] || fail "the task did not plant: $(ls -la $NA/alloc)"
forget web
start_refused web "$spec" ExecFailed "(stdout): Too many levels of symbolic links"
rm "$LOGS" && mv $NA/alloc/logs.old "$LOGS"
start_refused web "$spec" ExecFailed "(stderr): No such device or address"
rm "$LOGS/.web.stderr.fifo" && mkfifo -m 600 "$LOGS/.web.stderr.fifo"
start_refused web "$spec" ExecFailed "(volume-trees): Too many levels of symbolic links"
host_intact "alloc/logs and a volume source replaced by symlinks, a fifo by a device, by an isolated root task"
rm "$NA/alloc/data" && mv $NA/alloc/data.old $NA/alloc/data
# Handed-in dirs reached through a symlink are refused at admission.
ln -s /etc $NA/web/secrets-link && ln -s $NA/web $W/web-link
for f in "task_dir:$W/web-link" "secrets_dir:$NA/web/secrets-link" "alloc_dir:$W/web-link"; do
    start_refused web "$(jq -cn --arg f "${f%%:*}" --arg p "${f#*:}" '{command:"/bin/true", isolation:{($f):$p}}')" \
        InvalidSpec "isolation.${f%%:*} ${f#*:} is not a directory reached without a symlink"
done

# --- 3. every isolation setting, applied where accepted: the task's own
# /proc/self/status; an isolated task's cgroup view ---
probe='grep -E "^(CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status | tr -d "\t";
    echo "cgroup=$(tr "\n" " " </proc/self/cgroup)"; echo "units=$(find /sys/fs/cgroup -maxdepth 3 -type d \( -name "*.slice" -o -name "*.scope" \) 2>/dev/null | wc -l)";
    echo "cgfiles=$(ls /sys/fs/cgroup | wc -l)"; if touch /sys/fs/cgroup/x 2>/dev/null; then echo cgwrite=yes; else echo cgwrite=no; fi'
plant='ln -s /etc /local/evil; ln -s /etc/ts-hostile-victim /tmp/v; mkdir -p /local/a/b && ln -s / /local/a/b/root'
matrix() { # TASK USER ISOLATION [TAIL]
    local t=$1 user=$2 iso=$3 tail=${4:-} spec
    spec=$(jq -cn --arg p "$probe; $tail" --arg o "$OUT/$t" --arg u "$user" --argjson iso "$iso" '{command:"/bin/sh",
        args:["-c",$p], user:$u, stdout_path:$o, logs:false} + (if $iso == null then {} else {isolation:$iso} end)')
    out=$(mgr StartTask sss $A "$t" "$spec") || fail "$t: $out"
}
val() { sed -n "s/^$2[:=]//p" "$OUT/$1"; }
matrix m-root root null
matrix m-nobody nobody '{"filesystem":false,"cap_drop":["ALL"],"no_new_privs":true}'
matrix m-drop root '{"filesystem":false,"cap_drop":["ALL"],"no_new_privs":true}'
matrix m-bound root '{"filesystem":false,"cap_drop":["NET_RAW","SYS_ADMIN"]}'
matrix m-iso root '{}' "$plant; exec sleep 600"
matrix m-iso-nobody nobody '{"pid_mode":"host"}'
matrix m-iso-drop root '{"cap_drop":["ALL"],"cap_add":["KILL"],"no_new_privs":true}'
for t in m-root m-nobody m-drop m-bound m-iso-nobody m-iso-drop; do wait_until "$t to end" 300 exited $t; done
wait_until "m-iso's probe" 300 grep -q '^cgwrite=' "$OUT/m-iso"
printf '%-13s %-6s %-18s %-18s %-18s %s\n' task user CapEff CapBnd CapAmb NoNewPrivs
for t in m-root m-nobody m-drop m-bound m-iso m-iso-nobody m-iso-drop; do
    printf '%-13s %-6s %-18s %-18s %-18s %s\n' $t "$(grep -q nobody <<<"$t" && echo nobody || echo root)" \
        "$(val $t CapEff)" "$(val $t CapBnd)" "$(val $t CapAmb)" "$(val $t NoNewPrivs)"
done
check() { assert_eq "$(val $1 $2)" "$3" "$1 $2"; }
check m-root CapEff $FULL_CAPS
check m-root NoNewPrivs 0
for t in m-nobody m-drop; do
    check $t CapEff 0000000000000000
    check $t CapBnd 0000000000000000
    check $t NoNewPrivs 1
done
bound=$(printf '%016x' $((0x$FULL_CAPS & ~(1 << 13) & ~(1 << 21))))
check m-bound CapBnd $bound
check m-bound CapEff $bound
check m-iso CapEff $DEFAULT_CAPS
check m-iso CapBnd $DEFAULT_CAPS
check m-iso-nobody CapAmb $DEFAULT_CAPS
check m-iso-nobody CapEff $DEFAULT_CAPS
check m-iso-drop CapEff 0000000000000020
check m-iso-drop CapBnd 0000000000000020
check m-iso-drop NoNewPrivs 1
start_refused bad-cap-add '{"command":"/bin/true","isolation":{"filesystem":false,"cap_add":["KILL"]}}' InvalidSpec \
    'isolation.cap_add needs "filesystem": true'
start_refused bad-volume '{"command":"/bin/true","isolation":{"filesystem":false,"volumes":[{"source":"/srv","target":"/x"}]}}' \
    InvalidSpec 'isolation.volumes needs "filesystem": true'

# The cgroup view: isolated tasks see their own cgroup only, as root;
# on the host's root a task sees the host's tree.
for t in m-iso m-iso-nobody m-iso-drop; do
    echo "$t: /proc/self/cgroup: $(val $t cgroup); units under /sys/fs/cgroup: $(val $t units); files: $(val $t cgfiles)"
    grep -q nomad.slice <<<"$(val $t cgroup)" && fail "$t sees its cgroup's host path: $(val $t cgroup)"
    assert_eq "$(val $t units)" 0 "slices and scopes an isolated task $t sees under /sys/fs/cgroup"
    assert_eq "$(val $t cgwrite)" no "$t writes in /sys/fs/cgroup"
done
[[ $TASKSCOPE_VARIANT == v1 ]] || assert_eq "$(val m-iso cgroup)" "0::/ " "/proc/self/cgroup of an isolated task"
(($(val m-root units) > 0)) || fail "a task on the host's root sees no unit under /sys/fs/cgroup (the probe proves nothing)"
pid=$(task_field $A m-iso pid)
[[ "$(readlink /proc/$pid/ns/cgroup)" != "$(readlink /proc/self/ns/cgroup)" ]] || fail "m-iso shares the host's cgroup namespace"
ok "m-iso has a cgroup namespace of its own"
out=$($CTL exec $A m-iso -- sh -c "$probe" | tr -d '\r') || fail "exec into m-iso: $out"
echo "exec into m-iso: $(grep -E '^(cgroup|units)=' <<<"$out" | tr '\n' ' ')"
assert_eq "$(sed -n 's/^units=//p' <<<"$out")" 0 "slices and scopes an exec into m-iso sees"
assert_eq "$(sed -n 's/^cgroup=//p' <<<"$out")" "$(val m-iso cgroup)" "/proc/self/cgroup of an exec (the task's)"
echo "m-iso's cgroups as the host sees them: $(tr '\n' ' ' </proc/$pid/cgroup)"
echo "m-iso's /sys/fs/cgroup: $($CTL exec $A m-iso -- sh -c 'ls /sys/fs/cgroup | tr "\n" " "' | tr -d '\r')"

# The dirs taskscope made for m-iso go, following none of its links.
root=/var/lib/taskscope/tasks-root/$A/tasks/m-iso
[[ -L $root/local/evil && -L $root/tmp/v ]] || fail "m-iso planted no links: $(ls -la $root/local $root/tmp)"
mgr StopTask sssx $A m-iso SIGKILL 0 >/dev/null
wait_until "m-iso to end" 300 exited m-iso
for t in m-root m-nobody m-drop m-bound m-iso m-iso-nobody m-iso-drop; do forget $t; done
[[ ! -e $root ]] || fail "ForgetTask left $root"
host_intact "ForgetTask of a task that planted links to /etc in its dirs"

# --- 4. (cgroup v2) a kill reaches only the task's own scope: the record
# names a decoy cgroup (as "/" was read under an unexpected layout) ---
if [[ $(stat -f -c %T /sys/fs/cgroup) == cgroup2fs ]]; then
    mkdir /sys/fs/cgroup/hostile-decoy
    sleep 600 &
    DECOY=$!
    echo $DECOY >/sys/fs/cgroup/hostile-decoy/cgroup.procs
    mgr StartTask sss $A k '{"command":"/bin/sleep","args":["600"],"logs":false}' >/dev/null
    unit=$(task_field $A k unit)
    rec=/var/lib/taskscope/tasks/$unit.json
    systemctl stop taskscope-manager
    jq -c '.cgroup = "/hostile-decoy"' "$rec" >"$rec.new" && mv "$rec.new" "$rec"
    systemctl start taskscope-manager
    assert_eq "$(task_field $A k cgroup)" /hostile-decoy "the record's cgroup after the restart"
    mgr StopTask sssx $A k "" 0 >/dev/null
    wait_until "$A/k to be killed" 300 exited k
    assert_eq "$(task_field $A k signal)" 9 "the task's signal"
    kill -0 $DECOY 2>/dev/null || fail "the decoy in /hostile-decoy was killed: cgroup.kill was written outside the task's scope"
    ok "the decoy in the record's foreign cgroup lives; the task was killed through systemd"
    journalctl -u taskscope-manager --since -2min | grep "Not writing cgroup.kill" | tail -n1 || fail "no journal line for the refused cgroup"
fi

cleanup
trap - EXIT
ok "hostile paths"
