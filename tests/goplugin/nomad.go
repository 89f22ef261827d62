package main

// What Nomad's client does with a driver plugin, as far as this test
// plays it: the go-plugin ClientConfig of its plugin loader, its plugin
// map, its reattach config, and its conversions of what the driver
// answers. Facts from Nomad 2.0.6-dev (commit aa026cc99cfb, 2026-08),
// each with the file it comes from; the code is this test's own.
//
// go-plugin: Debian has v1.0.1 (golang-github-hashicorp-go-plugin-dev);
// current Nomad links v1.8.0 (its go.mod). On the client side v1.8
// differs from v1.0.1 in what a plugin sees (go-plugin client.go,
// grpc_client.go, grpc_stdio.go, internal/cmdrunner at commit dd3617ad0257):
//   - it opens GRPCStdio.StreamStdio once right after dialing, to copy the
//     plugin's stdout/stderr to SyncStdout/SyncStderr (v1.0.1 has no stdio
//     service); Unimplemented or Unavailable only logs a warning. The
//     driver serves it (an open, empty stream), and this test opens it as
//     v1.8 does (checkStdio).
//   - it splits the handshake line into all its fields (v1.0.1: at most 6
//     with strings.SplitN) and reads a 7th, broker multiplexing, when the
//     client set GRPCBrokerMultiplex (it then sets PLUGIN_MULTIPLEX_GRPC);
//     Nomad does not, and the driver answers "false" to a client that asks
//     (its unit test checks the line).
//   - it may ask for the socket in a given directory and group
//     (PLUGIN_UNIX_SOCKET_DIR, PLUGIN_UNIX_SOCKET_GROUP, set with a
//     UnixSocketConfig or a RunnerFunc); Nomad sets neither. The driver
//     honours both.
//   - AutoMTLS requires client certificates and TLS 1.2 (v1.0.1 sets
//     neither); Nomad uses no AutoMTLS, and the driver refuses a client
//     that asks (PLUGIN_CLIENT_CERT) rather than fail its TLS handshake.
//   - reattach goes through runner.ReattachFunc: FindProcess, a test dial,
//     then pidWait; v1.0.1 does the same checks inline and, when the dial
//     fails, kills the pid it was given. Both dial the socket, so the
//     plugin must keep it while no client is attached.
//   - the broker's stream (opened by both), the controller's Shutdown on
//     Kill with 2 s to exit before SIGKILL (both), the stderr log parsing
//     (both read hclog JSON lines; v1.8 reads up to 64 KiB per line) are
//     the same.
// This test runs the v1.0.1 client; the v1.8-only calls are made by hand.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"

	"github.com/golang/protobuf/ptypes"
	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"taskscope/nomadpb/base"
	"taskscope/nomadpb/drivers"
)

// base.Handshake, plugins/base/plugin.go: "Version 2: 0.9+ grpc based".
var nomadHandshake = plugin.HandshakeConfig{
	ProtocolVersion:  2,
	MagicCookieKey:   "NOMAD_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "e4327c2e01eabfd75a8a67adb114fb34a757d57eee7728d857a8cec6e91a7255",
}

// The plugin types of plugins/base/plugin.go, and the API version of
// plugins/drivers/versions.go (ApiVersion010), the only driver version in
// helper/pluginutils/loader/api_versions.go.
const (
	pluginTypeBase   = "base"
	pluginTypeDriver = "driver"
	driverAPIVersion = "v0.1.0"
)

// The two plugin types Nomad dispenses from a driver plugin
// (helper/pluginutils/loader/loader.go getPluginMap): gRPC only
// (NetRPCUnsupportedPlugin), a client of the BasePlugin service and one of
// the Driver service on the connection go-plugin made.
type basePlugin struct{ plugin.NetRPCUnsupportedPlugin }

type baseClient struct {
	base.BasePluginClient
	doneCtx context.Context
}

func (basePlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return fmt.Errorf("this test is a client only")
}

func (basePlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &baseClient{BasePluginClient: base.NewBasePluginClient(c), doneCtx: ctx}, nil
}

type driverPlugin struct{ plugin.NetRPCUnsupportedPlugin }

type driverClient struct {
	base.BasePluginClient
	drivers.DriverClient
	doneCtx context.Context
}

func (driverPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return fmt.Errorf("this test is a client only")
}

func (driverPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &driverClient{BasePluginClient: base.NewBasePluginClient(c), DriverClient: drivers.NewDriverClient(c),
		doneCtx: ctx}, nil
}

func nomadPluginMap() map[string]plugin.Plugin {
	return map[string]plugin.Plugin{pluginTypeBase: &basePlugin{}, pluginTypeDriver: &driverPlugin{}}
}

