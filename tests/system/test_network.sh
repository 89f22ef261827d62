#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# Allocation networks: a namespace per allocation (mode none: loopback
# only; mode bridge: Debian's CNI plugins), joined by the allocation's
# tasks before their first instruction (isolated ones too, and exec
# sessions into them); cross-allocation traffic over the bridge, a host
# port mapped to a task, named errors for bad input, nothing left after
# destroy (counted: netns, links, iptables, ip6tables, nft, IPAM), and
# recovery after kill -9 of the manager in the middle of ADD and of DEL.
# The guest has no network device: the node's address is 192.0.2.1 on a
# dummy interface made here.
source "$(dirname "$0")/lib.sh"
# A silent exit under set -e says nothing: name the line that failed.
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (status $?)"' ERR

OUT=/run/nettest
STATE=/var/lib/taskscope
IPAM=/var/lib/cni/networks/taskscope
ALLOCS="n-none n-a n-b n-c n-x n-h1 n-h2"
# A CNI plugin of this test, put in the chain after firewall: it passes
# its prevResult on, and the first time it runs the command its config
# names as "hold" it stays (its pid in $OUT/held-<command>) until killed,
# so the manager can be killed -9 with ADD or DEL half done.
HOLD=/usr/lib/cni/taskscope-test-hold

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
    for f in $OUT/held-*; do [[ -s $f ]] && kill -9 "$(cat "$f")" 2>/dev/null; done
    ip6tables -t nat -D POSTROUTING -s fd00:26::99/128 -m comment --comment 'name: "taskscope" id: "n-h2"' -j ACCEPT 2>/dev/null
    nft delete table inet taskscope_test 2>/dev/null
    ip link del node0 2>/dev/null
    ip link del nomad 2>/dev/null
    rm -f $HOLD
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
# Every rule the node has, as iptables-save, ip6tables-save and nft show
# them (Debian's iptables is iptables-nft; a plugin may write nft rules of
# its own), without counters.
all_rules() {
    { iptables-save; ip6tables-save; nft list ruleset; } 2>/dev/null | grep -v '^[[:space:]]*#' |
        sed -E 's/\[[0-9]+:[0-9]+\]//; s/counter packets [0-9]+ bytes [0-9]+/counter/'
}
# Rules carrying an allocation's id (CNI's comments: name: "taskscope" id: "<alloc>").
# (the plugins' nftables backend: "<hash>, net: taskscope, if: eth0, id: <alloc>").
count_rules() { all_rules | grep -cF -e "id: \\\"$1\\\"" -e "id: $1\"" || true; }
# Rules naming an address (the firewall plugin's carry no comment).
count_addr_rules() { all_rules | grep -cE "(^|[^0-9])${1//./\\.}(/32|[^0-9]|\$)" || true; }
# Per-container chains (bridge's CNI-<hash>, portmap's CNI-DN-<hash>).
count_chains() { all_rules | grep -cE '(^:|chain )CNI-((DN|SN)-)?[0-9a-f]{16,}' || true; }
link_names() { ip -o link | awk -F': ' '{print $2}' | cut -d@ -f1 | sort | tr '\n' ' '; }
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
ip netns list | quiet_grep -w n-none || fail "ip netns list does not show n-none"
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
run_in n-none cli "" /bin/sh -c 'for i in $(seq 100); do echo over-loopback | nc -N -w 5 127.0.0.1 7000 && exit 0; sleep 0.2; done; exit 1'  # the sleep paces the client's retries until the server listens
rc=0; $CTL wait n-none cli >/dev/null || rc=$?
assert_eq "$rc" 0 "client task reached the server task over loopback"
rc=0; $CTL wait n-none srv >/dev/null || rc=$?
assert_eq "$(cat $OUT/lo.out)" over-loopback "what the server task got"
# The same port on the host is free: the server listened in the namespace.
ss -ltn | quiet_grep ':7000 ' && fail "port 7000 listened on in the host namespace"
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
ls $IPAM | quiet_grep -x "$bip" || fail "no host-local reservation for $bip"
ok "host-local reserved $bip"
[[ $(count_rules n-b) -gt 0 ]] || fail "no rule carries n-b's id"
ok "iptables rules carry n-b's id"

