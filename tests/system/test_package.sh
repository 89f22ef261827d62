#!/bin/bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# The .deb as an operator meets it, in the guest (systemd as PID 1).
# guest-suite.sh has already installed $TASKSCOPE_BUILD_DIR/packages/
# taskscope_*.deb with `apt-get install ./taskscope_*.deb` and done nothing
# else: this checks that the install alone left the daemons enabled and
# running, then upgrades to the same package with its version bumped while a
# task runs, purges with a task running, and installs it again, which
# re-adopts that task. It ends with the package installed and running, as
# the tests after it expect.
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
	echo "SKIP: no .deb built (TASKSCOPE_SYSTEM_INSTALL=stage, or run packaging/build-deb.sh)"
	exit 77
fi
# It installs and purges packages on / : only ever inside the test bed guest.
mountpoint -q /run/testbed-ctl || { echo "FAIL: refusing to run outside the testbed guest"; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
CTL=/usr/bin/taskscopectl

A=pkg$$
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# With the stage tree in place (TASKSCOPE_SYSTEM_INSTALL=stage and a .deb
# lying around), the package takes those paths over; that is fine in the
# throwaway guest.
if ! dpkg -s taskscope >/dev/null 2>&1; then
	echo "== install (the suite installed the stage tree)"
	systemctl stop taskscope-manager taskscope-streamer 2>/dev/null || true
	apt-get install -y -o Dpkg::Use-Pty=0 "$deb"
fi

echo "== installed: $deb"
dpkg -s taskscope | grep -E '^(Status|Version):'
version=$(dpkg-query -W -f='${Version}' taskscope)
dpkg -L taskscope | grep -E 'lib/systemd/system/|/etc/taskscope|dbus-1/(system.d|interfaces)'

echo "== enabled and running after apt install, with no other step"
for u in taskscope-manager taskscope-streamer; do
	assert_eq "$(systemctl is-active $u)" active "$u is-active"
	assert_eq "$(systemctl is-enabled $u)" enabled "$u is-enabled"
done
# Each suite's own unit directory (scripts/suites.sh): /lib on Debian 12, /usr/lib on 13.
# shellcheck source=../../scripts/suites.sh
source "$TASKSCOPE_SRC_DIR/scripts/suites.sh"
unitdir=$(suite_unitdir "$TASKSCOPE_SUITE")
assert_eq "$(systemctl show -P FragmentPath taskscope-manager)" "$unitdir/taskscope-manager.service" "unit from the package"
# The version the package was built with names its suite (packaging/deb-version.sh).
case "$version" in
*"~deb$(suite_number "$TASKSCOPE_SUITE")u"*) ok "version $version is $TASKSCOPE_SUITE's" ;;
*) fail "version $version does not name $TASKSCOPE_SUITE's ~debNuM" ;;
esac
tree=$(busctl tree --no-pager org.taskscope.Manager1)
echo "$tree"
grep -q /org/taskscope/Manager1 <<<"$tree" || fail "busctl tree shows no /org/taskscope/Manager1"
ok "busctl tree org.taskscope.Manager1"
busctl introspect --no-pager org.taskscope.Streamer1 /org/taskscope/Streamer1 | quiet_grep '^org.taskscope.Streamer1 ' ||
	fail "busctl introspect shows no org.taskscope.Streamer1"
ok "busctl introspect org.taskscope.Streamer1"
for xml in /usr/share/dbus-1/interfaces/org.taskscope.*.xml; do
	grep -q '<interface name=' "$xml" || fail "$xml has no interface"
done
ok "interface XML installed: $(ls /usr/share/dbus-1/interfaces/org.taskscope.*.xml | xargs -n1 basename | tr '\n' ' ')"

echo "== systemd-analyze security (as packaged)"
systemd-analyze security --no-pager taskscope-manager.service | tail -n 1
systemd-analyze security --no-pager taskscope-streamer.service | tail -n 1

