#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Issue 47, the node's side of the exec/raw_exec drop-in, proven inside
# the tasks:
# - ulimits and oom_score_adj: /proc/self/limits and oom_score_adj of a
#   task on the host's root, of an isolated one and of a command exec'd
#   into it; a task without oom_score_adj has 0 although the manager's
#   own score is not;
# - devices: a character device node made for the test (/dev/kmsg's
#   numbers, 1:11, which no standard node of a private /dev has) bound at
#   its task path is writable in the task that was given it (the line
#   shows in the kernel log) and allowed in its scope; a device-less task
#   has no such node, and one it makes itself with the same numbers
#   cannot be opened (DevicePolicy=closed); a device-less task still sees
#   only the private /dev's standard nodes;
# - disk IO: IOWeight= and the bandwidth and IOPS limits of the root disk
#   in `systemctl show` and the cgroup's io.max/io.weight (v2); on v1 the
#   weight and bandwidth as systemd's blkio equivalents, and an IOPS
#   limit refused with NotSupported naming the key (systemd applies none
#   there);
# - network files: an isolated task in its allocation's bridge network
#   has the /etc/resolv.conf of its spec's dns (servers, searches,
#   options) and an /etc/hosts naming the allocation, both read-only; an
#   isolated task on the host's network has the host's resolv.conf; the
#   host's own files are untouched;
# - bad input (ulimit soft above hard, unknown ulimit, a device that does
#   not exist, an IO limit on something that is not a block device, a
#   score out of range) gets a named error that names the key, and
#   starts nothing;
# - users: through the bus, an isolated task without a user runs as
#   nobody (exec's default), one on the host's root as root (raw_exec's).
source "$(dirname "$0")/lib.sh"
# A silent exit under set -e says nothing: name the line that failed.
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (status $?)"' ERR

W=/run/dropintest
A=dropin
DEV=/dev/taskscope-test0
TASKS="raw iso plain nodev io bad hostnet who whohost"
NA=dropin-net
V=v1
[[ $(stat -f -c %T /sys/fs/cgroup) == cgroup2fs ]] && V=v2

cleanup() {
    set +e
    for t in $TASKS; do
        mgr StopTask sssx $A $t SIGKILL 0 >/dev/null 2>&1
        mgr ForgetTask ss $A $t >/dev/null 2>&1
    done
    mgr StopTask sssx $NA web SIGKILL 0 >/dev/null 2>&1
    mgr ForgetTask ss $NA web >/dev/null 2>&1
    $CTL network destroy $NA >/dev/null 2>&1
    ip link del node0 2>/dev/null
    ip link del nomad 2>/dev/null
    [[ -n ${made_resolv:-} ]] && rm -f /etc/resolv.conf
    streamer_off
    rm -f $DEV
    rm -rf $W
}
trap cleanup EXIT

systemctl reset-failed taskscope-manager 2>/dev/null || true
streamer_on
mkdir -p $W/out
chmod 777 $W/out
not_running() { [[ "$(task_field $A "$1" state 2>/dev/null || true)" != running ]]; }
stop_task() {
    mgr StopTask sssx $A "$1" SIGKILL 0 >/dev/null
    wait_until "$A/$1 to end" 300 not_running "$1"
    mgr ForgetTask ss $A "$1" >/dev/null
}

# What a task reports about itself: its limits and score, into FILE.
report='f=$0; { cat /proc/self/limits; echo "oom=$(cat /proc/self/oom_score_adj)"; echo end; } >"$f"; exec sleep 600'
limit() { awk -v n="$2" 'index($0, n) == 1 { sub(n, ""); print $1, $2 }' "$1"; }
check_limits() { # FILE WHAT
    assert_eq "$(limit "$1" "Max open files")" "4096 8192" "$2: nofile"
    assert_eq "$(limit "$1" "Max core file size")" "0 0" "$2: core"
    assert_eq "$(limit "$1" "Max locked memory")" "unlimited unlimited" "$2: memlock"
    assert_eq "$(limit "$1" "Max processes")" "1000 unlimited" "$2: nproc"
    assert_eq "$(sed -n 's/^oom=//p' "$1")" 300 "$2: oom_score_adj"
}
LIMITS='{"nofile":"4096:8192","core":"0","memlock":"unlimited","nproc":"1000:unlimited"}'

# --- ulimits and oom_score_adj, on the host's root ---
spec=$(jq -cn --arg r "$report" --arg o $W/out/raw --argjson u "$LIMITS" \
    '{command:"/bin/sh", args:["-c",$r,$o], user:"root", ulimits:$u, oom_score_adj:300}')
