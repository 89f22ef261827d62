package main

// Issue 47: jobs written for Nomad's exec and raw_exec drivers, only
// `driver` changed, each option's effect checked inside the task (or, for
// the cgroup, from the host): exec's cap_drop/cap_add (CapEff, CapBnd)
// and NoNewPrivs, pid_mode/ipc_mode (the task's namespaces against the
// host's), work_dir, a task without a user as nobody, a dynamic workload
// user ("nomad-<id>", what Nomad's task runner gives when the driver
// answers dynamic_workload_users) owning the files it writes, a denied
// UID refused; raw_exec's work_dir, denied_envvars (plugin and task) and
// NOMAD_UNIX_ADDR on the host's root, memory.max for Nomad's three memory
// shapes; what taskscope adds (ulimit, oom_score_adj, io_weight) and a
// device from Nomad's device plugins bound and allowed; and bad input
// refused naming the key, at SetConfig or StartTask where exec and
// raw_exec refuse it.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"taskscope/nomadpb/base"
	"taskscope/nomadpb/drivers"
)

// What a probe prints, one key=value per line, then probe-end. Config
// strings are HCL templates (Nomad interpolates "${...}"), so the script
// uses no shell "${" at all.
const probeScript = `echo "uid=$(id -u)"
echo "gid=$(id -g)"
echo "pid=$$"
echo "pidns=$(readlink /proc/self/ns/pid)"
echo "ipcns=$(readlink /proc/self/ns/ipc)"
echo "cwd=$(pwd)"
grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status | tr -d '\t' | tr ':' '='
echo "cgroup=$(grep -E '^0::|:memory:' /proc/self/cgroup | head -1 | cut -d: -f3)"
echo "unix_addr=$NOMAD_UNIX_ADDR"
echo "denied_plugin=[$DENIED_BY_PLUGIN]"
echo "denied_task=[$DENIED_BY_TASK]"
echo "kept=[$KEPT]"
[ -n "$WRITE" ] && echo mine >"$WRITE" && echo "wrote=$WRITE"
echo "oom=$(cat /proc/self/oom_score_adj)"
awk '/^Max open files/ { print "nofile=" $4 ":" $5 } /^Max processes/ { print "nproc=" $3 ":" $4 }' /proc/self/limits
[ -n "$DEVW" ] && echo "$DEVW_MARK" >"$DEVW" && echo "devw=ok"
echo probe-end
trap 'exit 0' TERM
while :; do sleep 0.1; done`

type probe struct {
	cfg    *drivers.TaskConfig
	values map[string]string
	text   string
}

func (p probe) get(k string) string { return p.values[k] }

// runProbe starts a task with the probe as its command, waits for its
// output, and leaves it running (the caller looks, then ends it).
func runProbe(s *session, a alloc, name string, block map[string]interface{}, edit func(*drivers.TaskConfig)) probe {
	ctx, cancel := rpcCtx()
	defer cancel()
	a.taskDir(name)
	out := readFifo(a.fifo(name, "stdout"))
	_ = readFifo(a.fifo(name, "stderr"))
	b := map[string]interface{}{"command": "/bin/sh", "args": []string{"-c", probeScript}}
	for k, v := range block {
		b[k] = v
	}
	cfg := taskConfig(s, a, name, "", b)
	if edit != nil {
		edit(cfg)
	}
	_, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: cfg})
	must(err, name)
	text, found := out.waitFor("probe-end", 60*time.Second)
	check(found, name, "no probe-end on its stdout: %q", text)
	p := probe{cfg: cfg, values: map[string]string{}, text: text}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			p.values[k] = v
		}
	}
	return p
}

func endProbe(s *session, p probe) {
	ctx, cancel := rpcCtx()
	defer cancel()
	_, err := s.driver.StopTask(ctx, &drivers.StopTaskRequest{TaskId: p.cfg.Id, Signal: "SIGTERM",
		Timeout: durationpb.New(stopGrace(5 * time.Second))})
	must(err, "end "+p.cfg.Name)
	_, err = s.driver.WaitTask(ctx, &drivers.WaitTaskRequest{TaskId: p.cfg.Id})
	must(err, "end "+p.cfg.Name)
	_, err = s.driver.DestroyTask(ctx, &drivers.DestroyTaskRequest{TaskId: p.cfg.Id})
	must(err, "end "+p.cfg.Name)
}

