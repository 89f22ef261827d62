#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# Output of a task that writes and exits while no streamer runs is not
# lost: the manager holds the fifos until the streamer has drained them.
source "$(dirname "$0")/lib.sh"

systemctl start taskscope-manager
systemctl stop taskscope-streamer
rc=0
$CTL run --wait e1 quick -- /bin/sh -c 'echo early-line-1; echo early-err >&2; echo early-line-2; exit 4' || rc=$?
assert_eq "$rc" 4 "exit of the quick task"
systemctl is-active --quiet taskscope-streamer && fail "streamer was running"
systemctl start taskscope-streamer
wait_until "the quick task's logs to be drained" 300 bash -c '! test -e /run/taskscope/logs/e1-quick.scope.json'
assert_eq "$($CTL logs e1 quick | tr '\n' ' ')" "early-line-1 early-line-2 " "stdout written before any streamer ran"
assert_eq "$($CTL logs --stderr e1 quick)" "early-err" "stderr written before any streamer ran"
echo "streamer early exit: all checks passed"
