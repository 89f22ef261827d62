#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Isolation (issue 14): an isolated task lists only its root (chroot_env
# binds and its own dirs), cannot write /usr nor a tmpfs mounted below it,
# is pid 1 of its pid namespace, reads nothing from /proc/kcore, has
# exactly Nomad's default capability bounding set, secrets/ is its user's
# tmpfs, a ro volume refuses writes and a rw one takes them, its scope has
# DevicePolicy=closed; a pid_mode=host task sees the host's pid 1 and a
# non-root one has the set as ambient; bad specs get named errors;
# nothing of the tasks' mounts shows on the host; ForgetTask removes the
# task dirs; a start with a huge chroot_env path costs what a small one does.
# Volume propagation: a host-to-task volume shows a mount the host makes
# after the start, a bidirectional one shows the host a mount made in the
# task (also from a source on a mount made private), a private one neither;
# the host's mount table is as before once the tasks are gone, also after
# kill -9 of the manager in the middle of isolated starts; a volume target
# through a symlink to /etc in the task dir does not reach the host's /etc;
# a task's user is looked up in its root's /etc, and an exec into it runs
# as that user; a root exec into a task with cap_drop and no_new_privs gets
# the task's CapEff, CapBnd, NoNewPrivs and / (set up by the shim's code
# from the task's saved process spec), not the streamer's.
source "$(dirname "$0")/lib.sh"

W=/run/isotest
ROOTS=/var/lib/taskscope/tasks-root
SUB=/usr/share/isotest-sub
DEFAULT_CAPS=00000000a80405fb
ALLOCS=(iso1 iso2 isobad isofast isoprop isokill isouser isocap)
V=$W/vol

# The guest's own mount table, to compare with once the tasks are gone.
host_mounts() { findmnt -rn -o TARGET | sort -u; }
same_mounts() {
    local now
    now=$(host_mounts)
    [[ $now == "$mounts_before" ]] || fail "$1: the host's mount table changed: $(diff <(echo "$mounts_before") <(echo "$now") | tr '\n' ' ')"
    ok "$1: the host's mount table is as before ($(wc -l <<<"$now") mount points)"
}
not_running() { [[ "$(task_field "$1" "$2" state 2>/dev/null || true)" != running ]]; }

cleanup() {
    for a in "${ALLOCS[@]}"; do
        for t in probe hostpid small huge prop k0 k1 k2 k3 u c; do
            mgr StopTask sssx $a $t SIGKILL 0 >/dev/null 2>&1 || true
            mgr ForgetTask ss $a $t >/dev/null 2>&1 || true
        done
    done
    for m in $V/h2t/hostmnt $V/priv/hostmnt $V/bi/inside $W/privmnt/inside $W/privmnt $W/privmnt; do
        umount -l $m 2>/dev/null || true
    done
    umount $SUB 2>/dev/null || true
    rmdir $SUB 2>/dev/null || true
    rm -rf $W /srv/isotest-huge /srv/isotest-small
}
trap cleanup EXIT

systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl start taskscope-manager taskscope-streamer
mkdir -p $W/out $W/probe $W/out2
chmod 777 $W/out2
# A tmpfs below /usr: the task's /usr/share must be read-only all the way down.
mkdir -p $SUB && mount -t tmpfs -o size=1m tmpfs $SUB

cat >$W/probe/probe.sh <<'PROBE'
#!/bin/sh
out=${1:-/out/result}
{
echo "ls=$(ls / | tr '\n' ' ')"
echo "pid=$$"
echo "pid1=$(tr '\0' ' ' </proc/1/cmdline)"
grep -E '^Cap(Bnd|Eff|Amb):' /proc/self/status | tr -d '\t' | tr ':' '='
if touch /usr/isotest 2>/dev/null; then echo usr=writable; else echo usr=ro; fi
if touch /usr/share/isotest-sub/x 2>/dev/null; then echo sub=writable; else echo sub=ro; fi
echo "kcore=$(wc -c </proc/kcore 2>/dev/null || echo unreadable)"
if echo x 2>/dev/null >/proc/sys/kernel/hostname; then echo procsys=writable; else echo procsys=ro; fi
echo "secrets=$(stat -c '%a %U' /secrets) $(stat -f -c %T /secrets)"
echo "tmp=$(stat -c %a /tmp)"
if touch /probe/x 2>/dev/null; then echo rovol=writable; else echo rovol=ro; fi
echo "devnull=$(echo hi >/dev/null && echo ok)"
echo "end"
} >"$out" 2>&1
exec sleep 600
PROBE
chmod 755 $W/probe/probe.sh

