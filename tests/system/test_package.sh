#!/bin/bash
# variants: v2
# The .deb as an operator meets it, in the guest (systemd as PID 1): install,
# enable --now, drive it with busctl and taskscopectl, upgrade with a task
# running, purge with a task running. Needs $TASKSCOPE_BUILD_DIR/packages/
# taskscope_*.deb from packaging/build-deb.sh; without one it is skipped.
#
# What purge does (packaging/debian/rules, taskscope.postrm): remove and
# purge stop and disable the daemons and take every file, but stop no task:
# the tasks are the scheduler's workloads and draining the node is the
# scheduler's job. A task left running keeps running in its scope under
# nomad.slice with its shim, and /var/lib/taskscope stays for its exit record.
set -euo pipefail

build=${TASKSCOPE_BUILD_DIR:?TASKSCOPE_BUILD_DIR must name the build tree}
deb=$(ls "$build"/packages/taskscope_*.deb 2>/dev/null | head -n1 || true)
if [ -z "$deb" ]; then
	echo "SKIP: no .deb built (run packaging/build-deb.sh)"
	exit 77
fi
# It installs and purges packages on / : only ever inside the test bed guest.
mountpoint -q /run/testbed-ctl || { echo "FAIL: refusing to run outside the testbed guest"; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
CTL=/usr/bin/taskscopectl

A=pkg$$
scope_active() { systemctl is-active --quiet "$1.scope"; }

# guest-suite.sh may have copied the build's stage tree over / : the package
# takes those paths over now and purge removes them, so put the stage tree
# back at the end for the tests that run after this one.
restore_stage() {
	if [ -d "$build/stage" ]; then
		# --remove-destination: a daemon may still run from these files.
		cp -a --remove-destination "$build/stage/." /
		systemctl daemon-reload
		systemctl reload dbus || true
	fi
}
trap restore_stage EXIT

echo "== package: $deb"
systemctl is-active --quiet taskscope-manager && systemctl stop taskscope-manager
dpkg -i "$deb"
dpkg -s taskscope | grep -E '^(Status|Version):'
dpkg -L taskscope | grep -E 'lib/systemd/system/|/etc/taskscope|dbus-1/system.d'

echo "== enable --now"
systemctl enable --now taskscope-manager
assert_eq "$(systemctl is-active taskscope-manager)" active "taskscope-manager is-active"
assert_eq "$(systemctl is-enabled taskscope-manager)" enabled "taskscope-manager is-enabled"
assert_eq "$(systemctl show -P FragmentPath taskscope-manager)" /lib/systemd/system/taskscope-manager.service "unit from the package"
tree=$(busctl tree --no-pager org.taskscope.Manager1)
echo "$tree"
grep -q /org/taskscope/Manager1 <<<"$tree" || fail "busctl tree shows no /org/taskscope/Manager1"
ok "busctl tree org.taskscope.Manager1"

echo "== systemd-analyze security (as packaged)"
systemd-analyze security --no-pager taskscope-manager.service | tail -n 1
systemd-analyze security --no-pager taskscope-streamer.service | tail -n 1

echo "== a task across an upgrade"
$CTL run "$A" sleeper -- /bin/sleep 600
pid=$(task_field "$A" sleeper pid)
mpid=$(systemctl show -P MainPID taskscope-manager)
echo "task pid $pid, manager pid $mpid"
kill -0 "$pid" || fail "task pid $pid not running"
dpkg -i "$deb"
assert_eq "$(task_field "$A" sleeper state)" running "state after upgrade"
assert_eq "$(task_field "$A" sleeper pid)" "$pid" "task pid after upgrade"
kill -0 "$pid" || fail "task pid $pid gone after upgrade"
assert_eq "$(systemctl is-active taskscope-manager)" active "manager after upgrade"
# --no-restart-after-upgrade: the running manager is left alone.
assert_eq "$(systemctl show -P MainPID taskscope-manager)" "$mpid" "manager not restarted by the upgrade"
# The operator's restart afterwards keeps the task too (KillMode=process).
systemctl restart taskscope-manager
wait_until "manager answering after restart" 100 busctl call $I $M $I GetTask ss "$A" sleeper >/dev/null
assert_eq "$(task_field "$A" sleeper pid)" "$pid" "task pid after manager restart"
kill -0 "$pid" || fail "task pid $pid gone after manager restart"

echo "== stop and the exit"
# taskscopectl stop exits with the task's code: 143 for a SIGTERM death.
rc=0
$CTL stop "$A" sleeper || rc=$?
assert_eq "$rc" 143 "taskscopectl stop exit code"
assert_eq "$(task_field "$A" sleeper state)" exited "state after stop"
assert_eq "$(task_field "$A" sleeper signal)" 15 "exit signal after stop"
$CTL forget "$A" sleeper

echo "== purge with a task running"
$CTL run "$A" long -- /bin/sleep 600
lpid=$(task_field "$A" long pid)
lunit=$(task_field "$A" long unit)
echo "long task pid $lpid in $lunit"
dpkg --purge taskscope
dpkg -s taskscope >/dev/null 2>&1 && fail "taskscope still installed after purge"
# The test bed's own taskscope-testbed.service also matches 'taskscope*'.
systemctl list-unit-files 'taskscope*' || true
left=$(systemctl list-unit-files --no-legend 'taskscope*' | grep -vc '^taskscope-testbed\.' || true)
assert_eq "$left" 0 "taskscope unit files after purge"
assert_eq "$(systemctl list-unit-files --no-legend nomad.slice | wc -l)" 0 "nomad.slice unit file after purge"
assert_eq "$(systemctl is-active taskscope-manager || true)" inactive "manager after purge"
[ -e /etc/taskscope/manager.json ] && fail "/etc/taskscope/manager.json left after purge"
ok "config removed"
for f in /usr/libexec/taskscope/taskscope-manager /usr/bin/taskscopectl /usr/share/dbus-1/system.d/org.taskscope.Manager1.conf; do
	[ -e "$f" ] && fail "$f left after purge"
done
ok "binaries and bus policy removed"
kill -0 "$lpid" || fail "purge killed the running task $lpid"
assert_eq "$(systemctl is-active "$lunit")" active "task scope $lunit after purge"
[ -d /var/lib/taskscope/tasks ] || fail "/var/lib/taskscope removed while a task runs"
ok "state kept while a task runs"

# The operator (the scheduler, after draining) ends what purge left.
systemctl stop "$lunit"
wait_until "task $lpid gone" 100 bash -c "! kill -0 $lpid 2>/dev/null"
ok "leftover task stopped with systemctl stop $lunit"
echo "PASS"
