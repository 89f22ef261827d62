#!/usr/bin/env bash
# variants: v2 v1
# Allocation networks: a namespace per allocation (mode none: loopback
# only; mode bridge: Debian's CNI plugins), joined by the allocation's
# tasks before their first instruction; cross-allocation traffic over the
# bridge, a host port mapped to a task, named errors for bad input,
# nothing left after destroy (counted), and recovery after kill -9.
# The guest has no network device: the node's address is 192.0.2.1 on a
# dummy interface made here.
source "$(dirname "$0")/lib.sh"
# A silent exit under set -e says nothing: name the line that failed.
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (status $?)"' ERR

OUT=/run/nettest
STATE=/var/lib/taskscope
IPAM=/var/lib/cni/networks/taskscope
ALLOCS="n-none n-a n-b n-c n-x n-y"

cleanup() {
    set +e
    for a in $ALLOCS; do
        for t in $(busctl --json=short call $I $M $I ListTasks 2>/dev/null | jq -r ".data[0][] | select(.[0]==\"$a\") | .[1]"); do
            $CTL stop --grace 0 "$a" "$t" >/dev/null 2>&1
            $CTL forget "$a" "$t" >/dev/null 2>&1
        done
        $CTL network destroy "$a" >/dev/null 2>&1
        ip netns del "$a" 2>/dev/null
    done
    [[ -n "${hostnc:-}" ]] && kill "$hostnc" 2>/dev/null
    ip link del node0 2>/dev/null
    ip link del nomad 2>/dev/null
    rm -rf $OUT
}
trap cleanup EXIT

systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl start taskscope-manager
mkdir -p $OUT
ip link add node0 type dummy
ip addr add 192.0.2.1/32 dev node0
ip link set node0 up

# The things an allocation's network makes, counted before anything exists.
count_netns() { ip netns list | wc -l; }
count_veth() { ip -o link show type veth | wc -l; }
count_ipam() { { find $IPAM -maxdepth 1 -type f ! -name lock ! -name 'last_reserved_ip*' 2>/dev/null || true; } | wc -l; }
# Rules carrying an allocation's id (CNI's comments: name: "taskscope" id: "<alloc>").
count_rules() { { iptables-save; nft list ruleset; } 2>/dev/null | grep -cF "id: \\\"$1\\\"" || true; }
# Rules naming an address (the firewall plugin's carry no comment).
count_addr_rules() { iptables-save 2>/dev/null | grep -cF "$1/32" || true; }
netns0=$(count_netns)
veth0=$(count_veth)
ipam0=$(count_ipam)
links0=$(ip -o link | wc -l)

# A task that joins its allocation's network; extra spec fields in $3.
run_in() {
    local alloc=$1 task=$2 extra=${3:-}
    shift 3
    $CTL run --spec "{\"network_namespace\":\"alloc\",\"logs\":false$extra}" "$alloc" "$task" -- "$@" >/dev/null
}
# The error name a failing taskscopectl call printed.
err_of() { "$@" 2>&1 >/dev/null | grep -o 'org\.taskscope\.Error\.[A-Za-z]*' || true; }
net_field() { $CTL --json network show "$1" | jq -r "$2"; }

# ---- mode none: only lo, up; two tasks talk over loopback ----------------
$CTL network create n-none >/dev/null
ip netns list | grep -qw n-none || fail "ip netns list does not show n-none"
ok "ip netns list shows n-none"
assert_eq "$(net_field n-none .mode)" none "mode"
assert_eq "$(ip netns exec n-none ip -o link | awk -F': ' '{print $2}' | tr '\n' ' ')" "lo " "links in n-none (ip netns exec)"
run_in n-none links "" /bin/sh -c "ip -o link > $OUT/none-links"
rc=0; $CTL wait n-none links >/dev/null || rc=$?
assert_eq "$rc" 0 "task listing its links"
assert_eq "$(awk -F': ' '{print $2}' $OUT/none-links | tr '\n' ' ')" "lo " "links a task of n-none sees"
grep -q 'state UNKNOWN\|UP' $OUT/none-links || fail "lo is not up: $(cat $OUT/none-links)"
ok "lo is up in mode none"

