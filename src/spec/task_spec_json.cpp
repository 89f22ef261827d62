// The task spec's JSON form, as tables: one schema per struct (resources,
// volume, isolation, plugin, task), each field with its codec. Reading a
// caller's spec, writing it back and every message about a bad value come
// from these tables and nowhere else.

#include <cctype>

#include "common/cpu_list.hpp"
#include "common/signals.hpp"
#include "spec/json_text.hpp"
#include "spec/schema.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::spec {

namespace {

using common::Result;

constexpr int64_t kMaxMb = int64_t{1} << 40;
constexpr uint64_t kMaxSecretsBytes = uint64_t{1} << 30;
constexpr size_t kMaxChrootEnv = 32;
constexpr size_t kMaxVolumes = 16;
// A node's GPUs and the like: a few per task; bounded as every list is.
constexpr size_t kMaxDevices = 64;

// --- codecs of this spec's own kinds ---------------------------------------

std::optional<std::string> absolute(const std::string& s) {
    if (s.empty() || s.front() != '/') return "must be an absolute path";
    // A path ends at a NUL for the kernel, and the shim's saved process
    // spec separates its words with NULs: "/x\0--uid\00" would be a cwd of
    // /x for the task and "--uid 0" for every exec into it.
    if (const auto nul = s.find('\0'); nul != std::string::npos)
        return "must not hold a NUL byte (at byte " + std::to_string(nul) + ")";
    return std::nullopt;
}

// A path in an isolation object: absolute and without "..".
std::optional<std::string> clean(const std::string& s) {
    if (!isCleanAbsolutePath(s)) return "'" + s + "' must be an absolute path without '..'";
    return std::nullopt;
}

std::optional<std::string> cleanNotRoot(const std::string& s) {
    if (auto why = clean(s)) return why;
    if (s == "/") return "must not be /";
    return std::nullopt;
}

// Plugin and socket names become path components and object paths: a
// conservative alphabet, as CSI's own provider names use.
bool validName(const std::string& s) {
    if (s.empty() || s.size() > 48 || s.front() == '.' || s.front() == '-') return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
    return s.find("..") == std::string::npos;
}

// The kernel ends each argv and environment word at its first NUL, so
// "a\0b" would reach the task as "a" without a word of warning: such a
// word is refused, naming where its NUL is.
std::optional<std::string> nulIn(const std::string& s) {
    if (const auto nul = s.find('\0'); nul != std::string::npos)
        return "must not hold a NUL byte (at byte " + std::to_string(nul) + ")";
    return std::nullopt;
}

Codec<std::vector<std::string>> processWords() {
    return {[](const Json& v, const std::string& at, Strictness how) -> Result<std::vector<std::string>> {
                auto words = texts().read(v, at, how);
                if (!words) return words.error();
                for (size_t i = 0; i < words->size(); ++i)
                    if (auto why = nulIn((*words)[i])) return invalid(at + "[" + std::to_string(i) + "] " + *why);
                return words;
            },
            texts().write};
}

Codec<std::map<std::string, std::string>> environment() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<std::map<std::string, std::string>> {
                if (!v.is_object()) return invalid(at + " must be an object of strings");
                std::map<std::string, std::string> out;
                for (const auto& [k, value] : v.items()) {
                    if (!value.is_string()) return invalid(at + "." + k + " must be a string");
                    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos)
                        return invalid(at + " name '" + std::string(k.c_str()) + "' is not valid");
                    if (auto why = nulIn(value.get_ref<const std::string&>())) return invalid(at + "." + k + " " + *why);
                    out[k] = value.get<std::string>();
                }
                return out;
            },
            [](const std::map<std::string, std::string>& env) { return Json(env); }};
}

Codec<int> signal() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<int> {
                if (!v.is_string()) return invalid(at + " must be a string");
                auto sig = common::parseSignal(v.get<std::string>());
                if (!sig) return invalid(at + ": " + sig.error().message);
                return *sig;
            },
            [](const int& sig) { return Json(common::signalName(sig)); }};
}

Codec<std::set<unsigned>> cpuList() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<std::set<unsigned>> {
                if (!v.is_string()) return invalid(at + " must be a string");
                auto cpus = common::parseCpuList(v.get<std::string>());
                if (!cpus) return invalid(at + ": " + cpus.error().message);
                if (cpus->empty()) return invalid(at + " must name at least one core");
                return std::move(*cpus);
            },
            [](const std::set<unsigned>& cpus) { return Json(common::formatCpuList(cpus)); }};
}