# --- an isolated root task with a ro and a rw volume (root said: an
# isolated task without a user runs as nobody) ---
spec=$(jq -cn --arg w $W '{command:"/bin/sh", args:["/probe/probe.sh"], user:"root",
    isolation:{volumes:[{source:($w+"/probe"),target:"/probe",read_only:true},
                        {source:($w+"/out"),target:"/out"}]}}')
out=$(mgr StartTask sss iso1 probe "$spec") || fail "isolated StartTask: $out"
ok "isolated task iso1/probe started"
wait_until "the probe's result" 300 grep -q '^end' $W/out/result
cat $W/out/result
r() { sed -n "s/^$1=//p" $W/out/result; }
ls_root=$(r ls)
for d in alloc dev etc local proc secrets sys tmp usr probe out; do
    grep -qw "$d" <<<"$ls_root" || fail "/ of the task lacks $d: $ls_root"
done
for d in var home root boot srv opt mnt media; do
    grep -qw "$d" <<<"$ls_root" && fail "/ of the task shows host dir $d: $ls_root"
done
ok "the task's / holds only chroot_env paths and its own dirs: $ls_root"
assert_eq "$(r pid)" 1 "the task's pid in its pid namespace"
assert_eq "$(r CapBnd)" $DEFAULT_CAPS "CapBnd (Nomad's exec default set)"
assert_eq "$(r CapEff)" $DEFAULT_CAPS "CapEff"
assert_eq "$(r usr)" ro "write to /usr"
assert_eq "$(r sub)" ro "write to a tmpfs mounted below /usr/share"
assert_eq "$(r kcore)" 0 "bytes read from /proc/kcore"
assert_eq "$(r procsys)" ro "write to /proc/sys/kernel/hostname"
assert_eq "$(r secrets)" "700 root tmpfs" "secrets/ mode, owner, fs"
assert_eq "$(r tmp)" 1777 "tmp/ mode"
assert_eq "$(r rovol)" ro "write to the read-only volume"
assert_eq "$(r devnull)" ok "write to /dev/null"
[[ -s $W/out/result ]] && ok "the rw volume took the task's writes"

unit=$(task_field iso1 probe unit)
assert_eq "$(systemctl show -p DevicePolicy --value "$unit")" closed "DevicePolicy of $unit"
allow=$(systemctl show -p DeviceAllow --value "$unit")
echo "DeviceAllow: $allow"
grep -q '/dev/null rwm' <<<"$allow" || fail "DeviceAllow lacks /dev/null: $allow"
ok "DeviceAllow holds the standard devices"

# The task's mounts are in its namespace alone.
leaked=$(grep -c "$ROOTS" /proc/self/mountinfo || true)
assert_eq "$leaked" 0 "host mounts under $ROOTS while the task runs"
pid=$(task_field iso1 probe pid)
[[ "$(readlink /proc/$pid/ns/pid)" != "$(readlink /proc/self/ns/pid)" ]] || fail "the task shares the host's pid namespace"
[[ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]] || fail "the task shares the host's mount namespace"
[[ "$(readlink /proc/$pid/ns/ipc)" != "$(readlink /proc/self/ns/ipc)" ]] || fail "the task shares the host's ipc namespace"
ok "task pid $pid has its own pid, mount and ipc namespaces"

# --- exec into the isolated task: its root, its pid namespace, its capability set ---
out=$($CTL exec iso1 probe -- sh -c 'echo "ls=$(ls / | tr "\n" " ")"; grep -E "^Cap(Bnd|Eff):" /proc/self/status | tr -d "\t"; echo "pid1=$(tr "\0" " " </proc/1/cmdline)"') ||
    fail "exec into the isolated task: $out"