run_in n-none srv "" /bin/sh -c "exec nc -l 7000 > $OUT/lo.out"
run_in n-none cli "" /bin/sh -c 'for i in $(seq 100); do echo over-loopback | nc -N -w 5 127.0.0.1 7000 && exit 0; sleep 0.2; done; exit 1'
rc=0; $CTL wait n-none cli >/dev/null || rc=$?
assert_eq "$rc" 0 "client task reached the server task over loopback"
rc=0; $CTL wait n-none srv >/dev/null || rc=$?
assert_eq "$(cat $OUT/lo.out)" over-loopback "what the server task got"
# The same port on the host is free: the server listened in the namespace.
ss -ltn | grep -q ':7000 ' && fail "port 7000 listened on in the host namespace"
ok "the server task listened inside n-none, not on the host"

# ---- bridge: cross-allocation traffic and a mapped host port ----------
t0=$(date +%s%N)
$CTL network create --spec '{"mode":"bridge"}' n-a >/dev/null
t1=$(date +%s%N)
ok "bridge network n-a created in $(((t1 - t0) / 1000000)) ms"
$CTL network create --spec '{"mode":"bridge","ports":[{"host_port":18080,"container_port":8080}]}' n-b >/dev/null
aip=$(net_field n-a '.addresses[0]' | cut -d/ -f1)
bip=$(net_field n-b '.addresses[0]' | cut -d/ -f1)
ok "n-a has $aip, n-b has $bip"
[[ $bip == 172.26.* ]] || fail "n-b's address $bip is outside the node subnet 172.26.64.0/20"
ip -o link show nomad >/dev/null || fail "no bridge named nomad"
assert_eq "$(ip netns exec n-b ip -o -4 addr show dev eth0 | awk '{print $4}' | cut -d/ -f1)" "$bip" "eth0 address inside n-b"
ls $IPAM | grep -qx "$bip" || fail "no host-local reservation for $bip"
ok "host-local reserved $bip"
[[ $(count_rules n-b) -gt 0 ]] || fail "no rule carries n-b's id"
ok "iptables rules carry n-b's id"

run_in n-b srv "" /bin/sh -c "exec nc -lk 8080 > $OUT/b.out"
run_in n-a cli "" /bin/sh -c "for i in \$(seq 100); do echo from-a | nc -N -w 5 $bip 8080 && exit 0; sleep 0.2; done; exit 1"
rc=0; $CTL wait n-a cli >/dev/null || rc=$?
assert_eq "$rc" 0 "task of n-a reached the server of n-b at $bip:8080"
# From the guest's root namespace to the node address's mapped port.
for i in $(seq 100); do echo from-host | nc -N -w 5 192.0.2.1 18080 && break; sleep 0.2; done
wait_until "both messages at the server" 100 grep -q from-host $OUT/b.out
grep -q from-a $OUT/b.out || fail "server of n-b did not get from-a: $(cat $OUT/b.out)"
ok "root namespace reached n-b's server through 192.0.2.1:18080"

# ---- bad input: named errors, nothing changes ---------------------------
nets_before=$(count_netns)
assert_eq "$(err_of $CTL network create --spec '{"mode":"bogus"}' n-c)" org.taskscope.Error.InvalidSpec "unknown mode"
assert_eq "$(err_of $CTL network create --spec '{"mode":"bridge","ports":[{"host_port":70000}]}' n-c)" \
    org.taskscope.Error.InvalidSpec "port out of range"
assert_eq "$(err_of $CTL network create --spec '{"mode":"bridge","ports":[{"host_port":18080}]}' n-c)" \
    org.taskscope.Error.PortInUse "host port mapped by another allocation"
nc -l 18090 >/dev/null &
hostnc=$!
wait_until "a host listener on 18090" 100 sh -c 'ss -ltn | grep -q ":18090 "'
assert_eq "$(err_of $CTL network create --spec '{"mode":"bridge","ports":[{"host_port":18090}]}' n-c)" \
    org.taskscope.Error.PortInUse "host port bound on the host"
kill $hostnc; hostnc=
assert_eq "$(err_of $CTL network create n-b)" org.taskscope.Error.NetworkExists "second network for n-b"
assert_eq "$(err_of $CTL network create 'bad/id')" org.taskscope.Error.InvalidName "bad alloc id"
assert_eq "$(err_of $CTL network destroy n-c)" org.taskscope.Error.NoSuchNetwork "destroy of no network"
assert_eq "$(err_of run_in n-c t "" /bin/true)" org.taskscope.Error.NoSuchNetwork "task asking for a network its allocation lacks"
assert_eq "$(err_of $CTL network destroy n-b)" org.taskscope.Error.NetworkInUse "destroy while a task of n-b runs"
assert_eq "$(count_netns)" "$nets_before" "namespaces after the refused calls"

