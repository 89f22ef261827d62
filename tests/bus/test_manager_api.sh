#!/usr/bin/env bash
# The manager's API on a private bus: introspection, properties, the
# ObjectManager, and a named error for every kind of bad input, with
# nothing created. There is no systemd on this bus, so a valid start must
# fail cleanly too: no record, no process left behind.
source "$(dirname "$0")/lib.sh"
bus_start

M=/org/taskscope/Manager1
I=org.taskscope.Manager1

# The first call activates the manager and waits for it to own its name.
# grep -q would close the pipe early, and pipefail then fails the call.
grep -q 'array \[' <<<"$(call $M $I.ListTasks)" || { echo "FAIL: ListTasks"; exit 1; }
echo "ok: activated, ListTasks answers"

intro=$(busctl --address="$BUS_ADDRESS" introspect $I $M)
for member in StartTask StopTask SignalTask GetTask ListTasks ForgetTask TaskExited GetManagedObjects \
    CgroupVersion Fingerprint; do
    grep -q "$member" <<<"$intro" || { echo "FAIL: introspection lacks $member"; exit 1; }
done
echo "ok: introspection shows the API and ObjectManager"

want=$("$TASKSCOPE_BUILD_DIR/src/fingerprint/taskscope-fingerprint" 2>/dev/null | jq -r '."unique.cgroups.version"')
got=$(busctl --address="$BUS_ADDRESS" get-property $I $M $I CgroupVersion | awk '{print $2}' | tr -d '"')
[[ "$got" == "$want" ]] || { echo "FAIL: CgroupVersion $got, fingerprint says $want"; exit 1; }
grep -q 'unique.cgroups.version' <<<"$(busctl --address="$BUS_ADDRESS" get-property $I $M $I Fingerprint)" \
    || { echo "FAIL: Fingerprint property"; exit 1; }
echo "ok: CgroupVersion=$got matches taskscope-fingerprint"

start() { call $M $I.StartTask "string:$1" "string:$2" "string:$3"; }
expect_error org.taskscope.Error.InvalidSpec $M $I.StartTask string:a1 string:web 'string:{not json'
expect_error org.taskscope.Error.InvalidSpec $M $I.StartTask string:a1 string:web 'string:{"command":"/bin/true","bogus":1}'
expect_error org.taskscope.Error.InvalidSpec $M $I.StartTask string:a1 string:web 'string:{"command":"/bin/true","resources":{"memory_mb":-1}}'
expect_error org.taskscope.Error.InvalidName $M $I.StartTask string: string:web 'string:{"command":"/bin/true"}'
expect_error org.taskscope.Error.InvalidName $M $I.StartTask string:a1 "string:$(printf 'x%.0s' {1..300})" 'string:{"command":"/bin/true"}'
expect_error org.taskscope.Error.UnknownUser $M $I.StartTask string:a1 string:web 'string:{"command":"/bin/true","user":"nosuchuser"}'
expect_error org.taskscope.Error.NoSuchBinary $M $I.StartTask string:a1 string:web 'string:{"command":"/no/such/binary"}'
expect_error org.taskscope.Error.NoSuchTask $M $I.GetTask string:a1 string:web
expect_error org.taskscope.Error.NoSuchTask $M $I.StopTask string:a1 string:web string: int64:-1
expect_error org.taskscope.Error.NoSuchTask $M $I.ForgetTask string:a1 string:web
# A valid spec gets as far as systemd, which is absent here.
expect_error org.taskscope.Error.SystemdFailed $M $I.StartTask string:a1 string:web 'string:{"command":"/bin/sleep","args":["60"]}'

# Nothing of those starts remains.
call $M $I.ListTasks | grep -q 'struct' && { echo "FAIL: a failed start left a task"; exit 1; }
leftover=$(find "$STATE_DIR/tasks" "$STATE_DIR/exits" -type f | wc -l)
[[ "$leftover" == 0 ]] || { echo "FAIL: $leftover state files left"; find "$STATE_DIR"; exit 1; }
# The shim of a failed start is told to go, not waited for: give it a moment (under load it needs one).
for ((i = 0; i < 50; i++)); do pgrep -f -- "--exit-file $STATE_DIR/" >/dev/null || break; sleep 0.1; done  # bounded poll; the sleep is its pace
if pgrep -f -- "--exit-file $STATE_DIR/" >/dev/null; then echo "FAIL: a shim survived"; exit 1; fi
echo "ok: failed starts left no task, no state file, no process"

# The CLI: one clear line and a non-zero exit on error.
out=$("$TASKSCOPE_BUILD_DIR/src/cli/taskscopectl" status a1 web 2>&1) && { echo "FAIL: status succeeded"; exit 1; }
[[ $(wc -l <<<"$out") == 1 && "$out" == *"no task a1/web"*"NoSuchTask"* ]] || { echo "FAIL: CLI said: $out"; exit 1; }
"$TASKSCOPE_BUILD_DIR/src/cli/taskscopectl" --json list | jq -e 'length == 0' >/dev/null
echo "ok: taskscopectl reports errors in one line: $out"
echo "bus API: all checks passed"
