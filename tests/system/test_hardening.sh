#!/bin/bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# The units' hardening is in effect, and none of it reaches a task: the
# manager's service cgroup denies IP traffic and devices, yet a task (which
# leaves that cgroup for its scope before its first instruction) connects to
# localhost, opens devices and writes anywhere root may, with every
# capability. Prints each unit's `systemd-analyze security` exposure.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

A=hard$$
log_of() { cat "/var/lib/taskscope/logs/$A/$1.stdout.0" 2>/dev/null; }

echo "== exposure"
for u in taskscope-manager taskscope-streamer; do
	echo "$u: $(systemd-analyze security --no-pager $u.service | tail -n1)"
done

echo "== the manager's unit"
# The suite may have installed the stage tree, where the manager is bus-activated.
systemctl start taskscope-manager
# The order systemd lists the two prefixes in differs between boots.
assert_eq "$(systemctl show -P IPAddressDeny taskscope-manager | tr ' ' '\n' | sort | xargs)" "0.0.0.0/0 ::/0" "manager IPAddressDeny"
assert_eq "$(systemctl show -P DevicePolicy taskscope-manager)" closed "manager DevicePolicy"
mpid=$(systemctl show -P MainPID taskscope-manager)
# The manager's own cgroup really denies: systemd's BPF program drops every
# packet, which a UDP send sees at once as EPERM (a TCP connect would only
# time out).
mcg=$(systemctl show -P ControlGroup taskscope-manager)
[ -n "$mcg" ] || fail "taskscope-manager has no ControlGroup"
procs=/sys/fs/cgroup$mcg/cgroup.procs
[ -e "$procs" ] || procs=/sys/fs/cgroup/unified$mcg/cgroup.procs # v1: the BPF sits on the unified hierarchy
out=$(sh -c "echo \$\$ >$procs && exec bash -c 'echo x >/dev/udp/127.0.0.1/9 && echo sent' 2>&1" || true)
echo "UDP from the manager's cgroup: $out"
grep -q 'Operation not permitted' <<<"$out" || fail "the manager's cgroup lets IP traffic through"
ok "IP denied in the manager's cgroup"
kill -0 "$mpid"

echo "== a task is not sandboxed"
$CTL run --wait "$A" net -- /bin/bash -c 'echo x >/dev/udp/127.0.0.1/9 && echo sent; exec 3<>/dev/tcp/127.0.0.1/9' >/dev/null || true
out=$(cat /var/lib/taskscope/logs/"$A"/net.std{out,err}.0 2>/dev/null || true)
echo "task sending to 127.0.0.1:9: $out"
grep -q '^sent' <<<"$out" || fail "the task could not send UDP: '$out'"
grep -q 'Connection refused' <<<"$out" || fail "the task's TCP connect was not just refused: '$out'"
ok "a task reaches the network (UDP sent, TCP refused by the port, not dropped by a filter)"

$CTL run --wait "$A" dev -- /bin/sh -c 'head -c 4 /dev/urandom | wc -c; dd if=/dev/kmsg of=/dev/null bs=8192 count=1 status=none && echo kmsg' >/dev/null
assert_eq "$(log_of dev | tr '\n' ' ')" "4 kmsg " "a task opens /dev/urandom and /dev/kmsg"

$CTL run --wait "$A" caps -- /bin/sh -c 'grep -E "^(CapBnd|CapEff|NoNewPrivs|Seccomp):" /proc/self/status' >/dev/null
log_of caps
assert_eq "$(log_of caps | awk '/^Seccomp:/ {print $2}')" 0 "a task has no seccomp filter"
assert_eq "$(log_of caps | awk '/^NoNewPrivs:/ {print $2}')" 0 "a task may gain privileges"
assert_eq "$(log_of caps | awk '/^CapBnd:/ {print $2}')" "$(awk '/^CapBnd:/ {print $2}' /proc/1/status)" "a root task's bounding set is PID 1's"

$CTL run --wait "$A" write -- /bin/sh -c 'echo x >/var/local/taskscope-hardening && rm /var/local/taskscope-hardening && echo wrote' >/dev/null
assert_eq "$(log_of write)" wrote "a task writes outside its cwd"
echo "== the streamer's unit, and a command exec'd through it"
assert_eq "$(systemctl show -P IPAddressDeny taskscope-streamer | tr ' ' '\n' | sort | xargs)" "0.0.0.0/0 ::/0" "streamer IPAddressDeny"
systemctl start taskscope-streamer
$CTL run "$A" host -- /bin/sleep 600 >/dev/null
out=$($CTL exec --timeout 20000 "$A" host -- /bin/bash -c 'echo x >/dev/udp/127.0.0.1/9 && echo sent; grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status' 2>&1 || true)
echo "$out"
grep -q '^sent' <<<"$out" || fail "an exec'd command could not send UDP: '$out'"
ok "an exec'd command is not under the streamer's IPAddressDeny"
$CTL stop --grace 0 "$A" host >/dev/null || true
for t in net dev caps write host; do $CTL forget "$A" $t 2>/dev/null || true; done
echo PASS