# ---- restart: kill -9, every network CHECKed, still works --------------
main=$(systemctl show -p MainPID --value taskscope-manager)
kill -9 "$main"
ok "killed manager pid $main"
systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl start taskscope-manager
assert_eq "$(net_field n-b .state)" ready "n-b after restart"
journalctl -u taskscope-manager --since "-2min" | grep -i "check of the network" && fail "a CHECK failed after restart"
run_in n-a cli2 "" /bin/sh -c "for i in \$(seq 100); do echo after-restart | nc -N -w 5 $bip 8080 && exit 0; sleep 0.2; done; exit 1"
rc=0; $CTL wait n-a cli2 >/dev/null || rc=$?
assert_eq "$rc" 0 "n-a reaches n-b after the manager's kill -9 and restart"
wait_until "the message at the server" 100 grep -q after-restart $OUT/b.out

# A CHECK that fails (the container's eth0 removed) makes the network again.
ip netns exec n-a ip link del eth0
systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl restart taskscope-manager
assert_eq "$(net_field n-a .state)" ready "n-a after a failed CHECK"
ip netns exec n-a ip -o link show eth0 >/dev/null || fail "n-a's eth0 was not made again"
ok "n-a made again after its CHECK failed"

# ---- destroy: nothing of the allocation is left --------------------------
$CTL stop --grace 0 n-b srv >/dev/null || true
t0=$(date +%s%N)
$CTL network destroy n-b
t1=$(date +%s%N)
ok "bridge network n-b destroyed in $(((t1 - t0) / 1000000)) ms"
$CTL network destroy n-a
$CTL network destroy n-none
assert_eq "$(count_netns)" "$netns0" "namespaces after destroy"
assert_eq "$(count_veth)" "$veth0" "veths after destroy"
assert_eq "$(count_ipam)" "$ipam0" "IPAM reservations after destroy"
assert_eq "$(count_rules n-b)$(count_rules n-a)" "00" "rules carrying n-a's or n-b's id"
assert_eq "$(count_addr_rules "$bip")" 0 "rules naming n-b's address"
# The bridge stays, as Nomad's does; nothing else.
assert_eq "$(ip -o link | wc -l)" "$((links0 + 1))" "links after destroy (the nomad bridge stays)"

# ---- interrupted work is undone at restart -------------------------------
# An intent record whose namespace exists (a kill -9 between ADD and its
# record): the next start removes both.
ip netns add n-x
mkdir -p $STATE/networks
printf '{"alloc_id":"n-x","spec":"{}","phase":"intent","netns":"/run/netns/n-x","conflist":null,"result":null,"addresses":[]}' \
    >$STATE/networks/n-x.json
# The same for a bridge network whose ADD had run: its record is turned
# back into an intent while the manager is down.
$CTL network create --spec '{"mode":"bridge"}' n-y >/dev/null
yip=$(net_field n-y '.addresses[0]' | cut -d/ -f1)
# Edited before the kill: systemd restarts the manager a second after it.
jq -c '.phase="intent"' $STATE/networks/n-y.json >$STATE/networks/n-y.tmp && mv $STATE/networks/n-y.tmp $STATE/networks/n-y.json
main=$(systemctl show -p MainPID --value taskscope-manager)
kill -9 "$main"
systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl start taskscope-manager
assert_eq "$(err_of $CTL network show n-x)" org.taskscope.Error.NoSuchNetwork "n-x after restart"
assert_eq "$(err_of $CTL network show n-y)" org.taskscope.Error.NoSuchNetwork "n-y after restart"
[[ -e /run/netns/n-x || -e /run/netns/n-y ]] && fail "a namespace of an intent is left"
[[ -e $STATE/networks/n-x.json || -e $STATE/networks/n-y.json ]] && fail "an intent record is left"
assert_eq "$(count_netns)" "$netns0" "namespaces after the intents were undone"
assert_eq "$(count_veth)" "$veth0" "veths after the intents were undone"
assert_eq "$(count_ipam)" "$ipam0" "IPAM reservations after the intents were undone"
assert_eq "$(count_rules n-y)" 0 "rules carrying n-y's id"
assert_eq "$(count_addr_rules "$yip")" 0 "rules naming n-y's address"
echo "network: all checks passed"