run_in n-b srv "" /bin/sh -c "exec nc -lk 8080 > $OUT/b.out"
run_in n-a cli "" /bin/sh -c "for i in \$(seq 100); do echo from-a | nc -N -w 5 $bip 8080 && exit 0; sleep 0.2; done; exit 1"  # the sleep paces the client's retries until the server listens
rc=0; $CTL wait n-a cli >/dev/null || rc=$?
assert_eq "$rc" 0 "task of n-a reached the server of n-b at $bip:8080"
# From the guest's root namespace to the node address's mapped port.
for i in $(seq 100); do echo from-host | nc -N -w 5 192.0.2.1 18080 && break; sleep 0.2; done  # the sleep paces the client's retries until the server listens
wait_until "both messages at the server" 100 grep -q from-host $OUT/b.out
grep -q from-a $OUT/b.out || fail "server of n-b did not get from-a: $(cat $OUT/b.out)"
ok "root namespace reached n-b's server through 192.0.2.1:18080"

# ---- an isolated task in the allocation's network, and exec into it ------
# It joins n-a's namespace before its mount and pid setup: it sees n-a's
# interfaces (netlink and its own sysfs), reaches n-b's server at n-b's
# bridge address, and serves a task of n-a that is not isolated over
# loopback.
mkdir -p $OUT/iso
iso=",\"user\":\"root\",\"isolation\":{\"volumes\":[{\"source\":\"$OUT/iso\",\"target\":\"/out\"}]}"
# (Its 0.2 s sleeps pace its retries until n-b's server listens.)
run_in n-a iso "$iso" /bin/sh -c "ip -o link | awk -F': ' '{print \$2}' | cut -d@ -f1 | tr '\n' ' ' >/out/links
    ls /sys/class/net | tr '\n' ' ' >/out/sys
    for i in \$(seq 100); do echo from-iso | nc -N -w 5 $bip 8080 && { echo yes >/out/reached; break; }; sleep 0.2; done
    exec nc -lk 7100 >/out/lo.out"
wait_until "the isolated task's report" 300 test -s $OUT/iso/reached
pid=$(task_field n-a iso pid)
assert_eq "$(stat -L -c %i /proc/$pid/ns/net)" "$(stat -L -c %i /run/netns/n-a)" "the isolated task's netns is n-a's (inode)"
[[ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]] || fail "the task is not isolated (host mount namespace)"
assert_eq "$(cat $OUT/iso/links)" "lo eth0 " "links the isolated task sees"
assert_eq "$(cat $OUT/iso/sys)" "eth0 lo " "/sys/class/net of the isolated task"
wait_until "from-iso at n-b's server" 100 grep -q from-iso $OUT/b.out
ok "the isolated task of n-a reached n-b's server at $bip:8080"
run_in n-a cli-lo "" /bin/sh -c 'for i in $(seq 100); do echo iso-loopback | nc -N -w 5 127.0.0.1 7100 && exit 0; sleep 0.2; done; exit 1'  # the sleep paces the client's retries until the server listens
rc=0; $CTL wait n-a cli-lo >/dev/null || rc=$?
assert_eq "$rc" 0 "a task of n-a (not isolated) reached the isolated one over loopback"
wait_until "the message at the isolated server" 100 grep -q iso-loopback $OUT/iso/lo.out