# The same package with its version bumped: what an upgrade looks like to
# dpkg (prerm upgrade, postinst configure OLD), without a second build.
echo "== a bumped package: $version -> $version+1"
dpkg-deb -R "$deb" "$work/pkg"
sed -i "s/^Version: .*/Version: $version+1/" "$work/pkg/DEBIAN/control"
dpkg-deb -b "$work/pkg" "$work/taskscope_bumped.deb" >/dev/null
bumped=$work/taskscope_bumped.deb

echo "== a task across an upgrade"
$CTL run "$A" sleeper -- /bin/sleep 600
pid=$(task_field "$A" sleeper pid)
mpid=$(systemctl show -P MainPID taskscope-manager)
echo "task pid $pid, manager pid $mpid"
kill -0 "$pid" || fail "task pid $pid not running"
apt-get install -y -o Dpkg::Use-Pty=0 "$bumped"
assert_eq "$(dpkg-query -W -f='${Version}' taskscope)" "$version+1" "installed version after upgrade"
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
# taskscopectl stop exits 0 once the task has exited, and prints its exit.
rc=0
out=$($CTL --json stop "$A" sleeper) || rc=$?
assert_eq "$rc" 0 "taskscopectl stop exit code"
assert_eq "$(jq -r .exit_code <<<"$out")" 143 "exit code it prints"
assert_eq "$(task_field "$A" sleeper state)" exited "state after stop"
assert_eq "$(task_field "$A" sleeper signal)" 15 "exit signal after stop"
$CTL forget "$A" sleeper

echo "== purge with a task running"
$CTL run "$A" long -- /bin/sleep 600
lpid=$(task_field "$A" long pid)
lunit=$(task_field "$A" long unit)
echo "long task pid $lpid in $lunit"
# The task sits in its allocation's slice, below nomad.slice but not in it:
# the purge's check must see it there (issue 31's layout).
lslice=$(systemctl show -P Slice "$lunit")
[ "$lslice" != nomad.slice ] || fail "task $lunit directly in nomad.slice; expected its allocation's slice"
case "$(systemctl show -P ControlGroup "$lunit")" in
	/nomad.slice/*/*) ok "task in $lslice, below nomad.slice" ;;
	*) fail "task $lunit not below nomad.slice: $(systemctl show -P ControlGroup "$lunit")" ;;
esac
apt-get purge -y -o Dpkg::Use-Pty=0 taskscope
dpkg -s taskscope >/dev/null 2>&1 && fail "taskscope still installed after purge"
# The test bed's own taskscope-testbed.service also matches 'taskscope*'.
systemctl list-unit-files 'taskscope*' || true
# taskscope-shims.scope is not a file of the package but a transient unit:
# it lives on, without its placeholder, while the shim of the task that
# outlived the purge runs, and ends with it.
left=$(systemctl list-unit-files --no-legend 'taskscope*' | grep -v '^taskscope-testbed\.' | grep -vc ' transient ' || true)
assert_eq "$left" 0 "taskscope unit files after purge"
for cmd in /proc/[0-9]*/cmdline; do
	[ "$(tr '\0' ' ' <"$cmd" 2>/dev/null)" = "/usr/libexec/taskscope/taskscope-shim --hold " ] && fail "shims' placeholder ${cmd%/cmdline} left after purge"
done
ok "shims' placeholder gone after purge"
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

# Installing again brings the daemons back; the manager finds the task in
# /var/lib/taskscope and adopts it (its shim never stopped).
echo "== install again: the running task is adopted"
apt-get install -y -o Dpkg::Use-Pty=0 "$deb"
for u in taskscope-manager taskscope-streamer; do
	assert_eq "$(systemctl is-active $u)" active "$u is-active after reinstall"
done
wait_until "manager answering after reinstall" 100 busctl call $I $M $I GetTask ss "$A" long >/dev/null
assert_eq "$(task_field "$A" long state)" running "purged-over task state after reinstall"
assert_eq "$(task_field "$A" long pid)" "$lpid" "purged-over task pid after reinstall"
assert_eq "$($CTL --json stop "$A" long | jq -r .exit_code)" 143 "exit code of the task that outlived the purge"
$CTL forget "$A" long
assert_eq "$(systemctl is-active "$lunit" || true)" inactive "its scope after stop"
echo "PASS"
