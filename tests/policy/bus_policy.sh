# The bus policy as a table: every method and property of every taskscope
# interface, with what root and an unprivileged user (nobody) may do.
# Sourced by the bus tier (private dbus-daemon with dbus/*.conf included)
# and the system tier (the installed policy on the system bus).
#
# Needs: POLICY_BUSCTL (array: busctl and its bus option), TASK_PATH (an
# existing org.taskscope.Task1 object), TASKSCOPE_SRC_DIR (for the XML).
# "denied" means the bus daemon refused the call (AccessDenied); "allowed"
# means it reached the service, whatever the service answered (the calls
# name a task that does not exist, so a root call changes nothing).
# Signals are not in the table: the bus delivers them to any listener,
# which is why none carries a secret.

MGR=org.taskscope.Manager1
STR=org.taskscope.Streamer1

# ROOT NOBODY DEST PATH INTERFACE KIND MEMBER [SIGNATURE ARGS...]
#   KIND: call (method MEMBER), get/set (Properties.Get/Set of MEMBER)
#   PATH: @M manager, @T a task, @S streamer, @R the plugin registry,
#         @P a plugin (no plugin need exist: the bus decides before the object is looked up)
policy_rows() {
    cat <<'ROWS'
allowed denied  MGR @M org.taskscope.Manager1 call StartTask sss p0 x {"bogus":1}
allowed denied  MGR @M org.taskscope.Manager1 call StopTask sssx p0 x "" -1
allowed denied  MGR @M org.taskscope.Manager1 call SignalTask sss p0 x HUP
allowed allowed MGR @M org.taskscope.Manager1 call GetTask ss p0 x
allowed denied  MGR @M org.taskscope.Manager1 call GetTaskSpec ss p0 x
allowed allowed MGR @M org.taskscope.Manager1 call ListTasks
allowed denied  MGR @M org.taskscope.Manager1 call ForgetTask ss p0 x
allowed denied  MGR @M org.taskscope.Manager1 call UpdateTask sss p0 x {}
allowed denied  MGR @M org.taskscope.Manager1 call CreateNetwork ss p0 {"mode":"bogus"}
allowed denied  MGR @M org.taskscope.Manager1 call DestroyNetwork s p0
allowed allowed MGR @M org.taskscope.Manager1 call GetNetwork s p0
allowed allowed MGR @M org.taskscope.Manager1 call ListNetworks
allowed allowed MGR @M org.taskscope.Manager1 get Version
allowed allowed MGR @M org.taskscope.Manager1 get Slice
allowed allowed MGR @M org.taskscope.Manager1 get Fingerprint
allowed allowed MGR @M org.taskscope.Manager1 get SharedCPUs
allowed allowed MGR @M org.taskscope.Manager1 get CgroupVersion
allowed denied  MGR @M org.taskscope.Manager1 set Version s x
allowed allowed MGR @M org.freedesktop.DBus.Properties call GetAll s org.taskscope.Manager1
allowed allowed MGR @M org.freedesktop.DBus.ObjectManager call GetManagedObjects
allowed allowed MGR @M org.freedesktop.DBus.Introspectable call Introspect
allowed allowed MGR @M org.freedesktop.DBus.Peer call Ping
allowed allowed MGR @T org.taskscope.Task1 get AllocId
allowed allowed MGR @T org.taskscope.Task1 get Name
allowed allowed MGR @T org.taskscope.Task1 get Unit
allowed allowed MGR @T org.taskscope.Task1 get State
allowed allowed MGR @T org.taskscope.Task1 get MainPID
allowed allowed MGR @T org.taskscope.Task1 get ControlGroup
allowed allowed MGR @T org.taskscope.Task1 get Slice
allowed allowed MGR @T org.taskscope.Task1 get AllocSlice
allowed allowed MGR @T org.taskscope.Task1 get AllowedCPUs
allowed allowed MGR @T org.taskscope.Task1 get ReservedCores
allowed allowed MGR @T org.taskscope.Task1 get CPUWeight
allowed allowed MGR @T org.taskscope.Task1 get CPUWeightUnit
allowed allowed MGR @T org.taskscope.Task1 get ExitCode
allowed allowed MGR @T org.taskscope.Task1 get Signal
allowed allowed MGR @T org.taskscope.Task1 get OOMKilled
allowed allowed MGR @T org.taskscope.Task1 get StartedAt
allowed allowed MGR @T org.taskscope.Task1 get FinishedAt
allowed allowed MGR @T org.taskscope.Task1 get Spec
allowed denied  MGR @T org.taskscope.Task1 set Spec s x
allowed allowed MGR @T org.freedesktop.DBus.Properties call GetAll s org.taskscope.Task1
allowed allowed MGR @R org.taskscope.PluginRegistry1 call ListPlugins
allowed allowed MGR @P org.taskscope.Plugin1 get Type
allowed allowed MGR @P org.taskscope.Plugin1 get Name
allowed allowed MGR @P org.taskscope.Plugin1 get Provider
allowed allowed MGR @P org.taskscope.Plugin1 get Version
allowed allowed MGR @P org.taskscope.Plugin1 get Capabilities
allowed allowed MGR @P org.taskscope.Plugin1 get SocketPath
allowed allowed MGR @P org.taskscope.Plugin1 get Healthy
allowed allowed MGR @P org.taskscope.Plugin1 get LastCheck
allowed allowed MGR @P org.taskscope.Plugin1 get Message
allowed allowed MGR @P org.taskscope.Plugin1 get AllocId
allowed allowed MGR @P org.taskscope.Plugin1 get Task
allowed denied  MGR @P org.taskscope.Plugin1 set Healthy b true
allowed denied  STR @S org.taskscope.Streamer1 call ReadLogs ssssxb p0 x stdout start 0 false
allowed denied  STR @S org.taskscope.Streamer1 call GetJournalCopy ss p0 x
allowed allowed STR @S org.taskscope.Streamer1 get Version
allowed allowed STR @S org.taskscope.Streamer1 get Tasks
allowed allowed STR @S org.taskscope.Stats1 call GetTaskStats ss p0 x
allowed allowed STR @S org.taskscope.Stats1 call GetAllStats
allowed allowed STR @S org.taskscope.Stats1 call GetAllocationStats s p0
allowed allowed STR @S org.taskscope.Stats1 call GetAllAllocationStats
allowed denied  STR @S org.taskscope.Stats1 call SetTaskInterval ssx p0 x 1000
allowed allowed STR @S org.taskscope.Stats1 get DefaultIntervalMs
allowed denied  STR @S org.taskscope.Stats1 set DefaultIntervalMs t @DEFAULT_INTERVAL
allowed allowed STR @S org.taskscope.Stats1 get MinIntervalMs
allowed allowed STR @S org.taskscope.Stats1 get MaxIntervalMs
allowed allowed STR @S org.taskscope.Stats1 get SampledTasks
allowed allowed STR @S org.taskscope.Stats1 get CgroupVersion
allowed denied  STR @S org.taskscope.Exec1 call StartExec ssasa{ss}bqq p0 x 1 /bin/true 0 false 24 80
allowed denied  STR @S org.taskscope.Exec1 call ResizeExec tqq 999999 24 80
allowed denied  STR @S org.taskscope.Exec1 call WaitExec t 999999
allowed denied  STR @S org.taskscope.Exec1 call ExecOnce ssasa{ss}uu p0 x 1 /bin/true 0 1000 10
allowed allowed STR @S org.taskscope.Exec1 get Sessions
allowed allowed STR @S org.freedesktop.DBus.Properties call GetAll s org.taskscope.Stats1
allowed allowed STR @S org.freedesktop.DBus.Introspectable call Introspect
allowed allowed STR @S org.freedesktop.DBus.Peer call Ping
ROWS
}