// The ClientConfig of Nomad's loader, exactly: for a launch
// (helper/pluginutils/loader/loader.go dispensePlugin and init.go
// fingerprintPlugin: HandshakeConfig base.Handshake, Plugins, Cmd
// exec.Command(path, args...), AllowedProtocols gRPC only, Logger, and
// nothing else: no AutoMTLS, no SecureConfig, no UnixSocketConfig, no
// GRPCBrokerMultiplex, no SyncStdout/SyncStderr) and for a reattach (the
// same with Reattach instead of Cmd). Plugins under HandshakeConfig is how
// Nomad versions them: go-plugin files them as VersionedPlugins[2].
func nomadLaunchConfig(path string, logger hclog.Logger) *plugin.ClientConfig {
	return &plugin.ClientConfig{
		HandshakeConfig:  nomadHandshake,
		Plugins:          nomadPluginMap(),
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
	}
}

func nomadReattachConfig(rc *plugin.ReattachConfig, logger hclog.Logger) *plugin.ClientConfig {
	return &plugin.ClientConfig{
		HandshakeConfig:  nomadHandshake,
		Plugins:          nomadPluginMap(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
		Reattach:         rc,
	}
}

// What Nomad's client keeps of a plugin across its own restart
// (plugins/shared/structs/plugin_reattach_config.go ReattachConfig, JSON in
// its state store), and the way back.
type storedReattach struct {
	Protocol string
	Network  string
	Addr     string
	Pid      int
}

func storeReattach(rc *plugin.ReattachConfig) storedReattach {
	return storedReattach{Protocol: string(rc.Protocol), Network: rc.Addr.Network(), Addr: rc.Addr.String(), Pid: rc.Pid}
}

func (s storedReattach) toGoPlugin() (*plugin.ReattachConfig, error) {
	if s.Network != "unix" {
		return nil, fmt.Errorf("unexpected network %q", s.Network)
	}
	addr, err := net.ResolveUnixAddr(s.Network, s.Addr)
	if err != nil {
		return nil, err
	}
	return &plugin.ReattachConfig{Protocol: plugin.Protocol(s.Protocol), Addr: addr, Pid: s.Pid}, nil
}

// What agent 1 hands to agent 2: Nomad's stored reattach config and the
// task's handle (Nomad keeps the TaskHandle in its state, client/state).
type handover struct {
	Reattach storedReattach
	Handle   []byte // a drivers.TaskHandle, protobuf
	TaskID   string
}

func (h handover) encode() []byte { b, _ := json.Marshal(h); return b }

// plugins/drivers/utils.go taskStatusFromProto: both times through
// ptypes.Timestamp, which fails for an absent one.
type taskStatus struct {
	state       drivers.TaskState
	startedZero bool
	doneZero    bool
	startedAt   string
	completedAt string
	exit        *drivers.ExitResult
}

func taskStatusFromProto(pb *drivers.TaskStatus) (*taskStatus, error) {
	started, err := ptypes.Timestamp(pb.StartedAt)
	if err != nil {
		return nil, fmt.Errorf("started_at: %v", err)
	}
	completed, err := ptypes.Timestamp(pb.CompletedAt)
	if err != nil {
		return nil, fmt.Errorf("completed_at: %v", err)
	}
	return &taskStatus{state: pb.State, startedZero: started.IsZero(), doneZero: completed.IsZero(),
		startedAt: started.UTC().Format("15:04:05.000"), completedAt: completed.UTC().Format("15:04:05.000"),
		exit: pb.Result}, nil
}

// plugins/drivers/utils.go cpuUsageMeasuredFieldFromProtoMap and
// memoryUsageMeasuredFieldFromProtoMap: the names alloc status prints.
var cpuFieldNames = map[drivers.CPUUsage_Fields]string{
	drivers.CPUUsage_SYSTEM_MODE: "System Mode", drivers.CPUUsage_USER_MODE: "User Mode",
	drivers.CPUUsage_TOTAL_TICKS: "Total Ticks", drivers.CPUUsage_THROTTLED_PERIODS: "Throttled Periods",
	drivers.CPUUsage_THROTTLED_TIME: "Throttled Time", drivers.CPUUsage_PERCENT: "Percent",
}

var memFieldNames = map[drivers.MemoryUsage_Fields]string{
	drivers.MemoryUsage_RSS: "RSS", drivers.MemoryUsage_CACHE: "Cache", drivers.MemoryUsage_SWAP: "Swap",
	drivers.MemoryUsage_USAGE: "Usage", drivers.MemoryUsage_MAX_USAGE: "Max Usage",
	drivers.MemoryUsage_KERNEL_USAGE: "Kernel Usage", drivers.MemoryUsage_KERNEL_MAX_USAGE: "Kernel Max Usage",
}