func hostNs(kind string) string {
	t, err := os.Readlink("/proc/self/ns/" + kind)
	must(err, "host namespaces")
	return t
}

// setPluginConfig sends the README's plugin block with `extra` laid over
// it, as the loader would (a validation SetConfig); returns the error.
func setPluginConfig(s *session, extra map[string]interface{}) error {
	ctx, cancel := rpcCtx()
	defer cancel()
	schema, err := s.driver.ConfigSchema(ctx, &base.ConfigSchemaRequest{})
	must(err, "config_schema")
	block := map[string]interface{}{}
	for k, v := range readme.pluginConfig {
		block[k] = v
	}
	for k, v := range extra {
		block[k] = v
	}
	cfg, _, err := encodeBlock(schema.Spec, block)
	if err != nil {
		return fmt.Errorf("Nomad's decoding: %v", err)
	}
	_, err = s.driver.SetConfig(ctx, &base.SetConfigRequest{MsgpackConfig: cfg, PluginApiVersion: driverAPIVersion})
	return err
}

// A job written for exec: its config block as exec takes it.
func execStyleJobs(s *session, a alloc) {
	if !system() {
		skip("exec_job", "the bus tier has no root of a task's own to give")
		skip("exec_dynamic_user", "the bus tier has no root of a task's own to give")
		return
	}
	// cap_drop all, cap_add two (within exec's default allow_caps), the
	// host's pid namespace, a private ipc one, work_dir, no user.
	p := runProbe(s, a, "execjob", map[string]interface{}{
		"cap_drop": []string{"all"}, "cap_add": []string{"chown", "kill"},
		"pid_mode": "host", "ipc_mode": "private", "work_dir": "/local"}, nil)
	const chownKill = "0000000000000021" // CAP_CHOWN (0) | CAP_KILL (5)
	check(p.get("uid") == "65534", "exec_job", "a task without a user runs as %s, not nobody: %q", p.get("uid"), p.text)
	check(p.get("CapEff") == chownKill && p.get("CapBnd") == chownKill, "exec_job", "CapEff %s CapBnd %s, want %s",
		p.get("CapEff"), p.get("CapBnd"), chownKill)
	check(p.get("NoNewPrivs") == "0", "exec_job", "NoNewPrivs %s (exec sets none)", p.get("NoNewPrivs"))
	check(p.get("pidns") == hostNs("pid") && p.get("pid") != "1", "exec_job", "pid_mode host: ns %s pid %s",
		p.get("pidns"), p.get("pid"))
	check(p.get("ipcns") != hostNs("ipc"), "exec_job", "ipc_mode private: the host's ipc namespace")
	check(p.get("cwd") == "/local", "exec_job", "cwd %q, work_dir /local", p.get("cwd"))
	endProbe(s, p)
	ok("exec_job", "exec's config block: uid 65534 (nobody, no user), CapEff=CapBnd=%s (cap_drop all, cap_add chown kill), NoNewPrivs 0, pid_mode host (pid %s in the host's %s), ipc_mode private, cwd /local (work_dir)",
		chownKill, p.get("pid"), p.get("pidns"))

	// exec's defaults: private pid and ipc namespaces, exec's default set.
	p = runProbe(s, a, "execdefault", nil, nil)
	check(p.get("pid") == "1" && p.get("pidns") != hostNs("pid") && p.get("ipcns") != hostNs("ipc"), "exec_job",
		"default pid/ipc modes: pid %s ns %s ipc %s", p.get("pid"), p.get("pidns"), p.get("ipcns"))
	check(p.get("CapEff") == "00000000a80405fb", "exec_job", "CapEff %s, exec's default set is 00000000a80405fb",
		p.get("CapEff"))
	check(p.get("cwd") == "/", "exec_job", "cwd %q without work_dir", p.get("cwd"))
	endProbe(s, p)
	ok("exec_job", "exec's defaults: pid 1 of its own pid namespace, its own ipc namespace, CapEff %s (exec's default set), cwd /",
		p.get("CapEff"))

	// A dynamic workload user: the UID/GID Nomad's pool gave, in no user
	// database, owning what it writes in its task dir.
	const ugid = 81234
	p = runProbe(s, a, "execdyn", map[string]interface{}{}, func(c *drivers.TaskConfig) {
		c.User = fmt.Sprintf("nomad-%d", ugid)
		c.Env["WRITE"] = "/local/owned"
	})
	check(p.get("uid") == strconv.Itoa(ugid) && p.get("gid") == strconv.Itoa(ugid), "exec_dynamic_user", "ids %s:%s",
		p.get("uid"), p.get("gid"))
	st, err := os.Stat(filepath.Join(a.dir, "execdyn", "local", "owned"))
	must(err, "exec_dynamic_user")
	sys := st.Sys().(*syscall.Stat_t)
	check(sys.Uid == ugid && sys.Gid == ugid, "exec_dynamic_user", "local/owned is %d:%d", sys.Uid, sys.Gid)
	endProbe(s, p)
	ok("exec_dynamic_user", "user nomad-%d (Nomad's dynamic workload user): runs as %d:%d, its local/owned is %d:%d on the host",
		ugid, ugid, ugid, sys.Uid, sys.Gid)
}