echo "$out"
grep -q "^ls=$ls_root\$" <<<"$out" || fail "exec sees another root than the task's: $out"
grep -q "^CapBnd:$DEFAULT_CAPS" <<<"$out" || fail "exec's bounding set is not the task's: $out"
grep -q "^CapEff:$DEFAULT_CAPS" <<<"$out" || fail "exec (root) has other effective capabilities than the task: $out"
grep -q "^pid1=/bin/sh /probe/probe.sh" <<<"$out" || grep -q "^pid1=sleep 600" <<<"$out" || fail "exec is not in the task's pid namespace: $out"
ok "exec into the isolated task: same root, pid namespace and capability set"

# --- exec takes the task's own capability set and no_new_privs ---
spec='{"command":"/bin/sleep","args":["600"],"logs":false,"user":"root","isolation":{"cap_drop":["NET_BIND_SERVICE","KILL"],"no_new_privs":true}}'
out=$(mgr StartTask sss isocap c "$spec") || fail "StartTask with cap_drop: $out"
cpid=$(task_field isocap c pid)
task_eff=$(sed -n 's/^CapEff:\t//p' /proc/$cpid/status)
[[ $task_eff != "$DEFAULT_CAPS" ]] || fail "cap_drop left the task the default set"
task_bnd=$(sed -n 's/^CapBnd:\t//p' /proc/$cpid/status)
task_ls=$(ls /proc/$cpid/root/ | tr '\n' ' ')
streamer_bnd=$(sed -n 's/^CapBnd:\t//p' /proc/"$(systemctl show -p MainPID --value taskscope-streamer)"/status)
[[ $streamer_bnd != "$task_bnd" ]] || fail "the streamer has the task's bounding set: the test would prove nothing"
out=$($CTL exec isocap c -- sh -c 'grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status | tr -d "\t"; echo "ls=$(ls / | tr "\n" " ")"' | tr -d '\r') ||
    fail "exec into the cap_drop task: $out"
echo "$out"
assert_eq "$(sed -n 's/^CapEff://p' <<<"$out")" "$task_eff" "CapEff of a root exec into a task with cap_drop (the task's)"
assert_eq "$(sed -n 's/^CapBnd://p' <<<"$out")" "$task_bnd" "CapBnd of a root exec into a task with cap_drop (the task's, not the streamer's $streamer_bnd)"
assert_eq "$(sed -n 's/^NoNewPrivs://p' <<<"$out")" 1 "NoNewPrivs of an exec into a no_new_privs task"
assert_eq "$(sed -n 's/^ls=//p' <<<"$out")" "$task_ls" "/ of an exec into the cap_drop task (the task's)"
ok "exec set up by the shim from the task's process spec: the task's CapEff, CapBnd, NoNewPrivs and /"

# --- volume propagation ---
mkdir -p $V/bi/inside $V/h2t/inside $V/h2t/hostmnt $V/priv/inside $V/priv/hostmnt $W/privmnt
# A source on a mount made private: the manager gives it a shared bind onto itself.
mount -t tmpfs -o size=1m tmpfs $W/privmnt && mount --make-private $W/privmnt && mkdir $W/privmnt/inside
mounts_before=$(host_mounts)
spec=$(jq -cn --arg v $V --arg p $W/privmnt '{command:"/bin/sleep", args:["600"], logs:false, user:"root",
    isolation:{volumes:[{source:($v+"/bi"),target:"/bi",propagation:"bidirectional"},
                        {source:($v+"/h2t"),target:"/h2t",propagation:"host-to-task"},
                        {source:($v+"/priv"),target:"/priv",propagation:"private"},
                        {source:$p,target:"/pbi",propagation:"bidirectional"}]}}')
out=$(mgr StartTask sss isoprop prop "$spec") || fail "StartTask with volumes of each propagation: $out"
pid=$(task_field isoprop prop pid)
mount -t tmpfs -o size=1m tmpfs $V/h2t/hostmnt
mount -t tmpfs -o size=1m tmpfs $V/priv/hostmnt
# The task's mount table, its paths as the task sees them.
in_task() { awk -v p="$1" '$5 == p {f = 1} END {exit !f}' /proc/$pid/mountinfo; }
in_task /h2t/hostmnt || fail "host-to-task volume: the task does not see a mount the host made after the start"
in_task /priv/hostmnt && fail "private volume: the task sees a mount the host made"
ok "the task sees the host's later mount in the host-to-task volume, not in the private one"
for d in bi h2t priv pbi; do
    nsenter -t $pid -m -r /bin/mount -t tmpfs -o size=1m tmpfs /$d/inside || fail "mount in the task's /$d"