// -1 (no hard limit) or a positive number of MB.
Codec<int64_t> memoryMax() {
    auto range = integer(-1, kMaxMb);
    return {[range](const Json& v, const std::string& at, Strictness how) -> Result<int64_t> {
                auto n = range.read(v, at, how);
                if (!n) return n.error();
                if (*n == 0) return invalid(at + " must be positive, or -1 for no hard limit");
                return *n;
            },
            range.write};
}

// "0,10-20" (id_ranges.hpp), written back as parsed.
Codec<IdRanges> idRanges() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<IdRanges> {
                if (!v.is_string()) return invalid(at + " must be a string such as \"0,10-20\"");
                return IdRanges::parse(v.get<std::string>(), at);
            },
            [](const IdRanges& r) { return Json(r.text()); }};
}

Codec<std::vector<std::string>> chrootPaths() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<std::vector<std::string>> {
                if (!v.is_array()) return invalid(at + " must be an array of absolute paths");
                std::vector<std::string> out;
                for (const auto& p : v) {
                    if (!p.is_string()) return invalid(at + " must be a string");
                    auto path = p.get<std::string>();
                    if (auto why = clean(path)) return invalid(at + " " + *why);
                    if (path == "/") return invalid(at + " must not hold / (the whole host)");
                    out.push_back(std::move(path));
                }
                if (out.size() > kMaxChrootEnv)
                    return invalid(at + " has more than " + std::to_string(kMaxChrootEnv) + " paths");
                return out;
            },
            [](const std::vector<std::string>& v) { return Json(v); }};
}

// Capability names ("NET_ADMIN", "cap_net_admin") as numbers; `all`, when
// given, takes "ALL" too.
Result<std::vector<int>> capabilities(const Json& v, const std::string& at, bool* all) {
    if (!v.is_array()) return invalid(at + " must be an array of capability names");
    std::vector<int> out;
    for (const auto& c : v) {
        if (!c.is_string()) return invalid(at + " must be an array of capability names");
        const auto name = c.get<std::string>();
        if (all && (name == "ALL" || name == "all")) {
            *all = true;
            continue;
        }
        const int n = capabilityNumber(name);
        if (n < 0) return invalid(at + ": unknown capability " + name);
        out.push_back(n);
    }
    return out;
}

Json capabilityNames(const std::vector<int>& caps, bool all) {
    Json out = Json::array();
    if (all) out.push_back("ALL");
    for (int c : caps) out.push_back(capabilityName(c));
    return out;
}

Codec<std::vector<int>> capAdd() {
    return {[](const Json& v, const std::string& at, Strictness) { return capabilities(v, at, nullptr); },
            [](const std::vector<int>& caps) { return capabilityNames(caps, false); }};
}

// cap_drop fills two members (the list and "ALL"): a field of its own.
Field<Isolation> capDropField() {
    Field<Isolation> f;
    f.name = "cap_drop";
    f.read = [](const Json& v, Isolation& iso, const std::string& at, Strictness) -> Result<void> {
        auto caps = capabilities(v, at, &iso.capDropAll);
        if (!caps) return caps.error();
        iso.capDrop = std::move(*caps);
        return {};
    };
    f.write = [](const Isolation& iso, Json& object) {
        if (iso.capDropAll || !iso.capDrop.empty()) object["cap_drop"] = capabilityNames(iso.capDrop, iso.capDropAll);
    };
    return f;
}

// {"/dev/vda": 1048576}: a block device (its node's path) to a rate.
Codec<IoDeviceLimits> ioDeviceLimits() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<IoDeviceLimits> {
                if (!v.is_object()) return invalid(at + " must be an object of device paths to integers");
                if (v.size() > kMaxIoDevices)
                    return invalid(at + " has more than " + std::to_string(kMaxIoDevices) + " devices");
                IoDeviceLimits out;
                for (const auto& [path, rate] : v.items()) {
                    if (!isDevicePath(path))
                        return invalid(at + ": '" + path + "' must be a block device's path under /dev/");
                    if (!rate.is_number_integer() || rate.get<int64_t>() < 1)
                        return invalid(at + "[\"" + path + "\"] must be a positive integer");
                    out[path] = static_cast<uint64_t>(rate.get<int64_t>());
                }
                return out;
            },
            [](const IoDeviceLimits& limits) { return Json(limits); }};
}