# Exec sessions join the task's network: an isolated task, one that is
# not, and a one-shot exec (the health-check path).
names='ip -o link | awk -F": " "{print \$2}" | cut -d@ -f1 | tr "\n" " "'
out=$($CTL exec n-a iso -- sh -c "$names; echo; ls /sys/class/net | tr '\n' ' '")
assert_eq "$out" "lo eth0 
eth0 lo " "links and /sys/class/net an exec into the isolated task sees"
assert_eq "$($CTL exec n-b srv -- sh -c "$names")" "lo eth0 " "links an exec into n-b's server sees"
out=$($CTL exec --timeout 30000 n-b srv -- ip -o -4 addr show dev eth0)
grep -qF " $bip/" <<<"$out" || fail "a one-shot exec into n-b's server does not see $bip on eth0: $out"
ok "a one-shot exec into n-b's server sees eth0 with $bip"
$CTL stop --grace 0 n-a iso >/dev/null || true
$CTL forget n-a iso >/dev/null

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
run_in n-a cli2 "" /bin/sh -c "for i in \$(seq 100); do echo after-restart | nc -N -w 5 $bip 8080 && exit 0; sleep 0.2; done; exit 1"  # the sleep paces the client's retries until the server listens
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
assert_eq "$(count_chains)" 0 "per-container CNI chains (iptables, ip6tables, nft)"
# The bridge stays, as Nomad's does; nothing else.
assert_eq "$(ip -o link | wc -l)" "$((links0 + 1))" "links after destroy (the nomad bridge stays)"
# What the node looks like with no allocation network but the node-wide
# parts made once (the bridge, CNI-FORWARD, CNI-HOSTPORT-*): everything
# below must come back to exactly this.
# The ip6tables nat table that a rule added below by hand lives in is made
# now (iptables-nft makes a table and its chain on first use, and keeps
# them), so that its rule, once swept, leaves the ruleset as it is here.
ip6tables -t nat -A POSTROUTING -m comment --comment taskscope-test -j ACCEPT
ip6tables -t nat -D POSTROUTING -m comment --comment taskscope-test -j ACCEPT
rules1=$(all_rules | sort)
links1=$(link_names)
ipamfiles1=$(ls -A $IPAM | grep -v '^last_reserved_ip' | tr '\n' ' ')

# ---- kill -9 of the manager in the middle of ADD, then of DEL -----------
cat >$HOLD <<HOLDER
#!/bin/sh
in=\$(cat)
if [ "\$CNI_COMMAND" = "\$(printf '%s' "\$in" | jq -r '.hold')" ] && [ ! -e $OUT/held-\$CNI_COMMAND ]; then
    echo \$\$ >$OUT/held-\$CNI_COMMAND
    exec sleep 600
fi
[ "\$CNI_COMMAND" = ADD ] && printf '%s' "\$in" | jq -c '.prevResult'
exit 0
HOLDER
chmod 755 $HOLD
# The node's chain with the holder between firewall and portmap.
held_spec() {
    jq -cn --arg hold "$1" --argjson port "$2" '{mode:"bridge", ports:[{host_port:$port, container_port:80}],
        conflist:{cniVersion:"0.4.0", name:"taskscope", plugins:[{type:"loopback"},
            {type:"bridge", bridge:"nomad", ipMasq:true, isGateway:true, forceAddress:true, hairpinMode:true,
             ipam:{type:"host-local", ranges:[[{subnet:"172.26.64.0/20"}]], routes:[{dst:"0.0.0.0/0"}]}},
            {type:"firewall", backend:"iptables"}, {type:"taskscope-test-hold", hold:$hold},
            {type:"portmap", capabilities:{portMappings:true}, snat:true}]}}'
}
kill_manager_restart() {
    local main
    main=$(systemctl show -p MainPID --value taskscope-manager)
    kill -9 "$main"
    kill -9 "$(cat "$1")"  # the held plugin: the dead manager's child, not ours to keep
    systemctl reset-failed taskscope-manager 2>/dev/null || true
    systemctl start taskscope-manager
}