// A job written for raw_exec: on the host's root.
func rawExecStyleJobs(s *session, a alloc) {
	must(setPluginConfig(s, map[string]interface{}{"denied_envvars": []string{"DENIED_BY_*"}}), "raw_exec_job")
	p := runProbe(s, a, "rawjob", map[string]interface{}{"isolation": "none", "work_dir": "/tmp",
		"denied_envvars": []string{"*_BY_TASK"}}, func(c *drivers.TaskConfig) {
		c.Env["NOMAD_UNIX_ADDR"] = "unix:///secrets/api.sock"
		c.Env["DENIED_BY_PLUGIN"] = "x"
		c.Env["DENIED_BY_TASK"] = "y"
		c.Env["KEPT"] = "z"
	})
	must(setPluginConfig(s, nil), "raw_exec_job")
	wantAddr := "unix://" + filepath.Join(a.dir, "rawjob", "secrets", "api.sock")
	check(p.get("unix_addr") == wantAddr, "raw_exec_job", "NOMAD_UNIX_ADDR %q, want %q", p.get("unix_addr"), wantAddr)
	check(p.get("denied_plugin") == "[]" && p.get("denied_task") == "[]" && p.get("kept") == "[z]",
		"raw_exec_job", "denied_envvars: %q", p.text)
	check(p.get("cwd") == "/tmp", "raw_exec_job", "cwd %q, work_dir /tmp", p.get("cwd"))
	check(p.get("uid") == "0", "raw_exec_job", "uid %s: raw_exec runs a task without a user as the agent (root)",
		p.get("uid"))
	endProbe(s, p)
	ok("raw_exec_job", "raw_exec's config block: NOMAD_UNIX_ADDR=%s, denied_envvars (plugin DENIED_BY_*, task *_BY_TASK) kept out, KEPT through, cwd /tmp (work_dir), uid 0",
		p.get("unix_addr"))

	if !system() {
		skip("memory_shapes", "the bus tier's stand-in systemd keeps no cgroups")
		return
	}
	// Nomad's three memory shapes (drivers/shared/executor/utils.go memoryLimits).
	shapes := []struct {
		name             string
		memory, max      int64
		wantMax, wantLow string // v2 memory.max, memory.low
	}{
		{"memnolimit", 64, -1, "max", strconv.Itoa(64 << 20)},
		{"memboth", 64, 128, strconv.Itoa(128 << 20), strconv.Itoa(64 << 20)},
		{"memhard", 64, 0, strconv.Itoa(64 << 20), "0"},
	}
	var seen []string
	for _, sh := range shapes {
		p := runProbe(s, a, sh.name, map[string]interface{}{"isolation": "none"}, func(c *drivers.TaskConfig) {
			c.Resources.AllocatedResources.Memory = &drivers.AllocatedMemoryResources{MemoryMb: sh.memory,
				MemoryMaxMb: sh.max}
		})
		cg := p.get("cgroup")
		check(cg != "", "memory_shapes", "no cgroup in %q", p.text)
		var max, low string
		if *flagCgroup == "v1" {
			max = readTrim(filepath.Join("/sys/fs/cgroup/memory", cg, "memory.limit_in_bytes"))
			if max == "9223372036854771712" {
				max = "max"
			}
			low = "(v1: no memory.low)"
			check(max == sh.wantMax, "memory_shapes", "%s: memory.limit_in_bytes %s, want %s", sh.name, max, sh.wantMax)
		} else {
			max = readTrim(filepath.Join("/sys/fs/cgroup", cg, "memory.max"))
			low = readTrim(filepath.Join("/sys/fs/cgroup", cg, "memory.low"))
			check(max == sh.wantMax && low == sh.wantLow, "memory_shapes", "%s: memory.max %s memory.low %s, want %s %s",
				sh.name, max, low, sh.wantMax, sh.wantLow)
		}
		seen = append(seen, fmt.Sprintf("memory=%d memory_max=%d -> max %s low %s", sh.memory, sh.max, max, low))
		endProbe(s, p)
	}
	ok("memory_shapes", "%s", strings.Join(seen, "; "))
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	must(err, "read "+path)
	return strings.TrimSpace(string(b))
}