done
findmnt $V/bi/inside >/dev/null || fail "bidirectional volume: the host does not see the task's mount"
findmnt $W/privmnt/inside >/dev/null || fail "bidirectional volume on a private host mount: the host does not see the task's mount"
findmnt $V/h2t/inside >/dev/null && fail "host-to-task volume: the host sees the task's mount"
findmnt $V/priv/inside >/dev/null && fail "private volume: the host sees the task's mount"
ok "the host sees the task's mounts in the bidirectional volumes only"
mgr StopTask sssx isoprop prop SIGKILL 0 >/dev/null
wait_until "isoprop/prop to end" 300 not_running isoprop prop
mgr ForgetTask ss isoprop prop >/dev/null
# What the test mounted itself, and what the task sent out on purpose.
umount $V/h2t/hostmnt $V/priv/hostmnt $V/bi/inside $W/privmnt/inside
same_mounts "once the task is gone"

# --- kill -9 of the manager in the middle of isolated starts ---
spec=$(jq -cn --arg v $V '{command:"/bin/sleep", args:["600"], logs:false, user:"root",
    isolation:{volumes:[{source:($v+"/bi"),target:"/bi",propagation:"bidirectional"},
                        {source:($v+"/priv"),target:"/priv"}]}}')
# The kills fall at a quarter, half and three quarters of a start's time.
t0=$(date +%s%N)
mgr StartTask sss isokill k0 "$spec" >/dev/null || fail "start isokill/k0"
full_ms=$((($(date +%s%N) - t0) / 1000000))
mgr StopTask sssx isokill k0 SIGKILL 0 >/dev/null
wait_until "isokill/k0 to end" 300 not_running isokill k0
mgr ForgetTask ss isokill k0 >/dev/null
echo "an isolated start takes ${full_ms} ms"
n=0
for q in 1 2 3; do
    n=$((n + 1))
    delay=$(awk -v t=$full_ms -v q=$q 'BEGIN {printf "%.3f", t * q / 4000}')
    systemctl reset-failed taskscope-manager 2>/dev/null || true
    mgr StartTask sss isokill k$n "$spec" >/dev/null 2>&1 &
    sleep $delay  # kept: the kill falls this far into the start on purpose; no event marks that point
    kill -9 "$(systemctl show -p MainPID --value taskscope-manager)"
    wait $! || true
    systemctl reset-failed taskscope-manager 2>/dev/null || true
    systemctl start taskscope-manager
    echo "killed the manager ${delay}s into a start: isokill/k$n is $(task_field isokill k$n state 2>/dev/null || echo unknown)"
done
for t in k1 k2 k3; do
    mgr StopTask sssx isokill $t SIGKILL 0 >/dev/null 2>&1 || true
    wait_until "isokill/$t to end" 300 not_running isokill $t
    mgr ForgetTask ss isokill $t >/dev/null 2>&1 || true
done
assert_eq "$(grep -c "$ROOTS" /proc/self/mountinfo || true)" 0 "host mounts under $ROOTS after the killed starts"
same_mounts "after the killed starts"
# A kill in the first instants of a start (before its record is written)
# leaves its dirs with no record naming them: the next manager removes them.
mkdir -p "$ROOTS/isocut/tasks/t/tmp" "$ROOTS/isocut/alloc"
systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl restart taskscope-manager
mgr ListTasks >/dev/null
[[ ! -e $ROOTS/isocut ]] || fail "dirs no task record names were left: $(find "$ROOTS/isocut" | head -3)"
ok "dirs no task record names are removed when the manager starts"

# --- pid_mode host, as nobody: the host's pid 1, the set as ambient ---
spec=$(jq -cn --arg w $W '{command:"/bin/sh", args:["/probe/probe.sh","/out/result"], user:"nobody",
    isolation:{pid_mode:"host", volumes:[{source:($w+"/probe"),target:"/probe",read_only:true},
                                         {source:($w+"/out2"),target:"/out"}]}}')
