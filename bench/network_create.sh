#!/usr/bin/env bash
# Allocation network cost, in the guest (root, installed manager):
#  1. create+destroy of a bridge network through the manager vs the floor:
#     the same CNI chain (loopback, bridge, firewall, portmap) run by this
#     script calling the plugins directly, plus `ip netns add`/`del`;
#  2. the start of a task joining a network vs one on the host network.
# Usage: network_create.sh [N]   (default 10 rounds each)
set -euo pipefail
N=${1:-10}
CTL=${CTL:-taskscopectl}
CNI=/usr/lib/cni
SUBNET=172.26.80.0/24   # apart from the manager's 172.26.64.0/20
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Each figure is the median of N rounds, with min-max beside it: one slow
# round under TCG (another guest's build on the host) moves a mean, and
# the spread shows whether the floor itself is stable.
stats() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END{printf "%d %d %d", v[int((NR+1)/2)], v[1], v[NR]}'; }

ip link show bench0 >/dev/null 2>&1 || { ip link add bench0 type dummy; ip addr add 192.0.2.9/32 dev bench0; ip link set bench0 up; }

plugin() { # CMD TYPE CONFIG-JSON -> stdout
    CNI_COMMAND=$1 CNI_CONTAINERID=floor CNI_NETNS=/run/netns/floor CNI_IFNAME=eth0 CNI_PATH=$CNI "$CNI/$2" <<<"$3"
}
floor_round() {
    local prev="" out cfg
    ip netns add floor
    for p in '{"type":"loopback"}' \
        '{"type":"bridge","bridge":"benchbr","ipMasq":true,"isGateway":true,"forceAddress":true,"hairpinMode":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"'$SUBNET'"}]],"routes":[{"dst":"0.0.0.0/0"}]}}' \
        '{"type":"firewall","backend":"iptables"}' \
        '{"type":"portmap","capabilities":{"portMappings":true},"snat":true}'; do
        cfg=$(jq -c --argjson prev "${prev:-null}" '. + {name:"bench",cniVersion:"0.4.0"} + (if $prev then {prevResult:$prev} else {} end) + (if .type=="portmap" then {runtimeConfig:{portMappings:[{hostPort:19090,containerPort:80,protocol:"tcp"}]}} else {} end)' <<<"$p")
        out=$(plugin ADD "$(jq -r .type <<<"$p")" "$cfg")
        prev=$out
    done
    for t in portmap firewall bridge loopback; do
        cfg=$(jq -c --argjson prev "$prev" --arg t "$t" '{type:$t,name:"bench",cniVersion:"0.4.0",prevResult:$prev,
            bridge:"benchbr",ipam:{type:"host-local",ranges:[[{subnet:"'$SUBNET'"}]]},backend:"iptables",
            capabilities:{portMappings:true},runtimeConfig:{portMappings:[{hostPort:19090,containerPort:80,protocol:"tcp"}]}}' <<<'{}')
        plugin DEL "$t" "$cfg" >/dev/null
    done
    ip netns del floor
}

mgr_ms="" floor_ms=""
# Interleaved, so that a slow stretch of the host weighs on both sides.
for ((i = 0; i < N; i++)); do
    t0=$(now_ms)
    $CTL network create --spec '{"mode":"bridge","ports":[{"host_port":19091,"container_port":80}]}' bench-net >/dev/null
    $CTL network destroy bench-net
    t1=$(now_ms)
    floor_round
    t2=$(now_ms)
    mgr_ms+=" $((t1 - t0))" floor_ms+=" $((t2 - t1))"
done
read -r mgr mgr_lo mgr_hi <<<"$(stats <<<"$mgr_ms")"
read -r floor floor_lo floor_hi <<<"$(stats <<<"$floor_ms")"
echo "network create+destroy (bridge), median of $N [min-max]: manager ${mgr} ms [$mgr_lo-$mgr_hi]," \
    "floor (plugins from a script + ip netns) ${floor} ms [$floor_lo-$floor_hi]," \
    "ratio $(awk -v a=$mgr -v b=$floor 'BEGIN{printf "%.2f", a/b}')"

$CTL network create --spec '{"mode":"bridge"}' bench-net >/dev/null
host_ms="" joined_ms=""
for ((i = 0; i < N; i++)); do
    t0=$(now_ms)
    $CTL run --wait --spec '{"logs":false}' bench-host "t$i" -- /bin/true >/dev/null
    t1=$(now_ms)
    $CTL run --wait --spec '{"logs":false,"network_namespace":"alloc"}' bench-net "t$i" -- /bin/true >/dev/null
    t2=$(now_ms)
    host_ms+=" $((t1 - t0))" joined_ms+=" $((t2 - t1))"
done
for ((i = 0; i < N; i++)); do $CTL forget bench-host "t$i"; $CTL forget bench-net "t$i"; done
$CTL network destroy bench-net
read -r host host_lo host_hi <<<"$(stats <<<"$host_ms")"
read -r joined joined_lo joined_hi <<<"$(stats <<<"$joined_ms")"
echo "task start to exit, median of $N [min-max]: host network ${host} ms [$host_lo-$host_hi]," \
    "joining a bridge network ${joined} ms [$joined_lo-$joined_hi]," \
    "ratio $(awk -v a=$joined -v b=$host 'BEGIN{printf "%.2f", a/b}')"
ip link del benchbr 2>/dev/null || true
ip link del bench0
