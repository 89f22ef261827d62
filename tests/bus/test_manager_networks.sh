#!/usr/bin/env bash
# The network methods of Manager1 against bad input, on a private bus with
# a stand-in systemd (systemd_fake.cpp) and a stand-in CNI plugin (the real
# chain runs in the system tier): an unknown mode, a port out of range, a
# host port another allocation maps, an unknown allocation, a second
# network for one allocation and a destroy while a task of it runs each get
# their named error and change nothing (the network list, the namespace
# files, the IPAM directory). Namespaces are made in a directory of the
# test, inside a mount namespace of its own, so the host's /run/netns and
# mounts are untouched.
if [[ -z "${TASKSCOPE_BUS_NETNS_PRIVATE:-}" ]]; then
    # Everything mounted from here on (the namespace files) ends with this
    # mount namespace, whatever way the test ends.
    TASKSCOPE_BUS_NETNS_PRIVATE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
bus_start

M=/org/taskscope/Manager1
I=org.taskscope.Manager1
FAKE_PID=""
fail() { echo "FAIL: $*"; exit 1; }

NETNS=$BUS_TMP/netns
IPAM=$BUS_TMP/ipam
CNI=$BUS_TMP/cni
mkdir -p $CNI $IPAM
# The stand-in plugin: an address for ADD (the chain's result), nothing for
# CHECK and DEL. It records each call so the test sees which ones ran.
cat >$CNI/bus-cni <<EOF
#!/bin/sh
cat >/dev/null
echo "\$CNI_COMMAND \$CNI_CONTAINERID" >>$BUS_TMP/cni.calls
[ "\$CNI_COMMAND" = ADD ] && echo '{"cniVersion":"0.4.0","ips":[{"address":"10.99.0.2/24"}]}'
exit 0
EOF
chmod 755 $CNI/bus-cni
echo '{"cniVersion":"0.4.0","name":"busnet","plugins":[{"type":"bus-cni"}]}' >$BUS_TMP/conflist.json
# The manager is activated by the first call: its config is complete by then.
jq --arg n $NETNS --arg i $IPAM --arg c $CNI --arg l $BUS_TMP/conflist.json \
    '. + {network_netns_dir:$n, network_ipam_dir:$i, network_cni_path:$c, network_conflist:$l}' \
    $BUS_TMP/manager.json >$BUS_TMP/manager.json.new && mv $BUS_TMP/manager.json.new $BUS_TMP/manager.json

