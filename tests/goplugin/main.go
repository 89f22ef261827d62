// Command nomad-goplugin-test drives nomad-driver-taskscope with
// HashiCorp's own go-plugin client, configured exactly as Nomad's client
// configures it (nomad.go), through a task's whole life and the plugin's:
// launched by one agent, which dies (SIGKILL) while its task runs; a
// second agent reattaches to the same plugin process (go-plugin's
// ReattachConfig, as Nomad stores it), which ignores SIGINT and no longer
// has anyone reading its stdout and stderr; the plugin is SIGKILLed and a
// new one recovers the task from its handle; bad input is refused while
// the plugin serves on; the task is stopped, waited for and destroyed; the
// plugin is shut down as Nomad's client shuts it down. One line per step.
//
// Usage: nomad-goplugin-test -plugin PATH -work DIR -readme README.md [-tier bus|system] [-cgroup v1|v2]
// The bus tier (a stand-in systemd, no streamer) leaves out stats, exec
// and what needs cgroups; the system tier runs everything against the
// installed package.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"taskscope/nomadpb/base"
	"taskscope/nomadpb/drivers"
	"taskscope/nomadpb/hclspec"
	"taskscope/nomadpb/structs"
)

var (
	flagPlugin = flag.String("plugin", "", "the driver plugin binary")
	flagWork   = flag.String("work", "", "a directory for the allocation's directories")
	flagTier   = flag.String("tier", "system", "bus (stand-in systemd, no streamer) or system")
	flagCgroup = flag.String("cgroup", "", "v1 or v2: what the fingerprint must report (system tier)")
	flagAgent1 = flag.Bool("agent1", false, "internal: play the first agent (started by the test itself)")
	flagAlloc  = flag.String("alloc", "", "internal: the allocation (with -agent1)")
	flagReadme = flag.String("readme", "", "the README whose Nomad client config and job are loaded and run")
)

const mhzPerCore = 2000 // the topology this test's agent reports: every core 2000 MHz

var (
	readme  *readmeConfig
	who     = "agent2" // which agent prints a line
	plugins []int      // plugin pids to kill if a step fails
	logs    = &syncBuffer{}
)

func ok(step, format string, args ...interface{}) {
	fmt.Printf("ok   %-8s %-22s %s\n", who, step, fmt.Sprintf(format, args...))
}

func skip(step, why string) { fmt.Printf("skip %-8s %-22s %s\n", who, step, why) }

func fail(step string, format string, args ...interface{}) {
	fmt.Printf("FAIL %-8s %-22s %s\n", who, step, fmt.Sprintf(format, args...))
	for _, pid := range plugins {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if text := logs.String(); text != "" && !*flagAgent1 {
		fmt.Printf("--- go-plugin's log (the plugin's stderr as the agent logged it):\n%s", text)
	}
	os.Exit(1)
}

func check(cond bool, step, format string, args ...interface{}) {
	if !cond {
		fail(step, format, args...)
	}
}

func must(err error, step string) {
	if err != nil {
		fail(step, "%v", err)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The agent's logger: go-plugin logs the plugin's stderr through it.
func agentLogger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: who, Level: hclog.Debug, Output: logs})
}

func rpcCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 90*time.Second)
}

func system() bool { return *flagTier == "system" }

// The bus tier's stand-in systemd keeps no cgroups: the manager finds no
// process of a task to signal, and a stop ends in the kill after the
// grace period (what the tier checks of a stop).
func signalsReach() bool { return system() }

// A stop's grace: short where the signal cannot arrive anyway.
func stopGrace(d time.Duration) time.Duration {
	if signalsReach() {
		return d
	}
	return time.Second
}

// How a stopped task ended: its TERM trap's exit code, or, where signals
// do not reach it, the kill.
func stoppedAs(w *drivers.WaitTaskResponse, code int32) bool {
	r := w.Result
	if r.GetExitCode() == code && r.GetSignal() == 0 {
		return true
	}
	return !signalsReach() && (r.GetSignal() == int32(syscall.SIGKILL) || r.GetExitCode() == 128+int32(syscall.SIGKILL))
}

// ---- the allocation, as Nomad's client lays it out ----

type alloc struct {
	id, dir string
}

// client/allocdir: <alloc>/alloc/{logs,tmp,data} shared, and per task
// <alloc>/<task>/{local,tmp,secrets,private} (TaskDir.Build with IMAGE
// isolation: no chroot_env, no alloc link; secrets and private are tmpfs
// mounts under a real client, plain directories here).
func newAlloc(work, id string) alloc {
	a := alloc{id: id, dir: filepath.Join(work, id)}
	for _, d := range []string{"alloc/logs", "alloc/tmp", "alloc/data"} {
		must(os.MkdirAll(filepath.Join(a.dir, d), 0o777), "alloc_dir")
	}
	return a
}

func (a alloc) taskDir(task string) string {
	// Modes as Nomad sets them whatever the umask (allocdir TaskDir.Build:
	// local 0777, tmp 1777, secrets and private 0777), so that a task's
	// own user (nobody, a dynamic workload user) can write there.
	for d, mode := range map[string]os.FileMode{"local": 0o777, "tmp": 0o777 | os.ModeSticky, "secrets": 0o777,
		"private": 0o777} {
		p := filepath.Join(a.dir, task, d)
		must(os.MkdirAll(p, 0o777), "task_dir")
		must(os.Chmod(p, mode), "task_dir")
	}
	return filepath.Join(a.dir, task)
}