// {"nofile": "65536:65536", "core": "0"}: docker's --ulimit values.
Codec<std::map<std::string, Ulimit>> ulimits() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<std::map<std::string, Ulimit>> {
                if (!v.is_object()) return invalid(at + " must be an object of \"SOFT:HARD\" strings");
                return readUlimits(v, at);
            },
            [](const std::map<std::string, Ulimit>& limits) {
                Json out = Json::object();
                for (const auto& [name, limit] : limits) out[name] = formatUlimit(limit);
                return out;
            }};
}

// Given in KiB, kept in bytes.
Codec<uint64_t> secretsSize() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<uint64_t> {
                const auto max = static_cast<int64_t>(kMaxSecretsBytes / 1024);
                if (!v.is_number_integer() || v.get<int64_t>() < 4 || v.get<int64_t>() > max)
                    return invalid(at + " must be an integer 4.." + std::to_string(max));
                return static_cast<uint64_t>(v.get<int64_t>()) * 1024;
            },
            [](const uint64_t& bytes) { return Json(bytes / 1024); }};
}

// --- the schemas ------------------------------------------------------------

const Schema<Resources>& resourcesSchema() {
    static const Schema<Resources> schema{
        {
            field("memory_mb", &Resources::memoryMb, integer(1, kMaxMb)),
            field("memory_max_mb", &Resources::memoryMaxMb, memoryMax()),
            field("cpu_shares", &Resources::cpuShares, integerAs<uint64_t>(kCpuSharesMin, kCpuSharesMax)),
            field("cpu_quota_percent", &Resources::cpuQuotaPercent, integerAs<uint64_t>(1, 100000)),
            field("pids_max", &Resources::pidsMax, integerAs<uint64_t>(1, int64_t{1} << 22)),
            field("cores", &Resources::cores, integerAs<uint32_t>(0, 4096)),
            field("cpuset", &Resources::cpuset, cpuList()),
            field("io_weight", &Resources::ioWeight, integerAs<uint64_t>(kIoWeightMin, kIoWeightMax)),
            field("io_read_bps", &Resources::ioReadBps, ioDeviceLimits()),
            field("io_write_bps", &Resources::ioWriteBps, ioDeviceLimits()),
            field("io_read_iops", &Resources::ioReadIops, ioDeviceLimits()),
            field("io_write_iops", &Resources::ioWriteIops, ioDeviceLimits()),
        },
        {
            [](const Resources& r, const std::string& at) -> Result<void> {
                if (!r.cpuset.empty() && r.cores.value_or(0) > 0)
                    return invalid(at + "cores and " + at + "cpuset exclude each other");
                return {};
            },
            [](const Resources& r, const std::string& at) -> Result<void> {
                if (r.memoryMb && r.memoryMaxMb && *r.memoryMaxMb != -1 && *r.memoryMaxMb < *r.memoryMb)
                    return invalid(at + "memory_max_mb (" + std::to_string(*r.memoryMaxMb) + ") is below memory_mb (" +
                                   std::to_string(*r.memoryMb) + ")");
                return {};
            },
        },
        {},
        {}};
    return schema;
}

const Schema<Volume>& volumeSchema() {
    static const Schema<Volume> schema{
        {
            field("source", &Volume::source, text(clean), Presence::Always),
            field("target", &Volume::target, text(clean), Presence::Always),
            field("read_only", &Volume::readOnly, boolean(), Presence::Always),
            field("propagation", &Volume::propagation,
                  oneOf<Propagation>({{"private", Propagation::Private},
                                      {"host-to-task", Propagation::HostToTask},
                                      {"bidirectional", Propagation::Bidirectional}})),
        },
        {
            [](const Volume& v, const std::string& at) -> Result<void> {
                const auto self = at.substr(0, at.size() - 1);
                if (v.source.empty() || v.target.empty()) return invalid(self + " needs a source and a target");
                // A target of "/" would hide the whole root; outside the root
                // there is nothing (targets are absolute in it, without "..").
                if (v.target == "/") return invalid(at + "target must not be the task's root itself");
                if (v.readOnly && v.propagation == Propagation::Bidirectional)
                    return invalid(self + ": a bidirectional volume cannot be read-only");
                return {};
            },
        },
        {},
        {}};
    return schema;
}