out=$(mgr StartTask sss $A raw "$spec") || fail "StartTask raw: $out"
wait_until "raw's report" 300 grep -q '^end' $W/out/raw
check_limits $W/out/raw "a task on the host's root"

# --- the same, isolated, and a command exec'd into it ---
spec=$(jq -cn --arg r "$report" --arg w $W/out --argjson u "$LIMITS" \
    '{command:"/bin/sh", args:["-c",$r,"/out/iso"], user:"root", ulimits:$u, oom_score_adj:300,
      isolation:{volumes:[{source:$w,target:"/out"}]}}')
out=$(mgr StartTask sss $A iso "$spec") || fail "StartTask iso: $out"
wait_until "iso's report" 300 grep -q '^end' $W/out/iso
check_limits $W/out/iso "an isolated task"
$CTL exec $A iso -- sh -c "${report%%; exec sleep 600}" /out/exec >/dev/null
wait_until "the exec's report" 300 grep -q '^end' $W/out/exec
check_limits $W/out/exec "a command exec'd into the isolated task"
stop_task iso

# --- no oom_score_adj: 0, whatever the manager's own score ---
mpid=$(systemctl show -p MainPID --value taskscope-manager)
echo -500 >/proc/$mpid/oom_score_adj
spec=$(jq -cn --arg r "$report" --arg o $W/out/plain '{command:"/bin/sh", args:["-c",$r,$o], user:"root"}')
out=$(mgr StartTask sss $A plain "$spec") || fail "StartTask plain: $out"
wait_until "plain's report" 300 grep -q '^end' $W/out/plain
assert_eq "$(cat /proc/$mpid/oom_score_adj)" -500 "the manager's own oom_score_adj"
assert_eq "$(sed -n 's/^oom=//p' $W/out/plain)" 0 "oom_score_adj of a task that asked for none"
echo 0 >/proc/$mpid/oom_score_adj
stop_task plain
stop_task raw

# --- no user: nobody in its own root, root on the host's ---
ids='echo "$(id -u) $(id -g)" >"$0"; exec sleep 600'
spec=$(jq -cn --arg p "$ids" --arg w $W/out '{command:"/bin/sh", args:["-c",$p,"/out/who"], logs:false,
    isolation:{volumes:[{source:$w,target:"/out"}]}}')
out=$(mgr StartTask sss $A who "$spec") || fail "StartTask who: $out"
spec=$(jq -cn --arg p "$ids" --arg o $W/out/whohost '{command:"/bin/sh", args:["-c",$p,$o], logs:false}')
out=$(mgr StartTask sss $A whohost "$spec") || fail "StartTask whohost: $out"
wait_until "the ids of the tasks without a user" 300 test -s $W/out/who -a -s $W/out/whohost
assert_eq "$(cat $W/out/who)" "$(id -u nobody) $(id -g nobody)" "an isolated task without a user"
assert_eq "$(cat $W/out/whohost)" "0 0" "a task on the host's root without a user"
ok "without a user: nobody isolated ($(cat $W/out/who)), root on the host's root"
stop_task who
stop_task whohost

# --- devices ---
# /dev/kmsg's numbers: a write shows in the kernel log, and no node of
# the private /dev (nor its scope's standard DeviceAllow= list) has them.
mknod -m 0666 $DEV c 1 11
marker="taskscope-dropin-$$-$RANDOM"
probe='f=$0; m=$1; {
  if [ -c /dev/tst ] && echo "$m" >/dev/tst 2>/dev/null; then echo dev=written; else echo dev=refused; fi
  echo "host_node=$([ -e /dev/taskscope-test0 ] && echo present || echo absent)"
  if mknod /dev/own c 1 11 2>/dev/null; then
    if echo "$m-own" >/dev/own 2>/dev/null; then echo own=written; else echo own=refused; fi
  else echo own=nomknod; fi
  echo "ls=$(ls /dev | tr "\n" " ")"
  echo end; } >"$f"; exec sleep 600'
spec=$(jq -cn --arg p "$probe" --arg w $W/out --arg m "$marker" --arg d $DEV \
    '{command:"/bin/sh", args:["-c",$p,"/out/dev",$m], user:"root",
      devices:[{host_path:$d, task_path:"/dev/tst", permissions:"rw"}],
      isolation:{volumes:[{source:$w,target:"/out"}]}}')
