#!/bin/bash
# variants: (deb13-v1)
# A node that systemd can no longer drive: Debian 13's systemd 257 booted
# on the legacy/hybrid hierarchy all the same (SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1;
# systemd 256 removed v1 support, and boots on it only when forced). The
# manager, installed by apt as on any node, must stop at once with one line
# that names what is missing and what to do, make nothing (no scope, no
# slice, no bus name, no record), and not be restarted by systemd over and
# over (EX_CONFIG, RestartPreventExitStatus=78): a node that refuses is
# plainly failed, not half working.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

fstype=$(stat -fc %T /sys/fs/cgroup)
version=$(systemctl --version | awk 'NR == 1 {print $2}')
echo "systemd $version, /sys/fs/cgroup is $fstype"
[ "$fstype" = tmpfs ] || fail "the guest is not on the legacy or hybrid hierarchy (/sys/fs/cgroup is $fstype)"
[ "$version" -ge 256 ] || fail "systemd $version still drives v1: this test is for 256 and later"
ok "systemd $version on the legacy/hybrid hierarchy"

# The package's postinst started it; it exits at once, so its unit fails.
unit_failed() { [ "$(systemctl is-failed taskscope-manager 2>/dev/null || true)" = failed ]; }
wait_until "taskscope-manager to fail" 300 unit_failed
assert_eq "$(systemctl show -p ExecMainStatus --value taskscope-manager)" 78 "the manager's exit status (EX_CONFIG)"
# Given time to restart if it would: RestartSec is 1 s.
sleep 3  # a window in which systemd would have restarted it
assert_eq "$(systemctl show -p NRestarts --value taskscope-manager)" 0 "restarts of the manager"
assert_eq "$(systemctl is-failed taskscope-manager || true)" failed "the manager's unit after the window"

line=$(journalctl -u taskscope-manager -b --no-pager -o cat | grep -m1 'Cannot run on this node' || true)
echo "journal: $line"
[[ $line == *"systemd $version"*" no longer manages cgroup v1"* ]] || fail "the refusal does not name systemd's version and v1"
[[ $line == *"systemd.unified_cgroup_hierarchy=1"* ]] || fail "the refusal does not say how to boot the node"
ok "the refusal names what is missing and the way out"

# It refused before doing anything.
if busctl status $I >/dev/null 2>&1; then fail "$I is on the bus"; fi
ok "no $I on the bus"
units=$(systemctl list-units --all --plain --no-legend 'nomad-*' '*.scope' | grep -E 'nomad-|taskscope-shims' || true)
[ -z "$units" ] || fail "units were made: $units"
ok "no allocation slice, task scope or shims' scope"
records=$(find /var/lib/taskscope -type f 2>/dev/null | head -5)
[ -z "$records" ] || fail "files under /var/lib/taskscope: $records"
ok "nothing under /var/lib/taskscope"

# The operator's view: the CLI says the manager is not there.
if out=$($CTL list 2>&1); then fail "taskscopectl list succeeded: $out"; fi
echo "taskscopectl list: $out"
ok "taskscopectl says no manager"

echo "PASS"