const Schema<Device>& deviceSchema() {
    static const Schema<Device> schema{
        {
            field("host_path", &Device::hostPath, text([](const std::string& p) -> std::optional<std::string> {
                      if (!isDevicePath(p)) return "'" + p + "' must be a device node's path under /dev/";
                      return std::nullopt;
                  }),
                  Presence::Always, true),
            field("task_path", &Device::taskPath, text(cleanNotRoot)),
            field("permissions", &Device::permissions, text([](const std::string& p) -> std::optional<std::string> {
                      if (!validDevicePermissions(p)) return "'" + p + "' must be a combination of r, w and m";
                      return std::nullopt;
                  })),
        },
        {},
        {},
        {}};
    return schema;
}

// A list of resolv.conf words, each checked.
Codec<std::vector<std::string>> confWords(bool (*valid)(const std::string&), const char* what) {
    return {[valid, what](const Json& v, const std::string& at, Strictness) -> Result<std::vector<std::string>> {
                if (!v.is_array()) return invalid(at + " must be an array of strings");
                if (v.size() > kMaxDnsEntries)
                    return invalid(at + " has more than " + std::to_string(kMaxDnsEntries) + " entries");
                std::vector<std::string> out;
                for (const auto& w : v) {
                    if (!w.is_string() || !valid(w.get<std::string>()))
                        return invalid(at + ": " + w.dump() + " is not " + what);
                    out.push_back(w.get<std::string>());
                }
                return out;
            },
            [](const std::vector<std::string>& v) { return Json(v); }};
}

const Schema<DnsConfig>& dnsSchema() {
    static const Schema<DnsConfig> schema{
        {
            field("servers", &DnsConfig::servers, confWords(isIpAddress, "an IP address")),
            field("searches", &DnsConfig::searches, confWords(isConfWord, "a domain")),
            field("options", &DnsConfig::options, confWords(isConfWord, "a resolv.conf option")),
        },
        {},
        {},
        {}};
    return schema;
}

const Schema<HostsEntry>& hostsSchema() {
    static const Schema<HostsEntry> schema{
        {
            field("hostname", &HostsEntry::hostname, text([](const std::string& s) -> std::optional<std::string> {
                      if (!isConfWord(s)) return "'" + s + "' is not a host name";
                      return std::nullopt;
                  }),
                  Presence::Always, true),
            field("address", &HostsEntry::address, text([](const std::string& s) -> std::optional<std::string> {
                      if (!isIpAddress(s)) return "'" + s + "' is not an IP address";
                      return std::nullopt;
                  }),
                  Presence::Always, true),
        },
        {},
        {},
        {}};
    return schema;
}

const Schema<Isolation>& isolationSchema() {
    static const Schema<Isolation> schema{
        {
            field("filesystem", &Isolation::filesystem, boolean(), Presence::Always),
            field("task_dir", &Isolation::taskDir, text(cleanNotRoot)),
            field("alloc_dir", &Isolation::allocDir, text(cleanNotRoot)),
            field("secrets_dir", &Isolation::secretsDir, text(cleanNotRoot)),
            field("chroot_env", &Isolation::chrootEnv, chrootPaths()),
            field("volumes", &Isolation::volumes, objects(volumeSchema(), kMaxVolumes)),
            field("pid_mode", &Isolation::pidHost, oneOf<bool>({{"private", false}, {"host", true}})),
            field("ipc_mode", &Isolation::ipcHost, oneOf<bool>({{"private", false}, {"host", true}})),
            field("cap_add", &Isolation::capAdd, capAdd()),
            capDropField(),
            field("secrets_size_kb", &Isolation::secretsSizeBytes, secretsSize()),
            field("no_new_privs", &Isolation::noNewPrivs, boolean()),
        },
        {},
        // An isolation object means isolated unless it says otherwise.
        [](Isolation& iso) { iso.filesystem = true; },
        {}};
    return schema;
}