out=$(mgr StartTask sss $A iso "$spec") || fail "StartTask iso with a device: $out"
wait_until "the device task's report" 300 grep -q '^end' $W/out/dev
cat $W/out/dev
r() { sed -n "s/^$2=//p" "$1"; }
assert_eq "$(r $W/out/dev dev)" written "a write to the task's device"
dmesg | quiet_grep -F "$marker" || fail "the task's write to its device is not in the kernel log"
ok "the task's write reached the device (kernel log: $(dmesg | grep -F "$marker" | head -1))"
assert_eq "$(r $W/out/dev host_node)" absent "the host's node at its host path, in the task"
unit=$(task_field $A iso unit)
allow=$(systemctl show -p DeviceAllow --value "$unit")
grep -q "$DEV rw" <<<"$allow" || fail "DeviceAllow of $unit lacks $DEV rw: $allow"
ok "DeviceAllow of $unit has $DEV rw"
stop_task iso

spec=$(jq -cn --arg p "$probe" --arg w $W/out --arg m "$marker" \
    '{command:"/bin/sh", args:["-c",$p,"/out/nodev",$m], user:"root",
      isolation:{volumes:[{source:$w,target:"/out"}]}}')
out=$(mgr StartTask sss $A nodev "$spec") || fail "StartTask nodev: $out"
wait_until "the device-less task's report" 300 grep -q '^end' $W/out/nodev
cat $W/out/nodev
assert_eq "$(r $W/out/nodev dev)" refused "a write to /dev/tst in a task without devices"
assert_eq "$(r $W/out/nodev host_node)" absent "the host's test node in a task without devices"
# Its scope refuses the node's making (mknod needs "m") or, where made, its opening.
own=$(r $W/out/nodev own)
[[ $own == nomknod || $own == refused ]] || fail "a device-less task's own node with the device's numbers: $own"
ok "a device-less task's own node with the device's numbers: $own"
dmesg | quiet_grep -F "$marker-own" && fail "a device-less task wrote to the device through its own node"
devs=$(r $W/out/nodev ls)
for d in $devs; do
    case $d in
    null | zero | full | random | urandom | tty | fd | stdin | stdout | stderr | ptmx | pts | shm | mqueue | own) ;;
    *) fail "the device-less task's /dev has $d: $devs" ;;
    esac
done
ok "a device-less task's /dev: $devs"
stop_task nodev

# --- disk IO ---
disk=$(findmnt -no SOURCE /)
[[ -b $disk ]] || fail "the root's source $disk is not a block device"
maj=$(printf %d 0x$(stat -c %t "$disk"))
min=$(printf %d 0x$(stat -c %T "$disk"))
io_spec() { # IOPS(true|false)
    jq -cn --arg d "$disk" --argjson iops "$1" '{command:"/bin/sleep", args:["600"], resources:({io_weight:200,
        io_read_bps:{($d):1048576}, io_write_bps:{($d):2097152}} +
        (if $iops then {io_read_iops:{($d):100}, io_write_iops:{($d):50}} else {} end))}'
}
show() { systemctl show -p "$2" --value "$1"; }
if [[ $V == v2 ]]; then
    out=$(mgr StartTask sss $A io "$(io_spec true)") || fail "StartTask io: $out"
    unit=$(task_field $A io unit)
    assert_eq "$(show "$unit" IOWeight)" 200 "IOWeight of $unit"
    assert_eq "$(show "$unit" IOReadBandwidthMax)" "$disk 1048576" "IOReadBandwidthMax of $unit"
    assert_eq "$(show "$unit" IOWriteBandwidthMax)" "$disk 2097152" "IOWriteBandwidthMax of $unit"
    assert_eq "$(show "$unit" IOReadIOPSMax)" "$disk 100" "IOReadIOPSMax of $unit"
    assert_eq "$(show "$unit" IOWriteIOPSMax)" "$disk 50" "IOWriteIOPSMax of $unit"
    cg=$(task_cgroup_dir $A io)
    max=$(cat "$cg/io.max")
    assert_eq "$max" "$maj:$min rbps=1048576 wbps=2097152 riops=100 wiops=50" "io.max of the task's cgroup"
    if [[ -e $cg/io.weight ]]; then
        ok "io.weight of the task's cgroup: $(tr '\n' ' ' <"$cg/io.weight")"
    else
        echo "note: no io.weight file in $cg (no io.weight-capable policy on this kernel); IOWeight= is systemd's"
    fi