# Every method and property in dbus/org.taskscope.*.xml has a row.
policy_table_complete() {
    local xml iface kind name missing=0
    local rows
    rows=$(policy_rows)
    for xml in "$TASKSCOPE_SRC_DIR"/dbus/org.taskscope.*.xml; do
        while read -r iface kind name; do
            local k=call
            [[ $kind == property ]] && k=get
            if ! grep -qE "^[a-z]+ +[a-z]+ +[A-Z]+ +@[A-Z] +$iface +$k +$name( |\$)" <<<"$rows"; then
                echo "MISSING: $iface $kind $name has no row in the policy table"
                missing=$((missing + 1))
            fi
        done < <(awk '
            match($0, /<interface name="[^"]*"/) { iface = substr($0, RSTART + 17, RLENGTH - 18) }
            match($0, /<method name="[^"]*"/) { print iface, "method", substr($0, RSTART + 14, RLENGTH - 15) }
            match($0, /<property name="[^"]*"/) { print iface, "property", substr($0, RSTART + 16, RLENGTH - 17) }
        ' "$xml")
    done
    return "$missing"
}

# One probe: prints "allowed" or "denied".
policy_probe() {
    local caller=$1 dest=$2 path=$3 iface=$4 kind=$5 member=$6
    shift 6
    local as=()
    [[ $caller == nobody ]] && as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    local out rc=0
    case $kind in
    # "--": an argument such as -1 is not an option of busctl's.
    call) out=$("${as[@]}" "${POLICY_BUSCTL[@]}" -- call "$dest" "$path" "$iface" "$member" "$@" 2>&1) || rc=$? ;;
    get) out=$("${as[@]}" "${POLICY_BUSCTL[@]}" -- get-property "$dest" "$path" "$iface" "$member" 2>&1) || rc=$? ;;
    set) out=$("${as[@]}" "${POLICY_BUSCTL[@]}" -- set-property "$dest" "$path" "$iface" "$member" "$@" 2>&1) || rc=$? ;;
    esac
    # A call busctl could not even build proves nothing either way.
    if [[ "$out" == *"invalid option"* || "$out" == *"Failed to parse"* || "$out" == *"Too few parameters"* ||
        "$out" == *"Too many parameters"* || "$out" == *"Failed to connect"* ]]; then
        echo "broken: $out"
        return
    fi
    if ((rc != 0)) && [[ "$out" == *AccessDenied* || "$out" == *"ccess denied"* || "$out" == *"Rejected send message"* ]]; then
        echo denied
    else
        echo allowed
    fi
}