out=$(mgr StartTask sss iso2 hostpid "$spec") || fail "pid_mode=host StartTask: $out"
wait_until "the host-pid probe's result" 300 grep -q '^end' $W/out2/result
cat $W/out2/result
r2() { sed -n "s/^$1=//p" $W/out2/result; }
[[ "$(r2 pid)" != 1 ]] || fail "a pid_mode=host task is pid 1"
host_pid1=$(tr '\0' ' ' </proc/1/cmdline)
assert_eq "$(r2 pid1)" "$host_pid1" "pid 1 as a pid_mode=host task sees it (the host's)"
ok "pid_mode=host: pid $(r2 pid), the host's pid 1 is $(r2 pid1)"
assert_eq "$(r2 CapAmb)" $DEFAULT_CAPS "CapAmb of a non-root isolated task"
assert_eq "$(r2 secrets)" "700 nobody tmpfs" "secrets/ of a nobody task"

# --- the user is looked up in the task's root, not on the host ---
# A handed-in task dir with its own /etc (chroot_env without /etc) names a
# user the host does not have.
U=$W/userroot
mkdir -p $U/etc $W/out3 && chmod 777 $W/out3
echo 'rootonly:x:4242:4300::/:/bin/sh' >$U/etc/passwd
printf 'rootgrp:x:4300:\nrootextra:x:4301:rootonly\n' >$U/etc/group
getent passwd rootonly >/dev/null && fail "the host has a user rootonly"
spec=$(jq -cn --arg w $W '{command:"/bin/sh", args:["-c","echo $(id -u) $(id -G) >/out/ids; exec sleep 600"], user:"rootonly",
    logs:false, isolation:{task_dir:($w+"/userroot"), chroot_env:["/bin","/lib","/lib64","/sbin","/usr"],
                           volumes:[{source:($w+"/out3"),target:"/out"}]}}')
out=$(mgr StartTask sss isouser u "$spec") || fail "StartTask as a user of the root only: $out"
wait_until "the ids from the root's user" 300 test -s $W/out3/ids
assert_eq "$(cat $W/out3/ids)" "4242 4300 4301" "uid, gid and groups of rootonly from the root's /etc"
# An exec runs as the task's user too, which the host does not know (the
# streamer never looks it up: the shim takes the numbers from the spec).
out=$($CTL exec isouser u -- sh -c 'echo "ids=$(id -u) $(id -G)"' | tr -d '\r') || fail "exec as a user of the root only: $out"
assert_eq "$(sed -n 's/^ids=//p' <<<"$out")" "4242 4300 4301" "uid, gid and groups of an exec into the rootonly task"
ok "exec as a user that exists only in the task's root"
mgr StopTask sssx isouser u SIGKILL 0 >/dev/null
wait_until "isouser/u to end" 300 not_running isouser u
mgr ForgetTask ss isouser u >/dev/null

# --- bad specs: named errors, nothing made ---
# dbus-send prints the error's name (busctl only its message).
bad() {
    local what=$1 spec=$2 want=$3 name=${4:-InvalidSpec} out
    if out=$(dbus-send --system --print-reply --dest=$I $M $I.StartTask string:isobad string:t "string:$spec" 2>&1); then
        fail "$what was accepted"
    fi
    grep -qF "org.taskscope.Error.$name" <<<"$out" || fail "$what: got '$out', want org.taskscope.Error.$name"
    grep -qF -- "$want" <<<"$out" || fail "$what: got '$out', want $want"
    ok "$what: $out"
}
bad "bidirectional read-only volume" \
    '{"command":"/bin/true","isolation":{"volumes":[{"source":"/srv","target":"/x","read_only":true,"propagation":"bidirectional"}]}}' \
    "bidirectional volume cannot be read-only"
bad "capability outside the allow-list" '{"command":"/bin/true","isolation":{"cap_add":["SYS_ADMIN"]}}' "SYS_ADMIN"
bad "unknown capability" '{"command":"/bin/true","isolation":{"cap_add":["BOGUS"]}}' "unknown capability BOGUS"
bad "volume target with .." '{"command":"/bin/true","isolation":{"volumes":[{"source":"/srv","target":"/a/../../etc"}]}}' \
    "without '..'"
bad "relative task_dir" '{"command":"/bin/true","isolation":{"task_dir":"x"}}' "must be an absolute path"
bad "missing volume source" \
    '{"command":"/bin/true","isolation":{"volumes":[{"source":"/nonexistent-isotest","target":"/x"}]}}' "(volume-trees)" ExecFailed