// client/allocrunner/taskrunner/logmon_hook.go: <alloc>/alloc/logs/.<task>.stdout.fifo.
func (a alloc) fifo(task, stream string) string {
	return filepath.Join(a.dir, "alloc", "logs", "."+task+"."+stream+".fifo")
}

// fifoReader plays Nomad's logmon: it holds a fifo's read end from before
// the task starts and collects what comes.
type fifoReader struct {
	mu   sync.Mutex
	text string
}

func readFifo(path string) *fifoReader {
	must(syscall.Mkfifo(path, 0o600), "fifos")
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	must(err, "fifos")
	r := &fifoReader{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				r.mu.Lock()
				r.text += string(buf[:n])
				r.mu.Unlock()
			}
			if err != nil { // no writer (yet, or between writers)
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	return r
}

func (r *fifoReader) waitFor(want string, d time.Duration) (string, bool) {
	end := time.Now().Add(d)
	for {
		r.mu.Lock()
		text := r.text
		r.mu.Unlock()
		if strings.Contains(text, want) {
			return text, true
		}
		if time.Now().After(end) {
			return text, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ---- the task configs ----

// The web task: output on both fifos, USR1 answered on stdout, USR2 keeps
// a CPU busy for 3 s. It is pid 1 of its pid namespace when isolated,
// which the kernel spares signals it has no handler for: hence the TERM
// trap, as under Nomad's exec driver.
const webScript = `trap 'echo got-usr1' USR1
trap 'exit 143' TERM
trap 'end=$((SECONDS+3)); while ((SECONDS < end)); do :; done; echo busy-done' USR2
echo hello-stdout $GREETING
echo hello-stderr >&2
while :; do sleep 0.1; done`

func taskBlock(command string, args []string) map[string]interface{} {
	b := map[string]interface{}{"command": command, "args": args}
	if !system() {
		b["isolation"] = "none" // the bus tier has no root of a task's own to give
	}
	return b
}

type session struct {
	client *plugin.Client
	rpc    plugin.ClientProtocol
	driver *driverClient
	pid    int
	schema *hclspec.Spec // the task config schema
}

func (s *session) conn() *grpc.ClientConn { return s.rpc.(*plugin.GRPCClient).Conn }

func taskConfig(s *session, a alloc, task, secret string, block map[string]interface{}) *drivers.TaskConfig {
	cfg, _, err := encodeBlock(s.schema, block)
	must(err, "task_config")
	a.taskDir(task)
	shares := int64(100)
	return &drivers.TaskConfig{
		Id:                  a.id + "/" + task + "/5e1f0c2a",
		Name:                task,
		AllocId:             a.id,
		JobName:             "goplugin",
		JobId:               "goplugin",
		TaskGroupName:       "group",
		Namespace:           "default",
		NodeName:            "node1",
		NodeId:              "9b3e0f4c-0000-4000-8000-000000000001",
		AllocDir:            a.dir,
		StdoutPath:          a.fifo(task, "stdout"),
		StderrPath:          a.fifo(task, "stderr"),
		MsgpackDriverConfig: cfg,
		Env: map[string]string{"GREETING": "hi", "NOMAD_TASK_NAME": task, "NOMAD_ALLOC_ID": a.id,
			"NOMAD_ALLOC_DIR": "/alloc", "NOMAD_TASK_DIR": "/local", "NOMAD_SECRETS_DIR": "/secrets",
			"VAULT_TOKEN": secret},
		Resources: &drivers.Resources{
			AllocatedResources: &drivers.AllocatedTaskResources{
				Cpu:    &drivers.AllocatedCpuResources{CpuShares: shares},
				Memory: &drivers.AllocatedMemoryResources{MemoryMb: 64},
			},
			LinuxResources: &drivers.LinuxResources{CpuShares: shares, MemoryLimitBytes: 64 << 20,
				PercentTicks: float64(shares) / float64(mhzPerCore*runtime.NumCPU())},
		},
	}
}

// ---- steps shared by both agents ----

func launch(step string) *session {
	t0 := time.Now()
	c := plugin.NewClient(nomadLaunchConfig(*flagPlugin, agentLogger()))
	rpc, err := c.Client()
	must(err, step)
	rc := c.ReattachConfig()
	check(rc != nil && rc.Pid > 0, step, "no reattach config")
	plugins = append(plugins, rc.Pid)
	raw, err := rpc.Dispense(pluginTypeDriver)
	must(err, step)
	s := &session{client: c, rpc: rpc, driver: raw.(*driverClient), pid: rc.Pid}
	ok(step, "go-plugin v1.0.1 client, Nomad's ClientConfig: core protocol %d, app protocol %d negotiated, %s on %s %s, plugin pid %d (%.0f ms)",
		plugin.CoreProtocolVersion, c.NegotiatedVersion(), c.Protocol(), rc.Addr.Network(), rc.Addr.String(), rc.Pid,
		float64(time.Since(t0).Microseconds())/1000)
	must(rpc.Ping(), "health")
	ok("health", "grpc.health.v1 Check(\"plugin\") SERVING")
	return s
}

// The loader's fingerprint of the binary and config validation, then the
// task runner's dispense (helper/pluginutils/loader/init.go,
// loader.go Dispense): PluginInfo, ConfigSchema, SetConfig, Init.
func configure(s *session, label string) {
	ctx, cancel := rpcCtx()
	defer cancel()
	info, err := s.driver.PluginInfo(ctx, &base.PluginInfoRequest{})
	must(err, "plugin_info")
	apiOK := false
	for _, v := range info.PluginApiVersions {
		apiOK = apiOK || strings.TrimPrefix(v, "v") == strings.TrimPrefix(driverAPIVersion, "v")
	}
	check(info.Type == base.PluginType_DRIVER && info.Name == "taskscope" && apiOK && info.PluginVersion != "",
		"plugin_info", "%v", info)
	ok("plugin_info"+label, "type %s, name %q, plugin_api_versions %v, plugin_version %s",
		info.Type, info.Name, info.PluginApiVersions, info.PluginVersion)

	schema, err := s.driver.ConfigSchema(ctx, &base.ConfigSchemaRequest{})
	must(err, "config_schema")
	cfg, val, err := encodeBlock(schema.Spec, readme.pluginConfig)
	must(err, "config_schema")
	ok("config_schema"+label, "the README's plugin block's config decodes against it: %s", ctyString(val))

	// Validation first (no agent config), then the dispense with the
	// node's topology (plugins/base/base.go AgentConfig toProto).
	_, err = s.driver.SetConfig(ctx, &base.SetConfigRequest{MsgpackConfig: cfg, PluginApiVersion: driverAPIVersion})
	must(err, "set_config")
	cores := make([]*base.ClientTopologyCore, runtime.NumCPU())
	for i := range cores {
		cores[i] = &base.ClientTopologyCore{CoreId: uint32(i), BaseSpeed: mhzPerCore, MaxSpeed: mhzPerCore + 1000}
	}
	_, err = s.driver.SetConfig(ctx, &base.SetConfigRequest{MsgpackConfig: cfg, PluginApiVersion: driverAPIVersion,
		NomadConfig: &base.NomadConfig{Driver: &base.NomadDriverConfig{ClientMinPort: 14000, ClientMaxPort: 14512,
			Topology: &base.ClientTopology{NodeIds: []uint32{0}, Cores: cores}}}})
	must(err, "set_config")
	ok("set_config"+label, "cty msgpack (%d bytes), api %s, topology %d cores x %d MHz", len(cfg), driverAPIVersion,
		len(cores), mhzPerCore)

	_, err = s.driver.Init(ctx, &drivers.InitRequest{})
	must(err, "init")
	ok("init"+label, "Init answered")

	ts, err := s.driver.TaskConfigSchema(ctx, &drivers.TaskConfigSchemaRequest{})
	must(err, "task_config_schema")
	s.schema = ts.Spec
	_, v, err := encodeBlock(s.schema, map[string]interface{}{"command": "/bin/sh", "args": []string{"-c", "true"},
		"isolation": "chroot"})
	must(err, "task_config_schema")
	_, _, err = encodeBlock(s.schema, map[string]interface{}{"args": []string{"x"}})
	check(err != nil, "task_config_schema", "a block without command decoded")
	ok("task_config_schema"+label, "a job's config block decodes: %s; one without command is refused by Nomad's decoding: %s",
		ctyString(v), firstLine(err.Error()))
}

func ctyString(v cty.Value) string {
	var parts []string
	for k, x := range v.AsValueMap() {
		switch {
		case x.IsNull():
			parts = append(parts, k+"=null")
		case x.Type() == cty.String:
			parts = append(parts, fmt.Sprintf("%s=%q", k, x.AsString()))
		case x.Type() == cty.Bool:
			parts = append(parts, fmt.Sprintf("%s=%v", k, x.True()))
		default:
			parts = append(parts, fmt.Sprintf("%s=%s", k, x.Type().FriendlyName()))
		}
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, " ") + "}"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func capabilities(s *session) {
	ctx, cancel := rpcCtx()
	defer cancel()
	r, err := s.driver.Capabilities(ctx, &drivers.CapabilitiesRequest{})
	must(err, "capabilities")
	c := r.Capabilities
	check(c != nil && c.SendSignals && c.Exec && c.FsIsolation == drivers.DriverCapabilities_IMAGE &&
		c.MustCreateNetwork && c.MountConfigs == drivers.DriverCapabilities_ANY_MOUNTS && !c.DisableLogCollection &&
		c.DynamicWorkloadUsers, "capabilities", "%v", c)
	var modes []string
	for _, m := range c.NetworkIsolationModes {
		modes = append(modes, m.String())
	}
	// 0 is both UNKNOWN_MOUNTS and ANY_MOUNTS; Nomad reads it as any
	// (plugins/drivers/driver.go MountConfigSupportAll).
	ok("capabilities", "send_signals=%v exec=%v fs_isolation=%s network_isolation_modes=%v must_create_network=%v mount_configs=ANY_MOUNTS disable_log_collection=%v dynamic_workload_users=%v",
		c.SendSignals, c.Exec, c.FsIsolation, modes, c.MustCreateNetwork, c.DisableLogCollection,
		c.DynamicWorkloadUsers)
}

func fingerprint(s *session, step string) {
	ctx, cancel := rpcCtx()
	defer cancel()
	st, err := s.driver.Fingerprint(ctx, &drivers.FingerprintRequest{})
	must(err, step)
	f, err := st.Recv()
	must(err, step)
	check(f.Health == drivers.FingerprintResponse_HEALTHY && f.Err == "", step, "%v", f)
	attrs := map[string]string{}
	var keys []string
	for k, v := range f.Attributes {
		switch x := v.Value.(type) {
		case *structs.Attribute_StringVal:
			attrs[k] = x.StringVal
		case *structs.Attribute_BoolVal:
			attrs[k] = fmt.Sprint(x.BoolVal)
		case *structs.Attribute_IntVal:
			attrs[k] = fmt.Sprint(x.IntVal)
		case *structs.Attribute_FloatVal:
			attrs[k] = fmt.Sprint(x.FloatVal)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	check(attrs["driver.taskscope"] == "true" && attrs["driver.taskscope.version"] != "", step, "%v", attrs)
	if *flagCgroup != "" {
		check(attrs["unique.cgroups.version"] == *flagCgroup, step, "cgroups %q, want %q", attrs["unique.cgroups.version"],
			*flagCgroup)
	}
	var shown []string
	for _, k := range keys {
		shown = append(shown, k+"="+attrs[k])
	}
	ok(step, "%s (%q): %s", f.Health, f.HealthDescription, strings.Join(shown, " "))
}

func inspect(s *session, id string) (*drivers.InspectTaskResponse, *taskStatus, error) {
	ctx, cancel := rpcCtx()
	defer cancel()
	r, err := s.driver.InspectTask(ctx, &drivers.InspectTaskRequest{TaskId: id})
	if err != nil {
		return nil, nil, err
	}
	ts, err := taskStatusFromProto(r.Task)
	return r, ts, err
}

func inspectRunning(s *session, id, step string) string {
	r, ts, err := inspect(s, id)
	must(err, step)
	check(ts.state == drivers.TaskState_RUNNING && !ts.startedZero && ts.doneZero, step, "%v", r.Task)
	return fmt.Sprintf("RUNNING since %s, completed_at the zero time (IsZero), driver attributes %v", ts.startedAt,
		r.Driver.GetAttributes())
}

// ---- agent 1 ----

func agent1() {
	who = "agent1"
	a := alloc{id: *flagAlloc, dir: filepath.Join(*flagWork, *flagAlloc)}
	s := launch("handshake")
	msg, err := checkStdio(s.conn())
	must(err, "goplugin_stdio")
	ok("goplugin_stdio", "%s (what go-plugin v1.8's client opens)", msg)
	msg, err = checkBroker(s.conn())
	must(err, "goplugin_broker")
	ok("goplugin_broker", "%s", msg)
	configure(s, "")
	capabilities(s)
	fingerprint(s, "fingerprint")

	ctx, cancel := rpcCtx()
	defer cancel()
	web := taskConfig(s, a, "web", os.Getenv("TEST_SECRET"), taskBlock("/bin/bash", []string{"-c", webScript}))
	t0 := time.Now()
	r, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: web})
	must(err, "start_task")
	check(r.Result == drivers.StartTaskResponse_SUCCESS && r.Handle != nil && len(r.Handle.DriverState) > 0 &&
		r.Handle.State == drivers.TaskState_RUNNING, "start_task", "%v", r)
	iso := "own root (isolation chroot, the README's default)"
	if !system() {
		iso = "host root (isolation none)"
	}
	ok("start_task", "task %s in %.0f ms: %s, stdout/stderr to Nomad's fifos, handle version %d, driver_state %s",
		web.Id, float64(time.Since(t0).Microseconds())/1000, iso, r.Handle.Version, r.Handle.DriverState)
	ok("inspect_task", "%s", inspectRunning(s, web.Id, "inspect_task"))

	handle, err := proto.Marshal(r.Handle)
	must(err, "handover")
	h := handover{Reattach: storeReattach(s.client.ReattachConfig()), Handle: handle, TaskID: web.Id}
	out := os.NewFile(3, "handover")
	_, err = out.Write(append(h.encode(), '\n'))
	must(err, "handover")
	ok("handover", "reattach config %+v and the task handle kept, as Nomad's client keeps them in its state", h.Reattach)
	select {} // until agent 2 kills this process, as a crash or SIGKILL ends an agent
}

// ---- agent 2 ----

func startAgent1(a alloc, secret string) (*exec.Cmd, handover) {
	r, w, err := os.Pipe()
	must(err, "agent1")
	cmd := exec.Command(os.Args[0], "-agent1", "-alloc", a.id, "-plugin", *flagPlugin, "-work", *flagWork,
		"-tier", *flagTier, "-cgroup", *flagCgroup, "-readme", *flagReadme)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = append(os.Environ(), "TEST_SECRET="+secret)
	must(cmd.Start(), "agent1")
	w.Close()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		lines <- line
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var h handover
	select {
	case line := <-lines:
		must(json.Unmarshal([]byte(line), &h), "agent1")
	case err := <-done:
		fail("agent1", "agent 1 ended before its handover: %v", err)
	case <-time.After(5 * time.Minute):
		fail("agent1", "no handover from agent 1")
	}
	plugins = append(plugins, h.Reattach.Pid)
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return cmd, h
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func fdTarget(pid, fd int) string {
	t, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		return "?"
	}
	return t
}

// reap collects a plugin that was killed: go-plugin's clients wait for
// its pid to be gone (kill(pid, 0) failing), which a zombie is not. The
// test is the subreaper, so an orphaned plugin is its child; one that is
// not (ECHILD) is someone else's to collect.
func reap(pid int) {
	for i := 0; i < 200; i++ {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid {
			return
		}
		if errors.Is(err, syscall.ECHILD) {
			if _, serr := os.Stat(fmt.Sprintf("/proc/%d", pid)); serr != nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	fail("reap", "pid %d was not collected", pid)
}

func grpcCode(err error) codes.Code { return status.Code(err) }

func refused(step, what string, err error, s *session) string {
	check(err != nil, step, "%s was accepted", what)
	must(s.rpc.Ping(), step)
	st := status.Convert(err)
	detail := ""
	for _, d := range st.Details() {
		if rec, isRec := d.(*structs.RecoverableError); isRec {
			detail = fmt.Sprintf(", RecoverableError{recoverable=%v}", rec.Recoverable)
		}
	}
	return fmt.Sprintf("%s: %s %q%s", what, st.Code(), firstLine(st.Message()), detail)
}

func taskStats(s *session, id string, out *fifoReader) {
	ctx, cancel := rpcCtx()
	defer cancel()
	_, err := s.driver.SignalTask(ctx, &drivers.SignalTaskRequest{TaskId: id, Signal: "SIGUSR2"})
	must(err, "task_stats")
	st, err := s.driver.TaskStats(ctx, &drivers.TaskStatsRequest{TaskId: id,
		CollectionInterval: durationpb.New(500 * time.Millisecond)})
	must(err, "task_stats")
	var best *drivers.TaskStats
	for i := 0; i < 20; i++ {
		r, err := st.Recv()
		must(err, "task_stats")
		cpu := r.Stats.GetAggResourceUsage().GetCpu()
		if cpu.GetTotalTicks() > 0 && (best == nil || cpu.GetPercent() > best.AggResourceUsage.Cpu.Percent) {
			best = r.Stats
		}
		if best != nil && best.AggResourceUsage.Cpu.Percent >= 30 {
			break
		}
	}
	cancel()
	check(best != nil, "task_stats", "no sample with total_ticks > 0 while the task kept a CPU busy")
	cpu, mem := best.AggResourceUsage.Cpu, best.AggResourceUsage.Memory
	want := cpu.Percent / 100 * mhzPerCore
	check(math.Abs(cpu.TotalTicks-want) < 0.01*want+0.01, "task_stats", "total_ticks %.2f, want %.2f", cpu.TotalTicks,
		want)
	var cpuNames, memNames []string
	for _, f := range cpu.MeasuredFields {
		cpuNames = append(cpuNames, cpuFieldNames[f])
	}
	for _, f := range mem.MeasuredFields {
		memNames = append(memNames, memFieldNames[f])
	}
	sort.Strings(cpuNames)
	sort.Strings(memNames)
	for _, n := range cpuNames {
		check(n != "Total Ticks", "task_stats", "Total Ticks listed as measured (alloc status would misalign)")
	}
	usage := mem.Rss
	if usage == 0 {
		usage = mem.Usage
	}
	ok("task_stats", "busy task: percent %.1f, total_ticks %.1f (= percent/100 x %d MHz per core, Nomad's TicksConsumed); alloc status would show CPU %.0f/100 MHz, Memory %d KiB/64 MiB",
		cpu.Percent, cpu.TotalTicks, mhzPerCore, math.Floor(cpu.TotalTicks), usage/1024)
	ok("task_stats", "CPU Stats %s = user %.1f%% system %.1f%% throttled %d periods %d ns; Memory Stats %s = rss %d cache %d swap %d usage %d max %d kernel %d",
		strings.Join(cpuNames, "|"), cpu.UserMode, cpu.SystemMode, cpu.ThrottledPeriods, cpu.ThrottledTime,
		strings.Join(memNames, "|"), mem.Rss, mem.Cache, mem.Swap, mem.Usage, mem.MaxUsage, mem.KernelUsage)
	if _, found := out.waitFor("busy-done", 30*time.Second); !found {
		fail("task_stats", "the busy phase did not end")
	}
}

func execTask(s *session, id string) {
	ctx, cancel := rpcCtx()
	defer cancel()
	r, err := s.driver.ExecTask(ctx, &drivers.ExecTaskRequest{TaskId: id,
		Command: []string{"/bin/sh", "-c", "echo exec-out $GREETING; echo exec-err >&2; exit 4"},
		Timeout: durationpb.New(30 * time.Second)})
	must(err, "exec_task")
	check(string(r.Stdout) == "exec-out hi\n" && string(r.Stderr) == "exec-err\n" && r.Result.GetExitCode() == 4,
		"exec_task", "%v", r)
	ok("exec_task", "stdout %q, stderr %q, exit %d", r.Stdout, r.Stderr, r.Result.GetExitCode())
}

func execStreaming(s *session, id string) {
	ctx, cancel := rpcCtx()
	defer cancel()
	st, err := s.driver.ExecTaskStreaming(ctx)
	must(err, "exec_streaming")
	send := func(m *drivers.ExecTaskStreamingRequest) { must(st.Send(m), "exec_streaming") }
	send(&drivers.ExecTaskStreamingRequest{
		Setup:   &drivers.ExecTaskStreamingRequest_Setup{TaskId: id, Command: []string{"/bin/sh"}, Tty: true},
		TtySize: &drivers.ExecTaskStreamingRequest_TerminalSize{Height: 24, Width: 80}})
	seen := ""
	readFor := func(want string) {
		for !strings.Contains(seen, want) {
			r, err := st.Recv()
			must(err, "exec_streaming")
			check(!r.Exited, "exec_streaming", "exited before %q: %q", want, seen)
			seen += string(r.GetStdout().GetData())
		}
	}
	stdin := func(text string) {
		send(&drivers.ExecTaskStreamingRequest{Stdin: &drivers.ExecTaskStreamingIOOperation{Data: []byte(text)}})
	}
	stdin("echo tty-$((6*7)); test -t 0 && echo terminal-$((40+2))\n")
	readFor("tty-42")
	readFor("terminal-42") // computed: the terminal echoes the input line
	send(&drivers.ExecTaskStreamingRequest{TtySize: &drivers.ExecTaskStreamingRequest_TerminalSize{Height: 30, Width: 100}})
	time.Sleep(200 * time.Millisecond)
	stdin("stty size\n")
	readFor("30 100")
	stdin("exit 3\n")
	code := int32(-1)
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		must(err, "exec_streaming")
		if r.Exited {
			code = r.Result.GetExitCode()
		}
	}
	_ = st.CloseSend()
	check(code == 3, "exec_streaming", "exit %d, output %q", code, seen)
	ok("exec_streaming", "a shell on a terminal (test -t 0): echo, resize 24x80 -> 30x100 seen by stty, exit 3")
}

// The README's job: its task's config block exactly as written there
// (with isolation "none" added on the bus tier, which has no root of a
// task's own to give), run until its first line, then stopped as Nomad
// stops it (its kill_timeout defaults to 5 s).
func readmeJob(s *session, a alloc, secret string) {
	ctx, cancel := rpcCtx()
	defer cancel()
	name := readme.taskName
	a.taskDir(name)
	out := readFifo(a.fifo(name, "stdout"))
	_ = readFifo(a.fifo(name, "stderr"))
	block := map[string]interface{}{}
	for k, v := range readme.taskConfig {
		block[k] = v
	}
	note := ""
	if !system() {
		block["isolation"] = "none"
		note = " (isolation none added: bus tier)"
	}
	cfg := taskConfig(s, a, name, secret, block)
	_, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: cfg})
	must(err, "readme_job")
	want := "hello from " + name
	if text, found := out.waitFor(want, 30*time.Second); !found {
		fail("readme_job", "no %q on its stdout: %q", want, text)
	}
	_, err = s.driver.StopTask(ctx, &drivers.StopTaskRequest{TaskId: cfg.Id, Signal: "SIGTERM",
		Timeout: durationpb.New(stopGrace(5 * time.Second))})
	must(err, "readme_job")
	w, err := s.driver.WaitTask(ctx, &drivers.WaitTaskRequest{TaskId: cfg.Id})
	must(err, "readme_job")
	check(stoppedAs(w, 0), "readme_job", "%v", w)
	_, err = s.driver.DestroyTask(ctx, &drivers.DestroyTaskRequest{TaskId: cfg.Id})
	must(err, "readme_job")
	ok("readme_job", "the README job's task %q%s: %q on its stdout, stopped (exit_code %d signal %d)", name, note,
		want, w.Result.GetExitCode(), w.Result.GetSignal())
}

func agent2() {
	// Orphaned plugins (their agent died) become this process's children,
	// as they stay in the agent's unit under systemd.
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 36 /* PR_SET_CHILD_SUBREAPER */, 1, 0)
	check(errno == 0, "subreaper", "prctl: %v", errno)
	// The README's client config names the plugin as Nomad's loader
	// finds it (helper/pluginutils/loader/init.go fingerprintPlugins: the
	// file name, cleanPluginExecutable in util.go dropping only ".exe").
	check(readme.pluginLabel == strings.TrimSuffix(filepath.Base(*flagPlugin), ".exe"), "readme_config",
		"plugin block %q does not name %s", readme.pluginLabel, filepath.Base(*flagPlugin))
	if system() {
		check(readme.pluginDir == filepath.Dir(*flagPlugin), "readme_config", "plugin_dir %q, the package installs %s",
			readme.pluginDir, *flagPlugin)
	}
	ok("readme_config", "plugin_dir %q, plugin %q (the executable's file name, as Nomad's loader matches it), config %v",
		readme.pluginDir, readme.pluginLabel, readme.pluginConfig)
	secret := fmt.Sprintf("s.%x", time.Now().UnixNano())
	a := newAlloc(*flagWork, fmt.Sprintf("nomadgo-%d", os.Getpid()))
	a.taskDir("web")
	stdout, stderr := readFifo(a.fifo("web", "stdout")), readFifo(a.fifo("web", "stderr"))
	ok("alloc_dir", "%s: alloc/{logs,tmp,data}, web/{local,tmp,secrets,private}; Nomad's logmon fifos held open", a.dir)

	// Agent 1 launches the plugin and starts the task, then dies.
	cmd, h := startAgent1(a, secret)
	check(alive(h.Reattach.Pid), "agent_restart", "the plugin died with its agent")
	ok("agent_restart", "agent 1 (pid %d) SIGKILLed; its plugin (pid %d) runs on: stdout -> %s, stderr -> %s",
		cmd.Process.Pid, h.Reattach.Pid, fdTarget(h.Reattach.Pid, 1), fdTarget(h.Reattach.Pid, 2))
	if text, found := stdout.waitFor("hello-stdout hi", 30*time.Second); !found {
		fail("task_output", "stdout fifo: %q", text)
	}
	if text, found := stderr.waitFor("hello-stderr", 30*time.Second); !found {
		fail("task_output", "stderr fifo: %q", text)
	}
	ok("task_output", "stdout fifo %q, stderr fifo %q", "hello-stdout hi", "hello-stderr")

	// Agent 2 reattaches to the same process.
	rc, err := h.Reattach.toGoPlugin()
	must(err, "reattach")
	c := plugin.NewClient(nomadReattachConfig(rc, agentLogger()))
	rpc, err := c.Client()
	must(err, "reattach")
	raw, err := rpc.Dispense(pluginTypeDriver)
	must(err, "reattach")
	s := &session{client: c, rpc: rpc, driver: raw.(*driverClient), pid: rc.Pid}
	must(rpc.Ping(), "reattach")
	check(c.ReattachConfig().Pid == h.Reattach.Pid, "reattach", "another pid")
	ok("reattach", "go-plugin ReattachConfig{grpc, %s, pid %d}: the same process answers (health SERVING)", rc.Addr,
		rc.Pid)
	ctx, cancel := rpcCtx()
	defer cancel()
	_, err = s.driver.Init(ctx, &drivers.InitRequest{})
	must(err, "init_again")
	ts, err := s.driver.TaskConfigSchema(ctx, &drivers.TaskConfigSchemaRequest{})
	must(err, "init_again")
	s.schema = ts.Spec
	time.Sleep(200 * time.Millisecond)
	ok("init_again", "Init after the reattach (no SetConfig: the process kept its config); its log record found no reader: stderr -> %s",
		fdTarget(rc.Pid, 2))

	var th drivers.TaskHandle
	must(proto.Unmarshal(h.Handle, &th), "recover_task")
	_, err = s.driver.RecoverTask(ctx, &drivers.RecoverTaskRequest{Handle: &th})
	must(err, "recover_task")
	ok("recover_task", "RecoverTask with the stored handle (task_id unset, as Nomad sends it) on the plugin that knows it: %s",
		inspectRunning(s, h.TaskID, "recover_task"))
	fingerprint(s, "fingerprint_again")

	if system() {
		taskStats(s, h.TaskID, stdout)
	} else {
		skip("task_stats", "the bus tier has no streamer")
	}
	if signalsReach() {
		_, err = s.driver.SignalTask(ctx, &drivers.SignalTaskRequest{TaskId: h.TaskID, Signal: "SIGUSR1"})
		must(err, "signal_task")
		if text, found := stdout.waitFor("got-usr1", 30*time.Second); !found {
			fail("signal_task", "no got-usr1: %q", text)
		}
		ok("signal_task", "SIGUSR1 reached the task: got-usr1 on its stdout fifo")
	} else {
		skip("signal_task", "the bus tier's stand-in systemd: no process of the task for the manager to signal")
	}
	if system() {
		execTask(s, h.TaskID)
		execStreaming(s, h.TaskID)
	} else {
		skip("exec_task", "the bus tier has no streamer")
		skip("exec_streaming", "the bus tier has no streamer")
	}

	must(syscall.Kill(rc.Pid, syscall.SIGINT), "sigint")
	time.Sleep(500 * time.Millisecond)
	check(alive(rc.Pid), "sigint", "SIGINT killed the plugin")
	must(rpc.Ping(), "sigint")
	_, _, err = inspect(s, h.TaskID)
	must(err, "sigint")
	ok("sigint_ignored", "SIGINT (a terminal's ^C to the agent's process group) left pid %d serving", rc.Pid)

	// Bad input: each refused with a reason, the plugin serving on.
	var notes []string
	bad := func(what string, cfg *drivers.TaskConfig) {
		_, err := s.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: cfg})
		notes = append(notes, refused("bad_input", what, err, s))
	}
	a.taskDir("bad")
	_ = readFifo(a.fifo("bad", "stdout"))
	_ = readFifo(a.fifo("bad", "stderr"))
	b1 := taskConfig(s, a, "bad", secret, taskBlock("/bin/true", nil))
	b1.MsgpackDriverConfig = []byte{0xc1}
	bad("undecodable msgpack", b1)
	b2 := taskConfig(s, a, "bad", secret, taskBlock("/bin/true", nil))
	b2.MsgpackDriverConfig = rawMsgpack(cty.ObjectVal(map[string]cty.Value{"args": cty.ListValEmpty(cty.String)}))
	bad("config without command", b2)
	b3 := taskConfig(s, a, "bad", secret, taskBlock("/nonexistent/bin/server", nil))
	bad("missing binary", b3)
	_, err = s.driver.SignalTask(ctx, &drivers.SignalTaskRequest{TaskId: "no/such/task", Signal: "SIGUSR1"})
	notes = append(notes, refused("bad_input", "signal to an unknown task", err, s))
	check(grpcCode(err) == codes.NotFound, "bad_input", "unknown task: %v", err)
	_, err = s.driver.DestroyTask(ctx, &drivers.DestroyTaskRequest{TaskId: h.TaskID})
	notes = append(notes, refused("bad_input", "destroy of a running task without force", err, s))
	badHandle := proto.Clone(&th).(*drivers.TaskHandle)
	badHandle.DriverState = []byte("not a handle")
	_, err = s.driver.RecoverTask(ctx, &drivers.RecoverTaskRequest{Handle: badHandle})
	notes = append(notes, refused("bad_input", "a handle that is not the driver's", err, s))
	for _, n := range notes {
		ok("bad_input", "%s", n)
	}
	_, _, err = inspect(s, h.TaskID)
	must(err, "bad_input")
	ok("bad_input", "the plugin serves on, the task runs on")

	// The plugin dies; a new one recovers the task from its handle.
	must(syscall.Kill(rc.Pid, syscall.SIGKILL), "plugin_killed")
	reap(rc.Pid)
	check(!alive(rc.Pid), "plugin_killed", "still alive")
	c.Kill() // Nomad's client notices the exit and drops the instance
	ok("plugin_killed", "pid %d SIGKILLed", rc.Pid)
	s2 := launch("new_plugin")
	configure(s2, "_new")
	_, _, err = inspect(s2, h.TaskID)
	check(grpcCode(err) == codes.NotFound, "recover_after_kill", "known before RecoverTask: %v", err)
	_, err = s2.driver.RecoverTask(ctx, &drivers.RecoverTaskRequest{Handle: &th})
	must(err, "recover_after_kill")
	ok("recover_after_kill", "unknown to the new plugin until RecoverTask; then %s",
		inspectRunning(s2, h.TaskID, "recover_after_kill"))
	if signalsReach() {
		stdout.mu.Lock()
		stdout.text = ""
		stdout.mu.Unlock()
		_, err = s2.driver.SignalTask(ctx, &drivers.SignalTaskRequest{TaskId: h.TaskID, Signal: "SIGUSR1"})
		must(err, "signal_after_recover")
		if text, found := stdout.waitFor("got-usr1", 30*time.Second); !found {
			fail("signal_after_recover", "%q", text)
		}
		ok("signal_after_recover", "SIGUSR1 through the new plugin: got-usr1 in the same fifo")
	} else {
		skip("signal_after_recover", "the bus tier's stand-in systemd: no process to signal")
	}

	// Stop, wait, destroy.
	t0 := time.Now()
	grace := stopGrace(10 * time.Second)
	_, err = s2.driver.StopTask(ctx, &drivers.StopTaskRequest{TaskId: h.TaskID, Signal: "SIGTERM",
		Timeout: durationpb.New(grace)})
	must(err, "stop_task")
	_, st, err := inspect(s2, h.TaskID)
	must(err, "stop_task")
	check(st.state == drivers.TaskState_EXITED, "stop_task", "StopTask returned before the exit")
	ok("stop_task", "SIGTERM, %v grace: returned once the task had exited (%.0f ms)", grace,
		float64(time.Since(t0).Microseconds())/1000)
	for i := 1; i <= 2; i++ {
		w, err := s2.driver.WaitTask(ctx, &drivers.WaitTaskRequest{TaskId: h.TaskID})
		must(err, "wait_task")
		check(w.Err == "" && (stoppedAs(w, 143) || w.Result.GetSignal() == int32(syscall.SIGTERM)), "wait_task", "%v",
			w)
		ok("wait_task", "call %d: exit_code %d signal %d oom_killed %v", i, w.Result.GetExitCode(),
			w.Result.GetSignal(), w.Result.GetOomKilled())
	}
	r, st, err := inspect(s2, h.TaskID)
	must(err, "inspect_exited")
	check(st.state == drivers.TaskState_EXITED && !st.doneZero && st.completedAt >= st.startedAt, "inspect_exited",
		"%v", r.Task)
	ok("inspect_exited", "EXITED, started %s, completed %s, exit %d", st.startedAt, st.completedAt,
		st.exit.GetExitCode())
	_, err = s2.driver.DestroyTask(ctx, &drivers.DestroyTaskRequest{TaskId: h.TaskID})
	must(err, "destroy_task")
	_, _, err = inspect(s2, h.TaskID)
	check(grpcCode(err) == codes.NotFound, "destroy_task", "still known: %v", err)
	ok("destroy_task", "destroyed; InspectTask: NotFound")

	// A task that ends by itself.
	a.taskDir("quick")
	_ = readFifo(a.fifo("quick", "stdout"))
	_ = readFifo(a.fifo("quick", "stderr"))
	quick := taskConfig(s2, a, "quick", secret, taskBlock("/bin/sh", []string{"-c", "exit 3"}))
	_, err = s2.driver.StartTask(ctx, &drivers.StartTaskRequest{Task: quick})
	must(err, "exit_code")
	w, err := s2.driver.WaitTask(ctx, &drivers.WaitTaskRequest{TaskId: quick.Id})
	must(err, "exit_code")
	check(w.Result.GetExitCode() == 3 && w.Result.GetSignal() == 0, "exit_code", "%v", w)
	_, err = s2.driver.DestroyTask(ctx, &drivers.DestroyTaskRequest{TaskId: quick.Id})
	must(err, "exit_code")
	ok("exit_code", "a task that exits 3 by itself: WaitTask exit_code 3")
	readmeJob(s2, a, secret)
	execJobs(s2, a)

	// Shutdown as Nomad's client does it (drivermanager/instance.go
	// cleanup): Driver.Shutdown, then go-plugin's Kill (GRPCController
	// Shutdown, 2 s to exit before SIGKILL).
	addr := s2.client.ReattachConfig().Addr.String()
	t0 = time.Now()
	_, err = s2.driver.Shutdown(ctx, &drivers.ShutdownRequest{})
	must(err, "shutdown")
	s2.client.Kill()
	took := time.Since(t0)
	reap(s2.pid)
	check(!alive(s2.pid), "shutdown", "still alive")
	check(took < 2*time.Second, "shutdown", "took %v: go-plugin killed it", took)
	_, serr := os.Stat(addr)
	check(errors.Is(serr, os.ErrNotExist), "shutdown", "socket %s left behind", addr)
	ok("shutdown", "Driver.Shutdown then go-plugin Kill: pid %d exited by itself in %.0f ms, socket removed", s2.pid,
		float64(took.Microseconds())/1000)

	text := logs.String()
	check(!strings.Contains(text, secret), "no_secret", "the task's secret is in the plugin's log")
	line := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "[INFO]") && strings.Contains(l, "initialized") {
			line = strings.TrimSpace(l)
		}
	}
	check(line != "", "plugin_log", "no INFO record from the plugin in go-plugin's log:\n%s", text)
	ok("plugin_log", "go-plugin parsed the plugin's hclog JSON record: %s", line)
	ok("no_secret", "the task's VAULT_TOKEN is nowhere in the plugin's log (%d bytes)", len(text))
	fmt.Println("all ok")
}

func main() {
	flag.Parse()
	if *flagPlugin == "" || *flagWork == "" || *flagReadme == "" || (*flagTier != "bus" && *flagTier != "system") {
		fmt.Fprintln(os.Stderr,
			"usage: nomad-goplugin-test -plugin PATH -work DIR -readme README.md [-tier bus|system] [-cgroup v1|v2]")
		os.Exit(2)
	}
	var err error
	if readme, err = readReadme(*flagReadme); err != nil {
		fail("readme_config", "%v", err)
	}
	if *flagAgent1 {
		agent1()
		return
	}
	agent2()
}