# Checks every row for both callers; prints each mismatch and a summary,
# returns the number of mismatches.
policy_check() {
    local default_interval
    default_interval=$("${POLICY_BUSCTL[@]}" get-property $STR /org/taskscope/Streamer1 org.taskscope.Stats1 \
        DefaultIntervalMs | awk '{print $2}')
    local rows=0 bad=0 want_root want_nobody dest path iface kind member rest got_root got_nobody
    while read -r want_root want_nobody dest path iface kind member rest; do
        [[ -n "$want_root" ]] || continue
        dest=${!dest}
        case $path in @M) path=/org/taskscope/Manager1 ;; @T) path=$TASK_PATH ;; @S) path=/org/taskscope/Streamer1 ;;
        @R) path=/org/taskscope/Manager1/plugins ;; @P) path=/org/taskscope/Manager1/plugins/csi_5fnone ;; esac
        rest=${rest//@DEFAULT_INTERVAL/$default_interval}
        local args=()
        # shellcheck disable=SC2206 # the table's arguments hold no spaces
        [[ -n "$rest" ]] && args=($rest)
        [[ "${args[*]:-}" == *'""'* ]] && args=("${args[@]/\"\"/}")
        got_root=$(policy_probe root "$dest" "$path" "$iface" "$kind" "$member" "${args[@]}")
        got_nobody=$(policy_probe nobody "$dest" "$path" "$iface" "$kind" "$member" "${args[@]}")
        rows=$((rows + 1))
        if [[ "$got_root" != "$want_root" || "$got_nobody" != "$want_nobody" ]]; then
            echo "MISMATCH: $iface $kind $member: root $got_root (want $want_root), nobody $got_nobody (want $want_nobody)"
            bad=$((bad + 1))
        fi
    done < <(policy_rows)
    echo "policy table: $rows members x 2 callers checked, $bad mismatches"
    return "$bad"
}
