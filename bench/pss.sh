# Sourced by the benches that weigh the daemons: the proportional set size
# (kB) of the manager and every shim together, from smaps_rollup, so that
# pages the shims share are counted once across them.
pss_sum() {
    local total=0 p v
    for p in $(pgrep -x taskscope-manag) $(pgrep -x taskscope-shim); do
        v=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
        total=$((total + v))
    done
    echo "$total"
}