systemd_fake_start removed-after-reply
# The namespace files are mounts (of this mount namespace): unmounted
# before bus_cleanup removes the directory.
end() {
    [[ -n "$FAKE_PID" ]] && kill "$FAKE_PID" 2>/dev/null || true
    for f in "$NETNS"/* "$NETNS"; do umount -l "$f" 2>/dev/null || true; done
    bus_cleanup
}
trap end EXIT

create() { call $M $I.CreateNetwork "string:$1" "string:$2"; }
network() { call $M $I.GetNetwork "string:$1" | grep -v '^method return'; }
# Everything a refused call must leave as it was.
state() {
    call $M $I.ListNetworks | grep -v '^method return'
    ls -A $NETNS 2>/dev/null || true
    ls -A $IPAM 2>/dev/null || true
    cat $BUS_TMP/cni.calls 2>/dev/null || true
}
refused() { # ERROR-NAME DBUS-ARGS...
    local before after
    before=$(state)
    expect_error "$@"
    after=$(state)
    [[ "$before" == "$after" ]] || fail "$2 changed something: before <$before> after <$after>"
}

grep -q 'array \[' <<<"$(call $M $I.ListNetworks)" || fail "ListNetworks: $(call $M $I.ListNetworks)"
echo "ok: activated, ListNetworks answers"

# ---- a spec that is wrong in itself ----
refused org.taskscope.Error.InvalidSpec $M $I.CreateNetwork string:a1 'string:{"mode":"overlay"}'
refused org.taskscope.Error.InvalidSpec $M $I.CreateNetwork string:a1 'string:{not json'
refused org.taskscope.Error.InvalidSpec $M $I.CreateNetwork string:a1 'string:{"mode":"bridge","ports":[{"host_port":70000}]}'
refused org.taskscope.Error.InvalidSpec $M $I.CreateNetwork string:a1 'string:{"mode":"bridge","ports":[{"host_port":0}]}'
refused org.taskscope.Error.InvalidSpec $M $I.CreateNetwork string:a1 'string:{"mode":"bridge","ports":[{"host_port":8080,"container_port":65536}]}'
refused org.taskscope.Error.InvalidSpec $M $I.CreateNetwork string:a1 'string:{"mode":"none","ports":[{"host_port":8080}]}'
refused org.taskscope.Error.InvalidName $M $I.CreateNetwork string:bad/id 'string:{}'
refused org.taskscope.Error.InvalidName $M $I.CreateNetwork string: 'string:{}'

# ---- an unknown allocation: no network to destroy, read or join ----
refused org.taskscope.Error.NoSuchNetwork $M $I.DestroyNetwork string:a9
refused org.taskscope.Error.NoSuchNetwork $M $I.GetNetwork string:a9
refused org.taskscope.Error.NoSuchNetwork $M $I.StartTask string:a9 string:t \
    'string:{"command":"/bin/sleep","args":["300"],"logs":false,"network_namespace":"alloc"}'
expect_error org.taskscope.Error.NoSuchTask $M $I.GetTask string:a9 string:t

# ---- a port mapped by another allocation; a second network for one ----
out=$(create a1 '{"mode":"bridge","ports":[{"host_port":18080,"container_port":80}]}')
[[ "$out" != ERROR* ]] || fail "CreateNetwork a1: $out"
[[ -e $NETNS/a1 ]] || fail "no namespace file $NETNS/a1"
grep -qx 'ADD a1' $BUS_TMP/cni.calls || fail "the plugin's ADD for a1 did not run: $(cat $BUS_TMP/cni.calls)"
a1=$(network a1)
grep -q 10.99.0.2 <<<"$a1" || fail "a1 lacks the plugin's address: $a1"
echo "ok: a1's network made (namespace file, ADD ran, address 10.99.0.2)"
refused org.taskscope.Error.PortInUse $M $I.CreateNetwork string:a2 'string:{"mode":"bridge","ports":[{"host_port":18080}]}'
refused org.taskscope.Error.PortInUse $M $I.CreateNetwork string:a2 \
    'string:{"mode":"bridge","ports":[{"host_port":18081},{"host_port":18080,"container_port":81}]}'
refused org.taskscope.Error.NetworkExists $M $I.CreateNetwork string:a1 'string:{}'
refused org.taskscope.Error.NetworkExists $M $I.CreateNetwork string:a1 'string:{"mode":"bridge","ports":[{"host_port":18082}]}'
[[ "$(network a1)" == "$a1" ]] || fail "a1 changed: $(network a1)"
# The same host port over udp is another port.
out=$(create a3 '{"mode":"bridge","ports":[{"host_port":18080,"protocol":"udp"}]}')
[[ "$out" != ERROR* ]] || fail "CreateNetwork a3 with 18080/udp: $out"
echo "ok: 18080/udp is free next to a1's 18080/tcp"

# ---- destroy while a task of the allocation runs ----
out=$(create n1 '{"mode":"none"}')
[[ "$out" != ERROR* ]] || fail "CreateNetwork n1: $out"
out=$(call $M $I.StartTask string:n1 string:t \
    'string:{"command":"/bin/sleep","args":["300"],"logs":false,"network_namespace":"alloc"}')
[[ "$out" == *"object path"* ]] || fail "StartTask n1/t: $out"
pid=$(busctl --address="$BUS_ADDRESS" --json=short call $I $M $I GetTask ss n1 t | jq -r '.data[0] | fromjson | .pid')
[[ "$(stat -L -c %i /proc/$pid/ns/net)" == "$(stat -L -c %i $NETNS/n1)" ]] || fail "n1/t is not in n1's namespace"
echo "ok: n1/t (pid $pid) runs in n1's namespace"
refused org.taskscope.Error.NetworkInUse $M $I.DestroyNetwork string:n1
[[ "$(stat -L -c %i /proc/$pid/ns/net)" == "$(stat -L -c %i $NETNS/n1)" ]] || fail "n1/t lost its namespace"
kill -KILL "$pid"
for ((i = 0; i < 100; i++)); do
    st=$(busctl --address="$BUS_ADDRESS" --json=short call $I $M $I GetTask ss n1 t | jq -r '.data[0] | fromjson | .state')
    [[ "$st" == exited ]] && break
    sleep 0.1  # the poll's pace
done
[[ "$st" == exited ]] || fail "n1/t did not exit: $st"

# ---- the destroys that are allowed leave nothing ----
for a in n1 a1 a3; do
    out=$(call $M $I.DestroyNetwork string:$a)
    [[ "$out" != ERROR* ]] || fail "DestroyNetwork $a: $out"
done
grep -qx 'DEL a1' $BUS_TMP/cni.calls || fail "the plugin's DEL for a1 did not run"
[[ -z "$(ls -A $NETNS)" ]] || fail "namespace files left: $(ls -A $NETNS)"
grep -q 'array \[\s*\]' <<<"$(call $M $I.ListNetworks | tr -d '\n')" || fail "networks left: $(call $M $I.ListNetworks)"
echo "ok: n1, a1 and a3 destroyed: no namespace file, no network left"
echo "bus networks: all checks passed"
