#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/ from the unit tests' own
inputs (their raw-string JSON literals) and a few hand-written values.
Seeds are named seed-<sha1 of the content>, so a rerun adds nothing twice;
files a fuzz run found (crash-*, and any other name) are left as they are.
Run from anywhere: python3 fuzz/make_seeds.py"""
import hashlib
import json
import os
import re
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW = re.compile(r'R"\((.*?)\)"', re.S)


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(ROOT, "fuzz", "corpus", target)
    os.makedirs(d, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def raw_strings(*paths):
    for p in paths:
        with open(os.path.join(ROOT, p)) as f:
            yield from RAW.findall(f.read())


def msgpack(v):
    """go-cty's msgpack for plain JSON-like values (enough for seeds)."""
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return (bytes([0xA0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b
    if isinstance(v, list):
        return bytes([0x90 | len(v)]) + b"".join(msgpack(x) for x in v)
    if isinstance(v, dict):
        return bytes([0x80 | len(v)]) + b"".join(msgpack(k) + msgpack(x) for k, x in v.items())
    raise TypeError(v)


def json_seeds():
    spec_tests = ["tests/unit/spec/test_task_spec.cpp", "tests/unit/spec/test_plugin_spec.cpp",
                  "tests/unit/spec/test_task_limits.cpp", "tests/unit/wire/test_task_json.cpp"]
    for s in raw_strings(*spec_tests):
        put("task_spec", s)
        try:
            j = json.loads(s)
        except ValueError:
            continue
        if isinstance(j, dict) and isinstance(j.get("resources"), dict):
            put("resources", json.dumps(j["resources"]))
    for s in ['{"memory_mb":256}', '{', '{"cores":2,"cpuset":"0-1"}', '{"memory_mb":128,"memory_max_mb":256}',
              '{"io_weight":100}', '{"pids_max":10,"cpu_quota_percent":50}', '[]', '{"memory_mb":-1}']:
        put("resources", s)
    for s in raw_strings("tests/unit/network/test_network_spec.cpp"):
        put("network_spec", s)


def cty_seeds():
    blocks = [
        {"command": "/bin/sh", "args": ["-c", "true"]},
        {"command": "/usr/bin/env", "pid_mode": "host", "ipc_mode": "private", "cap_add": ["net_raw"],
         "cap_drop": ["all"], "work_dir": "/tmp", "isolation": "chroot"},
        {"command": "x", "cgroup_v1_override": [{"pids": "a/b"}]},
        {"command": "x", "cgroup_v2_override": "a"},
        {"command": "x", "denied_envvars": ["AWS_*"], "ulimit": {"nofile": "1024"}, "oom_score_adj": 5},
        {"command": "x", "comand": "y"},
        {"args": ["x"]},
        {"command": "x", "port": [b"\"number\"".decode(), 8080]},
        [1, -3, 2.5, "123456789012345678", None],
    ]
    for b in blocks:
        put("cty_task_config", msgpack(b))
    put("cty_task_config", b"")
    put("cty_task_config", b"\x82\xa7command\xa1x\xa4args\xd4\x00\x00")  # an unknown (extension) value
    configs = [
        {"enabled": True, "denied_host_uids": None},
        {"no_pivot_root": False, "default_pid_mode": "host", "default_ipc_mode": "private",
         "allow_caps": ["chown", "CAP_KILL", "net_raw"], "denied_host_uids": "0,10-20", "denied_host_gids": "0"},
        {"enabled": True, "denied_envvars": ["AWS_*", "SECRET"]},
        {"allow_caps": ["all"], "dynamic_workload_users": False},
        {"default_isolation": "vm"},
        {"denied_host_uids": "0,20-10"},
    ]
    for c in configs:
        put("cty_driver_config", msgpack(c))


def file_seeds():
    fx = os.path.join(ROOT, "tests", "fixtures")
    for dirpath, _, names in os.walk(fx):
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as f:
                data = f.read()
            if n in ("mounts", "mountinfo"):
                put("mount_table", data)
            if n in ("online", "present") or n.startswith("cpuset."):
                put("cpu_list", data)
    with open(os.path.join(ROOT, "tests/unit/scope/test_mount_table.cpp")) as f:
        src = f.read()
    # The test's mountinfo: its adjacent string literals joined.
    m = re.search(r'kMountinfo\s*=\s*((?:\s*"(?:[^"\\]|\\.)*")+)', src)
    if m:
        put("mount_table", "".join(json.loads(x) for x in re.findall(r'"(?:[^"\\]|\\.)*"', m.group(1))))
    put("mount_table", "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n")
    for s in ["0-3,5", "3-1", "1,,2", "0-a", "70000", "5,0-2,3,4-4,1", "", "0\n", " 0-1 \n"]:
        put("cpu_list", s)
    # cgroup_stats: the first byte picks the file (scope::StatFile's order).
    stats = [(0, "usage_usec 10\nuser_usec 6\nsystem_usec 4\nnr_periods 1\nnr_throttled 1\nthrottled_usec 9\n"),
             (1, "1048576\n"), (2, "anon 4096\nfile 8192\nkernel 100\n"), (3, "0\n"), (4, "max\n"),
             (5, "7\n"), (6, "123456789\n"), (7, "user 250\nsystem 50\n"),
             (8, "nr_periods 3\nnr_throttled 1\nthrottled_time 5000\n"), (9, "4096\n"), (10, "8192\n"),
             (11, "total_rss 10\ntotal_cache 20\ntotal_swap 0\nrss 5\ncache 6\nswap 0\n"), (12, "0\n"), (13, "3\n"),
             (0, "usage_usec 10\nuser_usec ten\n"), (2, "anon\n")]
    for i, text in stats:
        put("cgroup_stats", bytes([i]) + text.encode())
    put("exit_record", "exit_code=137\nsignal=9\noom_killed=1\nfinished_at_us=1700000000000000\nexec_error=0\n"
                       "exec_error_step=\n")
    for s in ["signal=9\n", "exit_code=abc\n", "exit_code=0\n", "exit_code=127\nexec_error=2\nexec_error_step=exec\n"]:
        put("exit_record", s)
    for s in ['{"alloc_id":"a1","task":"web","log_dir":"/var/log/a1","max_files":10,"max_file_size_mb":10}\n',
              '{"alloc_id":"a1","task":"web","log_dir":"/l","max_files":2,"max_file_size_mb":1,"exited":true}\n',
              '{"alloc_id":"a1"}', '[]', '{']:
        put("spool_description", s)
    for s in raw_strings("tests/unit/wire/test_task_json.cpp"):
        put("task_json", s)
    for s in raw_strings("tests/unit/network/test_cni_config.cpp"):
        put("cni_result", s)
    # A record as task::toJson writes it, then variations.
    rec = {"alloc_id": "a1", "task": "web", "unit": "a1-web.scope", "spec": '{"command":"/bin/true"}',
           "state": "exited", "pid": 0, "shim_pid": 42, "cgroup": "/nomad.slice/a1-web.scope",
           "process_spec": "", "cpus": "0-1", "reserved_cores": False, "started_at_us": 1700000000000000,
           "exit_code": 0, "signal": 0, "oom_killed": False, "finished_at_us": 1700000000000001,
           "exec_error": 0, "exec_error_step": "", "exit_reported": True, "kill_deadline_us": 0,
           "lost_reason": ""}
    put("task_record", json.dumps(rec))
    put("task_record", json.dumps(dict(rec, state="running", pid=7, slice="nomad-a1.slice",
                                       alloc_slice="nomad-a1.slice", weight_on_scope=False,
                                       queued_stop_signal=15, queued_stop_grace_ms=500)))
    put("task_record", json.dumps(dict(rec, spec='{"command":"/bin/sleep","env":{"A":1}}')))
    put("task_record", json.dumps(dict(rec, state="bogus")))
    put("task_record", json.dumps(dict(rec, cpus="3-1")))


def shim_seeds():
    """shim_options: process specs as the manager's launcher writes them
    (words, a NUL after each): the identity, then the option lists the
    launcher's tests expect (test_isolation.cpp) and the shim test's bad
    options (test_shim.sh)."""
    ident = ["--uid", "1000", "--gid", "1000", "--cwd", "/srv"]

    def spec(words):
        return b"".join(w.encode() + b"\0" for w in words)

    with open(os.path.join(ROOT, "tests/unit/manager/launch/test_isolation.cpp")) as f:
        src = f.read()
    for lst in re.findall(r'\{((?:\s*"[^"]*"\s*,?)+)\}', src):
        words = re.findall(r'"([^"]*)"', lst)
        if words and words[0].startswith("--"):
            put("shim_options", spec(ident + words))
    with open(os.path.join(ROOT, "tests/unit/shim/test_shim.sh")) as f:
        sh = f.read()
    m = re.search(r'for bad in ((?:"[^"]*"\s*)+);', sh)
    if m:
        for bad in re.findall(r'"([^"]*)"', m.group(1)):
            put("shim_options", spec(ident + bad.split()))
    put("shim_options", spec(["--uid", "x", "--gid", "0", "--cwd", "/"]))
    put("shim_options", spec(ident + ["--groups", "10,20,30"]))
    put("shim_options", spec(ident + ["--groups", "10,,x"]))
    put("shim_options", spec(ident + [
        "--root", "/var/lib/t/a1/web", "--ro-bind", "/bin", "--ro-bind", "/usr", "--alloc-dir", "/var/lib/t/a1/alloc",
        "--volume", "/srv/data", "/data", "ro,private", "--volume", "/srv/s", "/s", "rw,bidirectional",
        "--pid-ns", "private", "--ipc-ns", "host", "--caps", "a80425fb", "--no-new-privs", "1",
        "--secrets-size", "1048576", "--secrets-dir", "/var/lib/t/a1/web/secrets", "--device", "/dev/fuse", "/dev/fuse",
        "--dns-server", "192.0.2.1", "--dns-option", "ndots:2", "--hosts", "web", "10.1.2.3",
        "--rlimit", "7", "1024", "4096", "--oom-score-adj", "-1000"]))
    put("shim_options", spec(ident + ["--volume", "/a", "/b", "rw,host-to-task", "--secrets-size", "4095"]))
    put("shim_options", spec(ident + ["--join-cgroup", "/sys/fs/cgroup/x/cgroup.procs", "--netns", "/run/netns/a1",
                                      "--stdout", "/dev/null", "--release-fifo", "/run/f", "--cgroup-root", "/c"]))
    put("shim_options", spec(ident + ["--stdout", "/run/o", "--release-fifo", "/run/f", "--keep-task-zombie",
                                      "--netns", "/run/netns/a1"]))
    put("shim_options", spec(ident + ["--caps", "ffffffffffffffffff"]))
    put("shim_options", spec(ident + ["--"]))
    put("shim_options", spec(ident)[:-1])  # the last word without its NUL
    put("shim_options", b"")


def report_seeds():
    """shim_report: byte 0 the pipe's chunk size less one, then a task
    shim's report lines: "pid N" and the release's outcome the shim test
    expects (test_shim.sh's go "..."), and the launcher test's streams."""
    with open(os.path.join(ROOT, "tests/unit/shim/test_shim.sh")) as f:
        sh = f.read()
    outcomes = sorted(set(re.findall(r'^\s*go "([a-z]+ [0-9]+ [a-z-]+)"', sh, re.M))) + ["started", "error 13 join-cgroup"]
    for i, o in enumerate(outcomes):
        put("shim_report", bytes([i * 7]) + ("pid %d\n%s\n" % (4242 + i, o)).encode())
    with open(os.path.join(ROOT, "tests/unit/manager/launch/test_launcher.cpp")) as f:
        src = f.read()
    for text in re.findall(r'p\.put\("((?:[^"\\]|\\.)*)"\)', src):
        put("shim_report", b"\x05" + json.loads('"%s"' % text).encode())
    for s in ["error 22 args\n", "pid 0\n", "pid 42\nexecfailed x execve\n", "pid 42\nexecfailed 2\n",
              "pid 42\nstarted"]:
        put("shim_report", b"\x7f" + s.encode("latin-1"))


def exec_frame(kind, value, step=b""):
    """struct shim_exec_report (shim_protocol.h): kind, value, step[24]."""
    return struct.pack("<ii", kind, value) + step[:23].ljust(24, b"\0")


def exec_seeds():
    """exec_frames: byte 0 the report pipe's chunk size less one (and the
    capture's limit), byte 1 how many bytes at the end are the keeper's
    status (8: it still runs), then the shim --exec's report frames as
    exec.c's report() writes them (LEADER, FAILED with "step detail")."""
    leader, failed = 1, 2
    streams = [
        exec_frame(leader, 4242),
        exec_frame(failed, 2, b"execve ls"),
        exec_frame(failed, 13, b"setns mnt"),
        exec_frame(failed, 22, b"process spec"),
        exec_frame(failed, 3, b"task exited"),
        exec_frame(leader, 4242) + exec_frame(failed, 1, b"chdir /srv"),
        exec_frame(failed, 2, b"execve a-very-long-program-name"),
        b"",
    ]
    # Wait statuses: exit 0, exit 3, killed by 9, by 15 with a core, stopped.
    statuses = [0x0000, 0x0300, 0x0009, 0x008f, 0x137f]
    for i, st in enumerate(streams):
        put("exec_frames", bytes([31, 4]) + st + struct.pack("<i", statuses[i % len(statuses)]))
    put("exec_frames", bytes([5, 8]) + exec_frame(leader, 77))  # torn into 6-byte writes; the keeper runs
    put("exec_frames", bytes([63, 2]) + exec_frame(leader, 77) + b"\x09\x00")  # a torn status
    put("exec_frames", bytes([63, 0]) + exec_frame(7, 1))  # an unknown kind; the keeper gone without a word


def pb_field(number, wire, payload):
    """One protobuf field: its key, then a varint (wire 0) or bytes (wire 2)."""
    def varint(v):
        out = b""
        while True:
            b, v = v & 0x7F, v >> 7
            out += bytes([b | (0x80 if v else 0)])
            if not v:
                return out
    if wire == 0:
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def csi_seeds():
    """csi_answers: byte 0 the message (0 Probe, 1 GetPluginInfo, 2
    GetPluginCapabilities), then its protobuf encoding: the test plugin's
    answers (tests/csi/test_csi_plugin.cpp, its name and version from
    test_csi_plugin.sh), the registry test's provider, and a few that the
    converters refuse or name UNKNOWN (the review-* files are by hand)."""
    put("csi_answers", b"\x00")  # no ready field: ready
    put("csi_answers", b"\x00" + pb_field(1, 2, pb_field(1, 0, 1)))
    put("csi_answers", b"\x00" + pb_field(1, 2, b""))  # ready = false
    def info(name, version, manifest=()):
        body = pb_field(1, 2, name.encode()) + pb_field(2, 2, version.encode())
        for k, v in manifest:
            body += pb_field(3, 2, pb_field(1, 2, k.encode()) + pb_field(2, 2, v.encode()))
        return b"\x01" + body
    put("csi_answers", info("org.taskscope.test-csi", "1.2.3", [("test", "taskscope")]))
    put("csi_answers", info("org.example.csi", "1.0"))
    put("csi_answers", info("", "1.0"))
    put("csi_answers", info("-bad.name", "1.0"))
    def cap(service=None, expansion=None):
        if service is not None:
            return pb_field(1, 2, pb_field(1, 2, pb_field(1, 0, service) if service else b""))
        if expansion is not None:
            return pb_field(1, 2, pb_field(2, 2, pb_field(1, 0, expansion) if expansion else b""))
        return pb_field(1, 2, b"")
    put("csi_answers", b"\x02" + cap(service=1) + cap(expansion=1))  # the test plugin's
    put("csi_answers", b"\x02" + cap(service=2) + cap(service=3) + cap(expansion=2) + cap(expansion=0) + cap())


def node_key_seeds():
    """node_task_keys: a task's config block (go-cty msgpack) with the
    node's keys, each with the values test_node_task_config.cpp gives it,
    good and refused, and with exec's own keys beside them."""
    values = {
        "ulimit": [{"nofile": "65536:65536", "core": "0", "memlock": "unlimited"}, {"nofile": "20:10"},
                   {"open_files": "1"}, {"nofile": "lots"}, []],
        "oom_score_adj": [500, 0.0, -1, 1001, "x"],
        "io_weight": [100, 0],
        "device_read_bps": [{"/dev/vda": "10M", "/dev/vdb": "4096"}, {"sda": "1M"}, {"/dev/vda": "1X"},
                            {"/dev/vda": "0"}],
        "device_write_bps": [{"/dev/vda": "1gb"}],
        "device_read_iops": [{"/dev/vda": 100}],
        "device_write_iops": [{"/dev/vda": 5}, {"/dev/vda": 0}, {"/dev/vda": "many"}],
    }
    for key, vs in values.items():
        for v in vs:
            put("node_task_keys", msgpack({"command": "/bin/true", key: v}))
    put("node_task_keys", msgpack({"command": "/bin/true", "oom_score_adj": 10, "io_weight": 500,
                                   "ulimit": {"nofile": "1024:2048", "nproc": None},
                                   "device_read_iops": {"/dev/vda": 100, "/dev/vdb": None}}))


if __name__ == "__main__":
    json_seeds()
    cty_seeds()
    file_seeds()
    shim_seeds()
    report_seeds()
    exec_seeds()
    csi_seeds()
    node_key_seeds()