# ADD: loopback, bridge and firewall have run (veth, IPAM reservation,
# masquerade and firewall rules), the record is still the intent and
# holds no address.
$CTL network create --spec "$(held_spec ADD 18101)" n-h1 >/dev/null 2>&1 &
addpid=$!
wait_until "ADD held after firewall" 600 test -s $OUT/held-ADD
# host-local's reservation: a file named by the address, "<alloc>\r\neth0".
h1ip=$({ grep -lE $'^n-h1(\r|$)' $IPAM/* 2>/dev/null || true; } | sed -n 1p | xargs -r basename)
[[ -n "$h1ip" ]] || fail "no IPAM reservation for n-h1 while its ADD is held"
[[ $(count_addr_rules "$h1ip") -gt 0 ]] || fail "no firewall rule names $h1ip while the ADD is held"
ok "ADD of n-h1 held with $h1ip reserved and its rules made"
# Beside it, the intent of a mode none network whose namespace exists:
# the same restart removes both.
ip netns add n-x
printf '{"alloc_id":"n-x","spec":"{}","phase":"intent","netns":"/run/netns/n-x","conflist":null,"result":null,"addresses":[]}' \
    >$STATE/networks/n-x.json
kill_manager_restart $OUT/held-ADD
assert_eq "$(err_of $CTL network show n-x)" org.taskscope.Error.NoSuchNetwork "n-x after restart"
[[ -e /run/netns/n-x || -e $STATE/networks/n-x.json ]] && fail "n-x's namespace or intent record is left"
[[ -e /run/netns/n-h1 || -e $STATE/networks/n-h1.json ]] && fail "n-h1's namespace or intent record is left"
wait $addpid 2>/dev/null || true
assert_eq "$(err_of $CTL network show n-h1)" org.taskscope.Error.NoSuchNetwork "n-h1 after kill -9 during ADD and restart"
assert_eq "$(count_rules n-h1)" 0 "rules carrying n-h1's id"
assert_eq "$(count_addr_rules "$h1ip")" 0 "rules naming n-h1's address $h1ip (the firewall plugin's)"

# DEL: portmap has run, the holder stays; firewall's, bridge's and the
# reservation are left. Rules a DEL may leave that no plugin of this
# chain removes are added by hand: an ip6tables rule and an nft-native
# one carrying n-h2's id. The restart must finish the DEL and sweep them.
$CTL network create --spec "$(held_spec DEL 18102)" n-h2 >/dev/null
h2ip=$(net_field n-h2 '.addresses[0]' | cut -d/ -f1)
ip6tables -t nat -A POSTROUTING -s fd00:26::99/128 -m comment --comment 'name: "taskscope" id: "n-h2"' -j ACCEPT
nft add table inet taskscope_test
nft add chain inet taskscope_test post
nft add rule inet taskscope_test post ip saddr "$h2ip" counter \
    comment '"0123456789abcdef-0123456789abcdef, net: taskscope, if: eth0, id: n-h2"'
ip6tables-save | quiet_grep -F 'id: \"n-h2\"' || fail "the ip6tables rule of n-h2 was not made"
nft list table inet taskscope_test | quiet_grep -F 'id: n-h2"' || fail "the nft rule of n-h2 was not made"
$CTL network destroy n-h2 >/dev/null 2>&1 &
delpid=$!
wait_until "DEL held after portmap" 600 test -s $OUT/held-DEL
[[ -e /run/netns/n-h2 ]] || fail "n-h2's namespace went before the held DEL"
ok "DEL of n-h2 held with its namespace, $h2ip and its rules still there"
kill_manager_restart $OUT/held-DEL
wait $delpid 2>/dev/null || true
assert_eq "$(err_of $CTL network show n-h2)" org.taskscope.Error.NoSuchNetwork "n-h2 after kill -9 during DEL and restart"
assert_eq "$(count_rules n-h2)" 0 "rules carrying n-h2's id (iptables, ip6tables, nft-native)"
assert_eq "$(count_addr_rules "$h2ip")" 0 "rules naming n-h2's address"
nft delete table inet taskscope_test

# ---- everything as it was after the first destroy -------------------------
assert_eq "$(count_netns)" "$netns0" "namespaces at the end"
assert_eq "$(count_veth)" "$veth0" "veths at the end"
assert_eq "$(count_ipam)" "$ipam0" "IPAM reservations at the end"
assert_eq "$(count_chains)" 0 "per-container CNI chains at the end"
assert_eq "$(link_names)" "$links1" "links at the end"
assert_eq "$(ls -A $IPAM | grep -v '^last_reserved_ip' | tr '\n' ' ')" "$ipamfiles1" "files of the IPAM directory at the end"
if [[ "$(all_rules | sort)" != "$rules1" ]]; then
    diff <(echo "$rules1") <(all_rules | sort) || true
    fail "iptables-save, ip6tables-save and nft list ruleset differ from after the first destroy"
fi
ok "iptables-save, ip6tables-save and nft list ruleset: $(wc -l <<<"$rules1") lines, as after the first destroy"
echo "network: all checks passed"