const Schema<PluginSpec>& pluginSchema() {
    static const Schema<PluginSpec> schema{
        {
            field("type", &PluginSpec::type, text([](const std::string& s) -> std::optional<std::string> {
                      if (s != "csi") return "'" + s + "' is not known (csi)";
                      return std::nullopt;
                  }),
                  Presence::Always, true),
            field("name", &PluginSpec::name, text([](const std::string& s) -> std::optional<std::string> {
                      if (!validName(s)) return "'" + s + "' must be 1-48 of [A-Za-z0-9._-], not starting with . or -";
                      return std::nullopt;
                  }),
                  Presence::Always, true),
            field("mount_dir", &PluginSpec::mountDir, text([](const std::string& s) -> std::optional<std::string> {
                      if (s.empty() || s.front() != '/' || s.find("/../") != std::string::npos || s.ends_with("/.."))
                          return "must be an absolute path without ..";
                      return std::nullopt;
                  })),
            field("socket", &PluginSpec::socket, text([](const std::string& s) -> std::optional<std::string> {
                      if (!validName(s)) return "'" + s + "' must be a plain file name";
                      return std::nullopt;
                  })),
            field("health_interval_ms", &PluginSpec::healthIntervalMs, integer(100, 3600 * 1000)),
            field("socket_timeout_ms", &PluginSpec::socketTimeoutMs, integer(100, 3600 * 1000)),
        },
        {},
        {},
        {}};
    return schema;
}

// What a task on the host's root (filesystem false) can be given: its
// bounding set cut and no_new_privs (the shim applies both with no root of
// its own). Every other key needs the task's own root and namespaces, and
// is refused there by name, even with its default value, rather than
// accepted and ignored (issue 32).
Result<void> onlyHostRootKeys(const Json& object, const std::string& prefix) {
    for (const auto& [key, value] : object.items())
        if (key != "filesystem" && key != "cap_drop" && key != "no_new_privs")
            return invalid(prefix + key +
                           " needs \"filesystem\": true (a task on the host's root takes only cap_drop and "
                           "no_new_privs)");
    return {};
}

// isolation also says that the spec has the object (else the node's
// default applies): a field of its own.
Field<TaskSpec> isolationField() {
    Field<TaskSpec> f;
    f.name = "isolation";
    f.read = [](const Json& v, TaskSpec& s, const std::string& at, Strictness how) -> Result<void> {
        auto iso = readObject(isolationSchema(), v, at + ".", how);
        if (!iso) return iso.error();
        if (how == Strictness::Strict && !iso->filesystem)
            if (auto r = onlyHostRootKeys(v, at + "."); !r) return r.error();
        s.isolation = std::move(*iso);
        s.isolationGiven = true;
        return {};
    };
    f.write = [](const TaskSpec& s, Json& object) {
        if (s.isolationGiven) object["isolation"] = writeObject(isolationSchema(), s.isolation);
    };
    return f;
}

const Schema<TaskSpec>& taskSchema() {
    static const Schema<TaskSpec> schema{
        {
            field("command", &TaskSpec::command, text(nulIn), Presence::Always),
            field("args", &TaskSpec::args, processWords(), Presence::Always),
            field("env", &TaskSpec::env, environment()),
            field("secret_args", &TaskSpec::secretArgs, boolean()),
            field("delegate", &TaskSpec::delegate, boolean()),
            field("cwd", &TaskSpec::cwd, text(absolute)),
            field("user", &TaskSpec::user, text()),
            field("group", &TaskSpec::group, text()),
            field("denied_uids", &TaskSpec::deniedUids, idRanges()),
            field("denied_gids", &TaskSpec::deniedGids, idRanges()),
            field("kill_signal", &TaskSpec::killSignal, signal()),
            field("kill_timeout_ms", &TaskSpec::killTimeoutMs, integer(0, 24 * 3600 * 1000)),
            field("logs", &TaskSpec::logs, boolean()),
            field("log_max_files", &TaskSpec::logMaxFiles, integerAs<int>(1, 1000)),
            field("log_max_file_size_mb", &TaskSpec::logMaxFileSizeMb, integerAs<int>(1, 100000)),
            field("log_journal", &TaskSpec::logJournal, boolean()),
            field("stdout_path", &TaskSpec::stdoutPath, text(absolute)),
            field("stderr_path", &TaskSpec::stderrPath, text(absolute)),
            field("resources", &TaskSpec::resources, object(resourcesSchema())),
            field("plugin", &TaskSpec::plugin, object(pluginSchema())),
            isolationField(),
            field("network_namespace", &TaskSpec::network,
                  oneOf<NetworkNamespace>({{"alloc", NetworkNamespace::Alloc}, {"host", NetworkNamespace::Host}})),
            field("ulimits", &TaskSpec::ulimits, ulimits()),
            field("oom_score_adj", &TaskSpec::oomScoreAdj, integerAs<int>(kOomScoreAdjMin, kOomScoreAdjMax)),
            field("devices", &TaskSpec::devices, objects(deviceSchema(), kMaxDevices)),
            field("dns", &TaskSpec::dns, object(dnsSchema())),
            field("hosts", &TaskSpec::hosts, object(hostsSchema())),
        },
        {
            [](const TaskSpec& s, const std::string&) -> Result<void> {
                if (s.command.empty()) return invalid("command is required");
                return {};
            },
            // The streamer copies to the journal what it collects (or, for
            // stdout_path/stderr_path, forwards there): with logs off it sees
            // nothing, and the copy would silently not happen.
            [](const TaskSpec& s, const std::string&) -> Result<void> {
                // (With a path, logs is false once parsed, as a record keeps it.)
                if (s.logJournal.value_or(false) && !s.logs && s.stdoutPath.empty() && s.stderrPath.empty())
                    return invalid("log_journal needs logs: the journal gets a copy of the collected output");
                return {};
            },
            // Two binds at one place: the second would hide the first.
            [](const TaskSpec& s, const std::string&) -> Result<void> {
                for (size_t i = 0; i < s.devices.size(); ++i)
                    for (size_t j = 0; j < i; ++j)
                        if (s.devices[i].seenAt() == s.devices[j].seenAt())
                            return invalid("devices[" + std::to_string(i) + "] and devices[" + std::to_string(j) +
                                           "] are both at " + s.devices[i].seenAt());
                return {};
            },
        },
        {},
        // Output that goes to the caller's files is not the streamer's to
        // keep (with log_journal it passes through the streamer on its
        // way there: the start procedure's choice, the node's default too).
        [](TaskSpec& s) {
            if (!s.stdoutPath.empty() || !s.stderrPath.empty()) s.logs = false;
        }};
    return schema;
}

}  // namespace