else
    bad_out=$(dbus-send --system --print-reply --dest=$I $M $I.StartTask string:$A string:io "string:$(io_spec true)" 2>&1) &&
        fail "an IOPS limit on cgroup v1 was accepted"
    grep -qF org.taskscope.Error.NotSupported <<<"$bad_out" || fail "IOPS on v1: $bad_out"
    grep -qF resources.io_read_iops <<<"$bad_out" || fail "IOPS on v1 does not name the key: $bad_out"
    ok "an IOPS limit on cgroup v1: $bad_out"
    out=$(mgr StartTask sss $A io "$(io_spec false)") || fail "StartTask io (v1, no IOPS): $out"
    unit=$(task_field $A io unit)
    assert_eq "$(show "$unit" IOWeight)" 200 "IOWeight of $unit"
    assert_eq "$(show "$unit" IOReadBandwidthMax)" "$disk 1048576" "IOReadBandwidthMax of $unit"
    cg=/sys/fs/cgroup/blkio$(task_field $A io cgroup)
    [[ -d $cg ]] || fail "no blkio cgroup $cg for $unit"
    assert_eq "$(cat "$cg/blkio.throttle.read_bps_device")" "$maj:$min 1048576" "blkio.throttle.read_bps_device (IOReadBandwidthMax= as systemd applies it on v1)"
    assert_eq "$(cat "$cg/blkio.throttle.write_bps_device")" "$maj:$min 2097152" "blkio.throttle.write_bps_device"
    for f in blkio.weight blkio.bfq.weight; do
        [[ -e $cg/$f ]] && echo "note: $f of the task's cgroup: $(tr '\n' ' ' <"$cg/$f")"
    done
    [[ -e $cg/blkio.weight || -e $cg/blkio.bfq.weight ]] ||
        echo "note: no blkio weight file in $cg (no proportional policy on this kernel's v1): IOWeight= is shown but not applied"
fi
stop_task io

# --- bad input: named errors naming the key, nothing started ---
bad() {
    local what=$1 spec=$2 want=$3 name=$4 out
    if out=$(dbus-send --system --print-reply --dest=$I $M $I.StartTask string:$A string:bad "string:$spec" 2>&1); then
        fail "$what was accepted"
    fi
    grep -qF "org.taskscope.Error.$name" <<<"$out" || fail "$what: got '$out', want org.taskscope.Error.$name"
    grep -qF -- "$want" <<<"$out" || fail "$what: got '$out', want $want"
    ok "$what: $out"
}
# --- the allocation network's resolv.conf and hosts ---
# The guest has no network device: the node's address is on a dummy
# interface, as test_network.sh makes it.
ip link add node0 type dummy
ip addr add 192.0.2.1/32 dev node0
ip link set node0 up
# Every Nomad client has one; a minimal guest may not (a task's root binds
# the host's /etc read-only, so the file to cover must be there).
if [[ ! -e /etc/resolv.conf ]]; then
    echo 'nameserver 192.0.2.53' >/etc/resolv.conf
    made_resolv=1
fi
host_resolv=$(md5sum </etc/resolv.conf 2>/dev/null || echo absent)
host_hosts=$(md5sum </etc/hosts)
$CTL network create --spec '{"mode":"bridge"}' $NA >/dev/null
addr=$($CTL --json network show $NA | jq -r '.addresses[0]' | cut -d/ -f1)
[[ -n $addr && $addr != null ]] || fail "no address for $NA"
netprobe='d=$0; cat /etc/resolv.conf >$d.resolv; cat /etc/hosts >$d.hosts
  if echo x 2>/dev/null >>/etc/hosts; then echo writable; else echo ro; fi >$d.hostsw
  echo "$(md5sum </etc/resolv.conf 2>/dev/null || echo absent)" >$d.resolvsum
  echo end >$d.done; exec sleep 600'
spec=$(jq -cn --arg p "$netprobe" --arg w $W/out --arg a "$addr" \
    '{command:"/bin/sh", args:["-c",$p,"/out/net"], user:"root", network_namespace:"alloc",
      dns:{servers:["10.0.0.53","fd00::53"], searches:["svc.example","example"], options:["ndots:2","edns0"]},
      hosts:{hostname:"dropin-web", address:$a},
      isolation:{volumes:[{source:$w,target:"/out"}]}}')