// Users a plugin block denies (exec's and raw_exec's denied_host_uids):
// refused at StartTask, before anything is made, naming the ID.
func deniedUsers(s *session, a alloc) {
	ctx, cancel := rpcCtx()
	defer cancel()
	must(setPluginConfig(s, map[string]interface{}{"denied_host_uids": "0,81000-81999"}), "denied_uid")
	defer func() { must(setPluginConfig(s, nil), "denied_uid") }()
	var notes []string
	try := func(what, name string, block map[string]interface{}, user string) {
		a.taskDir(name)
		_ = readFifo(a.fifo(name, "stdout"))
		_ = readFifo(a.fifo(name, "stderr"))
		cfg := taskConfig(s, a, name, "", block)
		cfg.User = user
		_, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: cfg})
		check(err != nil && strings.Contains(err.Error(), "DeniedUser"), "denied_uid", "%s: %v", what, err)
		_, _, ierr := inspect(s, cfg.Id)
		check(grpcCode(ierr) != 0, "denied_uid", "%s: the task is known after the refusal", what)
		notes = append(notes, refused("denied_uid", what, err, s))
	}
	iso := "none"
	if system() {
		iso = "chroot"
	}
	try("user root with denied_host_uids 0,81000-81999", "denyroot",
		map[string]interface{}{"command": "/bin/true", "isolation": iso}, "root")
	if system() {
		try("dynamic user nomad-81500 in the denied range", "denydyn",
			map[string]interface{}{"command": "/bin/true"}, "nomad-81500")
	}
	for _, n := range notes {
		ok("denied_uid", "%s", n)
	}
}