# A symlink in a handed-in task dir leads nowhere out of the root: the
# volume target /evil/x resolves to the root's own (read-only) /etc.
mkdir -p $W/evil-root $W/evilsrc && ln -sfn /etc $W/evil-root/evil
bad "volume target through a symlink to /etc" \
    "$(jq -cn --arg w $W '{command:"/bin/true",isolation:{task_dir:($w+"/evil-root"),volumes:[{source:($w+"/evilsrc"),target:"/evil/x"}]}}')" \
    "(volumes)" ExecFailed
[[ ! -e /etc/x ]] || fail "a volume target through a symlink made the host's /etc/x"
findmnt /etc/x >/dev/null && fail "a volume target through a symlink mounted onto the host's /etc/x"
ok "the symlinked volume target stayed in the root"
[[ ! -e $ROOTS/isobad ]] || fail "a refused start left $(find $ROOTS/isobad | head -3)"
ok "refused starts left no task dir"

# --- forget removes the task dirs ---
[[ -d $ROOTS/iso1/tasks/probe ]] || fail "no task dir $ROOTS/iso1/tasks/probe"
mgr StopTask sssx iso1 probe SIGKILL 0 >/dev/null
wait_until "iso1/probe to end" 300 bash -c "[[ \$(busctl --json=short call $I $M $I GetTask ss iso1 probe | jq -r '.data[0]' | jq -r .state) != running ]]"
mgr ForgetTask ss iso1 probe >/dev/null
[[ ! -e $ROOTS/iso1 ]] || fail "ForgetTask left $(find $ROOTS/iso1 | head)"
ok "ForgetTask removed $ROOTS/iso1 (the task dir and the allocation's)"

# --- start time does not depend on the size of a chroot_env path ---
mkdir -p /srv/isotest-huge/tree /srv/isotest-small
(cd /srv/isotest-huge/tree && seq -f 'f%05g' 1 20000 | xargs touch)
fallocate -l 512M /srv/isotest-huge/blob 2>/dev/null || dd if=/dev/zero of=/srv/isotest-huge/blob bs=1M count=64 status=none
env_base='["/bin","/etc","/lib","/lib64","/sbin","/usr"]'
start_ms() {
    local name=$1 extra=$2 t0 t1
    local spec
    spec=$(jq -cn --argjson e "$env_base" --arg x "$extra" '{command:"/bin/true", logs:false, user:"root", isolation:{chroot_env:($e+[$x])}}')
    t0=$(date +%s%N)
    mgr StartTask sss isofast $name "$spec" >/dev/null || fail "start $name"
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
}
small=$(start_ms small /srv/isotest-small)
huge=$(start_ms huge /srv/isotest-huge)
echo "start with a small chroot_env path: ${small} ms; with $(du -sh /srv/isotest-huge | cut -f1) and 20000 files: ${huge} ms"
((huge <= 3 * small + 1000)) || fail "a huge chroot_env path made the start slower: $huge ms vs $small ms"
ok "start time independent of the chroot_env size ($huge ms vs $small ms)"
du_task=$(du -sk $ROOTS/isofast/tasks/huge | cut -f1)
echo "disk used by the huge task's dir: ${du_task} KiB (mount points only)"
((du_task < 256)) || fail "the task dir holds $du_task KiB: copied?"

cleanup
trap - EXIT
leaked=$(grep -c "$ROOTS" /proc/self/mountinfo || true)
assert_eq "$leaked" 0 "host mounts under $ROOTS after the tasks"
# ForgetTask is refused while a task is still stopping (cleanup kills and
# forgets at once): forget again until the dirs go, within a bound.
dirs_gone() {
    local a t
    for a in iso2 isofast isoprop isokill; do
        [[ -e $ROOTS/$a ]] || continue
        for t in probe hostpid small huge prop k0 k1 k2 k3 u c; do
            mgr ForgetTask ss $a $t >/dev/null 2>&1 || true
        done
        return 1
    done
}
wait_until "the task dirs of forgotten tasks to go (left: $(ls $ROOTS))" 300 dirs_gone
ok "no task dir of this test left under $ROOTS"
ok "isolation"