out=$(mgr StartTask sss $NA web "$spec") || fail "StartTask $NA/web: $out"
wait_until "the bridge task's report" 300 test -e $W/out/net.done
cat $W/out/net.resolv $W/out/net.hosts
grep -qx 'nameserver 10.0.0.53' $W/out/net.resolv && grep -qx 'nameserver fd00::53' $W/out/net.resolv ||
    fail "resolv.conf lacks the dns servers"
grep -qx 'search svc.example example' $W/out/net.resolv || fail "resolv.conf lacks the searches"
grep -qx 'options ndots:2 edns0' $W/out/net.resolv || fail "resolv.conf lacks the options"
ok "the bridge task's resolv.conf is its dns block's"
grep -qx "$addr dropin-web" $W/out/net.hosts || fail "hosts lacks '$addr dropin-web'"
grep -qx '127.0.0.1 localhost' $W/out/net.hosts || fail "hosts lacks localhost"
ok "the bridge task's hosts names the allocation ($addr dropin-web)"
assert_eq "$(cat $W/out/net.hostsw)" ro "a write to the task's /etc/hosts"
assert_eq "$(md5sum </etc/hosts)" "$host_hosts" "the host's /etc/hosts after the task's"
assert_eq "$(md5sum </etc/resolv.conf 2>/dev/null || echo absent)" "$host_resolv" "the host's /etc/resolv.conf after the task's"
spec=$(jq -cn --arg p "$netprobe" --arg w $W/out \
    '{command:"/bin/sh", args:["-c",$p,"/out/hostnet"], user:"root", isolation:{volumes:[{source:$w,target:"/out"}]}}')
out=$(mgr StartTask sss $A hostnet "$spec") || fail "StartTask hostnet: $out"
wait_until "the host-network task's report" 300 test -e $W/out/hostnet.done
assert_eq "$(cat $W/out/hostnet.resolvsum)" "$host_resolv" "an isolated task on the host's network: its resolv.conf is the host's"
stop_task hostnet
mgr StopTask sssx $NA web SIGKILL 0 >/dev/null
wait_until "$NA/web to end" 300 bash -c "[[ \$(busctl --json=short call $I $M $I GetTask ss $NA web | jq -r '.data[0]' | jq -r .state) != running ]]"
mgr ForgetTask ss $NA web >/dev/null
bad "dns on the host's root" '{"command":"/bin/true","dns":{"servers":["10.0.0.1"]}}' \
    "dns needs an isolated task" InvalidSpec

bad "ulimit soft above hard" '{"command":"/bin/true","ulimits":{"nofile":"10:5"}}' \
    "ulimits.nofile: soft limit 10 is above hard limit 5" InvalidSpec
bad "unknown ulimit" '{"command":"/bin/true","ulimits":{"files":"10"}}' "ulimits: unknown limit 'files'" InvalidSpec
bad "nofile above fs.nr_open" '{"command":"/bin/true","ulimits":{"nofile":"unlimited"}}' "fs.nr_open" InvalidSpec
bad "oom_score_adj out of range" '{"command":"/bin/true","oom_score_adj":2000}' "oom_score_adj is 2000" InvalidSpec
bad "a device that does not exist" \
    '{"command":"/bin/true","devices":[{"host_path":"/dev/taskscope-nonexistent"}],"isolation":{}}' \
    "devices[0].host_path: /dev/taskscope-nonexistent does not exist" NoSuchDevice
bad "a device on the host's root that does not exist" \
    '{"command":"/bin/true","devices":[{"host_path":"/dev/taskscope-nonexistent"}]}' \
    "devices[0].host_path" NoSuchDevice
bad "a device path outside /dev" '{"command":"/bin/true","devices":[{"host_path":"/etc/passwd"}]}' \
    "devices[0].host_path '/etc/passwd' must be a device node's path under /dev/" InvalidSpec
bad "an IO limit on a character device" '{"command":"/bin/true","resources":{"io_read_bps":{"/dev/null":1}}}' \
    "resources.io_read_bps: /dev/null is not a block device" NoSuchDevice
bad "a bad IO rate" "{\"command\":\"/bin/true\",\"resources\":{\"io_write_bps\":{\"$disk\":0}}}" \
    "resources.io_write_bps" InvalidSpec
units=$(systemctl list-units --all --plain --no-legend "$A-*" | awk '{print $1}' | tr '\n' ' ')
[[ $units != *"$A-bad"* ]] || fail "a refused start left a unit: $units"
[[ "$(task_field $A bad state 2>/dev/null || true)" != running ]] || fail "a refused start left a running task"
ok "refused starts started nothing (units: ${units:-none})"