// Bad input for the new keys, refused naming the key where exec and
// raw_exec refuse it (SetConfig for the plugin block, StartTask for the
// task's), the plugin serving on.
func badExecInput(s *session, a alloc) {
	ctx, cancel := rpcCtx()
	defer cancel()
	var notes []string
	for _, c := range []struct {
		what, key string
		extra     map[string]interface{}
	}{
		{"plugin default_pid_mode = \"bogus\"", "default_pid_mode", map[string]interface{}{"default_pid_mode": "bogus"}},
		{"plugin allow_caps with an unknown capability", "allow_caps", map[string]interface{}{"allow_caps": []string{"net_bogus"}}},
		{"plugin denied_host_uids \"20-10\"", "denied_host_uids", map[string]interface{}{"denied_host_uids": "20-10"}},
	} {
		err := setPluginConfig(s, c.extra)
		check(err != nil && strings.Contains(err.Error(), c.key), "bad_exec_input", "%s: %v", c.what, err)
		notes = append(notes, refused("bad_exec_input", "SetConfig "+c.what, err, s))
	}
	err := setPluginConfig(s, map[string]interface{}{"denied_host_uid": "0"})
	check(err != nil, "bad_exec_input", "a misspelt plugin key decoded")
	notes = append(notes, "SetConfig misspelt denied_host_uid: refused by Nomad's decoding of the schema: "+firstLine(err.Error()))
	must(setPluginConfig(s, nil), "bad_exec_input")

	a.taskDir("badexec")
	_ = readFifo(a.fifo("badexec", "stdout"))
	_ = readFifo(a.fifo("badexec", "stderr"))
	for _, c := range []struct {
		what, key string
		block     map[string]interface{}
	}{
		{"pid_mode = \"bogus\"", "config.pid_mode", map[string]interface{}{"pid_mode": "bogus"}},
		{"cap_add with an unknown capability", "config.cap_add", map[string]interface{}{"cap_add": []string{"net_bogus"}}},
		{"relative work_dir", "config.work_dir", map[string]interface{}{"work_dir": "local"}},
		{"cgroup_v2_override (raw_exec)", "config.cgroup_v2_override", map[string]interface{}{"isolation": "none",
			"cgroup_v2_override": "custom.slice"}},
		{"cgroup_v1_override (raw_exec)", "config.cgroup_v1_override", map[string]interface{}{"isolation": "none",
			"cgroup_v1_override": []map[string]string{{"pids": "custom"}}}},
	} {
		b := map[string]interface{}{"command": "/bin/true"}
		for k, v := range c.block {
			b[k] = v
		}
		cfg := taskConfig(s, a, "badexec", "", b)
		_, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: cfg})
		check(err != nil && strings.Contains(err.Error(), c.key), "bad_exec_input", "%s: %v", c.what, err)
		notes = append(notes, refused("bad_exec_input", "StartTask "+c.what, err, s))
	}
	_, _, err = encodeBlock(s.schema, map[string]interface{}{"command": "/bin/true", "pid_mod": "host"})
	check(err != nil, "bad_exec_input", "a misspelt task key decoded")
	notes = append(notes, "config with misspelt pid_mod: refused by Nomad's decoding of the schema: "+firstLine(err.Error()))
	for _, n := range notes {
		ok("bad_exec_input", "%s", n)
	}
}

// The README's examples of jobs moved from exec and raw_exec decode
// against the schema as Nomad decodes them.
func readmeExamples(s *session) {
	var names []string
	for name, block := range readme.examples {
		_, _, err := encodeBlock(s.schema, block)
		must(err, "readme_examples")
		names = append(names, name)
	}
	sort.Strings(names)
	check(len(names) >= 2, "readme_examples", "the README has %d taskscope jobs, want the example and an exec job moved", len(names))
	ok("readme_examples", "the README's taskscope jobs %v decode against the task schema", names)
}