Result<TaskSpec> taskSpecFromJson(const Json& j, Strictness how) {
    if (!j.is_object()) return invalid("spec must be a JSON object");
    return readObject(taskSchema(), j, "", how);
}

Result<TaskSpec> parseTaskSpec(std::string_view text) {
    auto j = parseObject(text, "spec");
    if (!j) return j.error();
    return taskSpecFromJson(*j);
}

Json toJson(const TaskSpec& spec) {
    return writeObject(taskSchema(), spec);
}

std::string toText(const TaskSpec& spec) {
    return toJson(spec).dump();
}

Result<Resources> parseResources(std::string_view text) {
    auto j = parseJson(text, "resources");
    if (!j) return j.error();
    return readObject(resourcesSchema(), *j, "resources.");
}

Result<PluginSpec> parsePluginSpec(const Json& j) {
    return readObject(pluginSchema(), j, "plugin.");
}

Resources merged(const Resources& base, const Resources& change) {
    Resources out = base;
    const auto take = [](auto& into, const auto& from) {
        if (from) into = from;
    };
    take(out.memoryMb, change.memoryMb);
    take(out.memoryMaxMb, change.memoryMaxMb);
    take(out.cpuShares, change.cpuShares);
    take(out.cpuQuotaPercent, change.cpuQuotaPercent);
    take(out.pidsMax, change.pidsMax);
    take(out.cores, change.cores);
    if (!change.cpuset.empty()) out.cpuset = change.cpuset;
    take(out.ioWeight, change.ioWeight);
    for (auto [into, from] :
         {std::pair{&out.ioReadBps, &change.ioReadBps}, std::pair{&out.ioWriteBps, &change.ioWriteBps},
          std::pair{&out.ioReadIops, &change.ioReadIops}, std::pair{&out.ioWriteIops, &change.ioWriteIops}})
        if (!from->empty()) *into = *from;
    // A task that no longer oversubscribes loses its old hard limit.
    if (change.memoryMb && !change.memoryMaxMb) out.memoryMaxMb.reset();
    return out;
}

std::string TaskSpec::effectiveUser() const {
    if (!user.empty()) return user;
    return isolation.filesystem ? kDefaultIsolatedUser : kDefaultUser;
}

TaskSpec redacted(const TaskSpec& spec) {
    TaskSpec out = spec;
    for (auto& [key, value] : out.env) value = kRedactedValue;
    if (out.secretArgs)
        for (auto& a : out.args) a = kRedactedValue;
    return out;
}

}  // namespace taskscope::spec
