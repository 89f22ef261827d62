// The task-config keys for what a node gives a task, read through their table
// (node_task_config.hpp).
#include "nomad/node_task_config.hpp"

#include <cctype>
#include <charconv>
#include <functional>
#include <limits>

#include "nomad/cty_msgpack.hpp"

namespace taskscope::nomad {

namespace {

using common::Result;
using nlohmann::json;

using hclblock::invalid;

using Reader = std::function<Result<void>(const json& value, spec::TaskSpec& out, const std::string& at)>;

Result<void> readUlimit(const json& v, spec::TaskSpec& out, const std::string& at) {
    if (!v.is_object()) return invalid(at + " must be a map of strings (nofile = \"65536:65536\")");
    // A null entry is one cty left unset: nothing to set.
    json set = json::object();
    for (const auto& [name, text] : v.items())
        if (!text.is_null()) set[name] = text;
    auto limits = spec::readUlimits(set, at);
    if (!limits) return hclblock::asConfigError(limits.error());
    for (const auto& [name, limit] : *limits) out.ulimits[name] = limit;
    return {};
}

Result<void> oomScoreAdj(const json& v, spec::TaskSpec& out, const std::string& at) {
    auto n = ctyInteger(v, at.c_str());
    if (!n) return n.error();
    // raw_exec refuses a negative score (drivers/rawexec/driver.go,
    // TaskConfig.Validate): a task would be spared before the node's own
    // services when memory runs out.
    if (*n < 0) return invalid(at + " must not be negative");
    if (*n > spec::kOomScoreAdjMax) return invalid(at + " must be at most " + std::to_string(spec::kOomScoreAdjMax));
    out.oomScoreAdj = static_cast<int>(*n);
    return {};
}

Result<void> ioWeight(const json& v, spec::TaskSpec& out, const std::string& at) {
    auto n = ctyInteger(v, at.c_str());
    if (!n) return n.error();
    if (*n < static_cast<int64_t>(spec::kIoWeightMin) || *n > static_cast<int64_t>(spec::kIoWeightMax))
        return invalid(at + " is " + std::to_string(*n) + ", outside " + std::to_string(spec::kIoWeightMin) + ".." +
                       std::to_string(spec::kIoWeightMax) + " (systemd's IOWeight=)");
    out.resources.ioWeight = static_cast<uint64_t>(*n);
    return {};
}

// A rate: a number, or for bytes also docker's size text ("10M").
Result<uint64_t> rateOf(const json& rate, bool bytes, const std::string& at) {
    if (bytes && rate.is_string()) {
        auto n = parseByteRate(rate.get<std::string>());
        if (!n) return invalid(at + ": " + n.error().message);
        if (*n == 0) return invalid(at + " must be positive");
        // The spec's bound (a number is an int64 already, ctyInteger's).
        if (*n > spec::kMaxIoRate)
            return invalid(at + ": \"" + rate.get<std::string>() + "\" is more than " +
                           std::to_string(spec::kMaxIoRate) + " bytes per second");
        return n;
    }
    auto n = ctyInteger(rate, at.c_str());
    if (!n) return n.error();
    if (*n < 1) return invalid(at + " must be positive");
    return static_cast<uint64_t>(*n);
}

// A map of device paths to rates, into one of the spec's IO maps.
Reader ioLimits(spec::IoDeviceLimits spec::Resources::*member, bool bytes) {
    return [member, bytes](const json& v, spec::TaskSpec& out, const std::string& at) -> Result<void> {
        if (!v.is_object())
            return invalid(at + " must be a map of device paths to " +
                           (bytes ? std::string("rates (\"/dev/sda\" = \"10M\")") : std::string("numbers")));
        // Into a copy, set once all of it reads: a refused key changes nothing.
        auto limits = out.resources.*member;
        for (const auto& [path, rate] : v.items()) {
            if (rate.is_null()) continue;
            if (!spec::isDevicePath(path)) return invalid(at + ": \"" + path + "\" must be a block device under /dev/");
            auto n = rateOf(rate, bytes, at + "[\"" + path + "\"]");
            if (!n) return n.error();
            limits[path] = *n;
        }
        if (limits.size() > spec::kMaxIoDevices)
            return invalid(at + " names " + std::to_string(limits.size()) + " devices, more than " +
                           std::to_string(spec::kMaxIoDevices));
        out.resources.*member = std::move(limits);
        return {};
    };
}

}  // namespace

const std::vector<hclblock::Key<spec::TaskSpec>>& nodeTaskKeys() {
    static const std::vector<hclblock::Key<spec::TaskSpec>> k = {
        // docker's --ulimit: nofile = "65536:65536".
        {"ulimit", "map(string)", readUlimit},
        // 0..1000, raw_exec's rule (not negative).
        {"oom_score_adj", "number", oomScoreAdj},
        // systemd's IOWeight=, 1..10000.
        {"io_weight", "number", ioWeight},
        // docker's --device-read-bps: "/dev/sda" = "10M"; and its write twin.
        {"device_read_bps", "map(string)", ioLimits(&spec::Resources::ioReadBps, true)},
        {"device_write_bps", "map(string)", ioLimits(&spec::Resources::ioWriteBps, true)},
        // docker's --device-read-iops: "/dev/sda" = 100; and its write twin.
        {"device_read_iops", "map(number)", ioLimits(&spec::Resources::ioReadIops, false)},
        {"device_write_iops", "map(number)", ioLimits(&spec::Resources::ioWriteIops, false)},
    };
    return k;
}

bool isNodeTaskKey(const std::string& key) {
    return hclblock::find(nodeTaskKeys(), key) != nullptr;
}

Result<void> addNodeTaskKey(const std::string& key, const json& value, spec::TaskSpec& out) {
    return hclblock::readKey(nodeTaskKeys(), key, value, out, "config.", "unknown attribute");
}

Result<uint64_t> parseByteRate(const std::string& text) {
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    uint64_t n = 0;
    if (digits == 0 || std::from_chars(text.data(), text.data() + digits, n).ec != std::errc())
        return invalid("\"" + text + "\" is not a size (a number, optionally with k, m, g or t)");
    std::string unit;
    for (char c : text.substr(digits)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (unit.size() == 2 && unit[1] == 'b') unit.pop_back();
    const std::string units = "kmgt";
    uint64_t scale = 1;
    if (!unit.empty()) {
        const auto at = units.find(unit);
        if (unit.size() != 1 || at == std::string::npos)
            return invalid("\"" + text + "\" has an unknown unit (k, m, g or t, optionally with b)");
        for (size_t i = 0; i <= at; ++i) scale *= 1024;
    }
    if (n > std::numeric_limits<uint64_t>::max() / scale) return invalid("\"" + text + "\" is too large");
    return n * scale;
}

}  // namespace taskscope::nomad