// What taskscope gives beyond exec's keys (ulimit, oom_score_adj,
// io_weight), and a device as Nomad's device plugins hand one over
// (TaskConfig.Devices): a character node made for the test with
// /dev/kmsg's numbers (1:11, in no private /dev), written to from the
// task (the line shows in the kernel log) and allowed in its scope.
func nodeOptionsJob(s *session, a alloc) {
	if !system() {
		skip("node_options", "the bus tier has no systemd of its own to show a scope")
		return
	}
	const dev = "/dev/taskscope-gotest0"
	_ = os.Remove(dev)
	must(syscall.Mknod(dev, syscall.S_IFCHR|0600, 1<<8|11), "node_options")
	defer os.Remove(dev)
	mark := fmt.Sprintf("taskscope-goplugin-device-%d", time.Now().UnixNano())
	p := runProbe(s, a, "nodeopts", map[string]interface{}{
		"ulimit":        map[string]string{"nofile": "4096:8192", "nproc": "2000"},
		"oom_score_adj": 250, "io_weight": 300, "pid_mode": "host"}, func(c *drivers.TaskConfig) {
		c.User = "root"
		c.Devices = []*drivers.Device{{TaskPath: "/dev/gpu0", HostPath: dev, CgroupPermissions: "rw"}}
		c.Env["DEVW"] = "/dev/gpu0"
		c.Env["DEVW_MARK"] = mark
	})
	check(p.get("nofile") == "4096:8192" && p.get("nproc") == "2000:2000", "node_options",
		"ulimit nofile %s nproc %s: %q", p.get("nofile"), p.get("nproc"), p.text)
	check(p.get("oom") == "250", "node_options", "oom_score_adj %s", p.get("oom"))
	check(p.get("devw") == "ok", "node_options", "the device was not writable: %q", p.text)
	kmsg, err := exec.Command("dmesg").Output()
	must(err, "node_options")
	check(strings.Contains(string(kmsg), mark), "node_options", "the device write is not in the kernel log")
	// Its own root has its own cgroup namespace ("/" inside): the scope
	// is read from the host's /proc (pid_mode host: the pid is the host's).
	unit := ""
	for _, line := range strings.Split(readTrim("/proc/"+p.get("pid")+"/cgroup"), "\n") {
		if path := line[strings.LastIndex(line, ":")+1:]; strings.HasSuffix(path, ".scope") {
			unit = filepath.Base(path)
		}
	}
	check(unit != "", "node_options", "no scope in /proc/%s/cgroup", p.get("pid"))
	show, err := exec.Command("systemctl", "show", "-p", "DeviceAllow", "-p", "IOWeight", unit).Output()
	must(err, "node_options")
	check(strings.Contains(string(show), dev+" rw") && strings.Contains(string(show), "=300"), "node_options",
		"systemctl show %s: %q", unit, show)
	endProbe(s, p)
	ok("node_options", "ulimit nofile %s nproc %s, oom_score_adj %s, device %s at /dev/gpu0 written (kernel log), %s",
		p.get("nofile"), p.get("nproc"), p.get("oom"), dev, strings.Join(strings.Fields(string(show)), " "))
}

// An OOM kill as Nomad reads it (issue 48): a task whose memory and
// memory_max are 32 MB and that asks for a 256 MB buffer at once is killed
// by the kernel's memory cgroup; WaitTask's exit result says oom_killed.
func oomKilledJob(s *session, a alloc) {
	if !system() {
		skip("oom_killed", "the bus tier's stand-in systemd applies no memory limit")
		return
	}
	ctx, cancel := rpcCtx()
	defer cancel()
	var seen []string
	for i, cmd := range []string{"exec dd if=/dev/zero of=/dev/null bs=256M count=1", "sleep 1; exec dd if=/dev/zero of=/dev/null bs=256M count=1"} {
		name := fmt.Sprintf("oom%d", i)
		a.taskDir(name)
		_ = readFifo(a.fifo(name, "stdout"))
		_ = readFifo(a.fifo(name, "stderr"))
		cfg := taskConfig(s, a, name, "", map[string]interface{}{"command": "/bin/sh", "args": []string{"-c", cmd},
			"isolation": "none"})
		cfg.User = "root"
		cfg.Resources.AllocatedResources.Memory = &drivers.AllocatedMemoryResources{MemoryMb: 32, MemoryMaxMb: 32}
		_, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: cfg})
		must(err, "oom_killed")
		w, err := s.driver.WaitTask(ctx, &drivers.WaitTaskRequest{TaskId: cfg.Id})
		must(err, "oom_killed")
		check(w.Result.GetOomKilled(), "oom_killed", "%q: exit %d signal %d oom_killed false", cmd,
			w.Result.GetExitCode(), w.Result.GetSignal())
		_, err = s.driver.DestroyTask(ctx, &drivers.DestroyTaskRequest{TaskId: cfg.Id})
		must(err, "oom_killed")
		seen = append(seen, fmt.Sprintf("%q: exit %d signal %d oom_killed %v", cmd, w.Result.GetExitCode(),
			w.Result.GetSignal(), w.Result.GetOomKilled()))
	}
	ok("oom_killed", "memory = memory_max = 32 MB, a 256 MB buffer: %s", strings.Join(seen, "; "))
}

// log_journal from a job (issue 59): Nomad gives the task its log fifos,
// which logmon reads; taskscope's streamer stands between, so logmon still
// gets every line and journald gets them too, placed under the task's
// scope by journald itself, at PRIORITY 6 (stdout) and 3 (stderr), with
// the task's uid (a dynamic workload user's).
func journalJob(s *session, a alloc) {
	if !system() {
		skip("log_journal", "the bus tier has no journald")
		return
	}
	ctx, cancel := rpcCtx()
	defer cancel()
	const name = "jcopy"
	a.taskDir(name)
	out := readFifo(a.fifo(name, "stdout"))
	errs := readFifo(a.fifo(name, "stderr"))
	cfg := taskConfig(s, a, name, "", map[string]interface{}{"command": "/bin/sh",
		"args": []string{"-c", "echo jcopy-out-$NOMAD_TASK_NAME; echo jcopy-err >&2"}, "log_journal": true})
	// As a dynamic workload user (in no user database): journald reads
	// the uid from the task's pid like everything else.
	const uid = 81236
	cfg.User = fmt.Sprintf("nomad-%d", uid)
	_, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: cfg})
	must(err, "log_journal")
	w, err := s.driver.WaitTask(ctx, &drivers.WaitTaskRequest{TaskId: cfg.Id})
	must(err, "log_journal")
	check(w.Result.GetExitCode() == 0, "log_journal", "exit %d", w.Result.GetExitCode())
	text, found := out.waitFor("jcopy-out-jcopy\n", 30*time.Second)
	check(found, "log_journal", "logmon's stdout fifo: %q", text)
	etext, found := errs.waitFor("jcopy-err\n", 30*time.Second)
	check(found, "log_journal", "logmon's stderr fifo: %q", etext)
	unit := a.id + "-" + name + ".scope"
	var seen []string
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_ = exec.Command("journalctl", "--sync").Run()
		b, err := exec.Command("journalctl", "-o", "json", "--no-pager", "SYSLOG_IDENTIFIER="+name,
			"--output-fields=MESSAGE,PRIORITY,_SYSTEMD_UNIT,_UID").Output()
		must(err, "log_journal")
		seen = nil
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e map[string]interface{}
			if json.Unmarshal([]byte(line), &e) == nil && e["_SYSTEMD_UNIT"] == unit {
				seen = append(seen, fmt.Sprintf("%v %v %v", e["MESSAGE"], e["PRIORITY"], e["_UID"]))
			}
		}
		sort.Strings(seen)
		if len(seen) >= 2 || time.Now().After(end) {
			break
		}
	}
	want := fmt.Sprintf("jcopy-err 3 %d,jcopy-out-jcopy 6 %d", uid, uid)
	check(strings.Join(seen, ",") == want, "log_journal",
		"journalctl entries of %s: %q", unit, seen)
	_, err = s.driver.DestroyTask(ctx, &drivers.DestroyTaskRequest{TaskId: cfg.Id})
	must(err, "log_journal")
	ok("log_journal", "logmon's fifos got the lines, and journalctl -u %s: %s", unit, strings.Join(seen, ", "))
}

// execJobs runs all of the above.
func execJobs(s *session, a alloc) {
	oomKilledJob(s, a)
	journalJob(s, a)
	readmeExamples(s)
	execStyleJobs(s, a)
	nodeOptionsJob(s, a)
	rawExecStyleJobs(s, a)
	deniedUsers(s, a)
	badExecInput(s, a)
}
