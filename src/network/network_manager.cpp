#include "network/network_manager.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "network/cni_exec.hpp"
#include "network/netns.hpp"
#include "network/sweep.hpp"
#include "common/error_names.hpp"

namespace taskscope::network {

namespace {

using common::makeError;
using common::Result;
using nlohmann::json;

constexpr const char* kRecordSuffix = ".json";

// systemd-udevd gives a new veth a persistent MAC address (the default
// MACAddressPolicy) after the bridge plugin reported the one it was made
// with, so the host interfaces' MACs in a cached result go stale and the
// bridge plugin's CHECK fails on them. The host side is read again before
// a CHECK; the container side is the namespace's and keeps its address.
json withLiveHostMacs(json result) {
    if (!result.is_object() || !result.contains("interfaces") || !result["interfaces"].is_array()) return result;
    for (auto& itf : result["interfaces"]) {
        if (!itf.is_object() || itf.contains("sandbox") || !itf.contains("name") || !itf["name"].is_string()) continue;
        const auto name = itf["name"].get<std::string>();
        if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') continue;
        if (auto mac = common::readFile("/sys/class/net/" + name + "/address"))
            itf["mac"] = std::string(common::trim(*mac));
    }
    return result;
}

}  // namespace

json recordToJson(const NetworkRecord& r) {
    return json{{"alloc_id", r.allocId},   {"spec", r.specJson},     {"phase", r.phase},
                {"netns", r.netnsPath},    {"conflist", r.conflist}, {"result", r.result},
                {"addresses", r.addresses}};
}

Result<NetworkRecord> recordFromJson(const std::string& text) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return makeError(common::errors::kInternal, "network record is not a JSON object");
    try {
        NetworkRecord r;
        r.allocId = j.at("alloc_id").get<std::string>();
        r.specJson = j.at("spec").get<std::string>();
        r.phase = j.at("phase").get<std::string>();
        r.netnsPath = j.at("netns").get<std::string>();
        r.conflist = j.value("conflist", json());
        r.result = j.value("result", json());
        r.addresses = j.value("addresses", std::vector<std::string>());
        auto spec = parseNetworkSpec(r.specJson);
        if (!spec) return spec.error().context("network record of " + r.allocId);
        r.spec = std::move(*spec);
        return r;
    } catch (const json::exception& e) {
        return makeError(common::errors::kInternal, std::string("network record: ") + e.what());
    }
}

NetworkManager::NetworkManager(NodeNetworkConfig node, std::string stateDir, common::EventLoop& loop)
    : node_(std::move(node)), dir_(std::move(stateDir) + "/networks"), loop_(loop), worker_(loop, kMaxJobs) {}

NetworkManager::~NetworkManager() = default;

std::string NetworkManager::recordPath(const std::string& allocId) const { return dir_ + "/" + allocId + kRecordSuffix; }

Result<void> NetworkManager::save(const NetworkRecord& record) const {
    if (auto r = common::makePrivateDir(dir_); !r) return r;
    return common::writeFileAtomic(recordPath(record.allocId), recordToJson(record).dump());
}

void NetworkManager::offLoop(Work work, std::function<void(Result<NetworkRecord>)> done) {
    // The work owns nothing of the manager: it captured copies.
    worker_.submit([work = std::move(work), done = std::move(done)]() -> std::function<void()> {
        auto result = std::make_shared<Result<NetworkRecord>>(work());
        return [done, result] { done(std::move(*result)); };
    });
}

Result<void> NetworkManager::checkPorts(const NetworkSpec& spec) const {
    for (const auto& p : spec.ports) {
        for (const auto& [alloc, other] : networks_)
            for (const auto& q : other.spec.ports)
                if (q.hostPort == p.hostPort && q.protocol == p.protocol)
                    return makeError(common::errors::kPortInUse, "host port " + std::to_string(p.hostPort) + "/" + p.protocol +
                                                      " is mapped by allocation " + alloc);
        // A port some process of the host holds: binding it tells, and
        // SO_REUSEADDR keeps a closed connection's TIME_WAIT from counting.
        const bool tcp = p.protocol == "tcp";
        common::UniqueFd s(::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0));
        if (!s) return common::errnoError("socket", errno);
        const int one = 1;
        ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(p.hostPort);
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 && errno == EADDRINUSE)
            return makeError(common::errors::kPortInUse, "host port " + std::to_string(p.hostPort) + "/" + p.protocol +
                                              " is bound by a process of the host");
    }
    return {};
}

Result<NetworkRecord> NetworkManager::build(NetworkRecord record) const {
    // The intent is on disk before anything exists: a crash from here on
    // leaves a record that the next start undoes.
    record.phase = "intent";
    if (auto r = save(record); !r) return r.error().context("record network");
    if (auto r = createNetns(node_.netnsDir, record.allocId); !r) {
        ::unlink(recordPath(record.allocId).c_str());
        return r.error();
    }
    if (record.spec.mode == Mode::Bridge) {
        CniCall call{"ADD", record.allocId, record.netnsPath, "eth0", node_.cniPath,
                     std::chrono::milliseconds(node_.pluginTimeoutMs)};
        auto added = runChain(call, record.conflist, record.spec.ports);
        if (!added) {
            (void)teardown(record);
            return added.error();
        }
        record.result = *added;
        if (auto parsed = parseCniResult(added->dump())) record.addresses = parsed->addresses;
    }
    record.phase = "ready";
    if (auto r = save(record); !r) {
        (void)teardown(record);
        return r.error().context("record network");
    }
    return record;
}

Result<void> NetworkManager::teardown(const NetworkRecord& record) const {
    std::optional<common::Error> failed;
    if (record.spec.mode == Mode::Bridge && !record.conflist.is_null()) {
        const std::string network = record.conflist.value("name", node_.networkName);
        auto addresses = record.addresses;
        if (addresses.empty()) addresses = reservedAddresses(node_.ipamDir, network, record.allocId);
        CniCall call{"DEL", record.allocId, record.netnsPath, "eth0", node_.cniPath,
                     std::chrono::milliseconds(node_.pluginTimeoutMs)};
        if (auto r = runChain(call, record.conflist, record.spec.ports, record.result); !r) failed = r.error();
        // Whatever DEL left: the reservation, rules and chains by the id.
        if (auto r = sweepIpam(node_.ipamDir, network, record.allocId); !r && !failed) failed = r.error();
        if (auto r = sweepIptables(record.allocId, addresses); !r && !failed) failed = r.error();
        // After iptables': what is left carrying the id is nft-native.
        if (auto r = sweepNft(record.allocId); !r && !failed) failed = r.error();
    }
    // The namespace goes last; its end takes the container's veth and, with
    // it, the host's end of the pair.
    if (auto r = removeNetns(record.netnsPath); !r) return r.error();
    ::unlink(recordPath(record.allocId).c_str());
    if (failed) return *failed;
    return {};
}

void NetworkManager::create(const std::string& allocId, const std::string& specJson, Done done) {
    if (auto r = checkAllocId(allocId); !r) return done(r.error());
    auto spec = parseNetworkSpec(specJson);
    if (!spec) return done(spec.error());
    if (networks_.count(allocId))
        return done(makeError(common::errors::kNetworkExists, "allocation " + allocId + " has a network already"));
    if (auto r = checkPorts(*spec); !r) return done(r.error());

    NetworkRecord record;
    record.allocId = allocId;
    record.specJson = specJson.empty() ? "{}" : specJson;
    record.netnsPath = node_.netnsDir + "/" + allocId;
    if (spec->mode == Mode::Bridge) {
        if (spec->conflist) {
            record.conflist = *spec->conflist;
        } else if (!node_.conflistPath.empty()) {
            auto text = common::readFile(node_.conflistPath);
            if (!text) return done(text.error().context("read node conflist"));
            record.conflist = json::parse(*text, nullptr, false);
            if (record.conflist.is_discarded() || !record.conflist.contains("plugins"))
                return done(makeError(common::errors::kInternal, "node conflist " + node_.conflistPath + " is not a conflist"));
        } else {
            record.conflist = defaultConflist(node_);
        }
    }
    record.spec = std::move(*spec);
    // In the table from now on: a second create, a port clash and a
    // destroy see it while it is being made.
    networks_[allocId] = record;
    busy_.insert(allocId);
    offLoop([this, record] { return build(record); },
            [this, allocId, done = std::move(done)](Result<NetworkRecord> built) {
                busy_.erase(allocId);
                if (!built) {
                    networks_.erase(allocId);
                    return done(built.error());
                }
                networks_[allocId] = *built;
                if (events_) events_->networkCreated(allocId, built->netnsPath);
                done({});
            });
}

void NetworkManager::destroy(const std::string& allocId, Done done) {
    auto it = networks_.find(allocId);
    if (it == networks_.end()) return done(makeError(common::errors::kNoSuchNetwork, "allocation " + allocId + " has no network"));
    if (busy_.count(allocId))
        return done(makeError(common::errors::kNetworkInUse, "the network of " + allocId + " is being created or destroyed"));
    if (inUse_ && inUse_(allocId))
        return done(makeError(common::errors::kNetworkInUse, "tasks of allocation " + allocId + " still run in its network"));
    busy_.insert(allocId);
    it->second.phase = "deleting";
    offLoop(
        [this, record = it->second]() -> Result<NetworkRecord> {
            // Recorded first: a crash during DEL is finished by the next start.
            (void)save(record);
            if (auto r = teardown(record); !r) return r.error();
            return record;
        },
        [this, allocId, done = std::move(done)](Result<NetworkRecord> r) {
            busy_.erase(allocId);
            // DEL's failure is logged; the sweep removed what it left, so the
            // network is gone either way.
            if (!r && warn_) warn_("Destroy of the network of " + allocId + ": " + r.error().message + ", cleaned up");
            networks_.erase(allocId);
            if (events_) events_->networkDestroyed(allocId);
            done({});
        });
}

void NetworkManager::recover() {
    DIR* d = ::opendir(dir_.c_str());
    if (!d) return;
    std::vector<std::string> files;
    while (auto* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name.size() > 5 && name.compare(name.size() - 5, 5, kRecordSuffix) == 0) files.push_back(name);
    }
    ::closedir(d);
    auto warn = [&](const std::string& m) {
        if (warn_) warn_(m);
    };
    for (const auto& f : files) {
        auto text = common::readFile(dir_ + "/" + f);
        auto record = text ? recordFromJson(*text) : Result<NetworkRecord>(text.error());
        if (!record) {
            warn("Unreadable network record " + f + ": " + record.error().message + ", ignoring");
            continue;
        }
        if (record->phase != "ready") {
            // Made or removed when the manager died: undo it all (DEL with
            // the same container id, the sweep, the namespace).
            if (auto r = teardown(*record); !r)
                warn("Cleanup of the interrupted network of " + record->allocId + ": " + r.error().message);
            warn("Removed the network of " + record->allocId + " left " + (record->phase == "intent" ? "half made" : "half removed") +
                 " by a previous manager");
            continue;
        }
        Result<void> checked = {};
        if (!isNetns(record->netnsPath)) {
            checked = makeError(common::errors::kInternal, "namespace " + record->netnsPath + " is gone");
        } else if (record->spec.mode == Mode::Bridge) {
            CniCall call{"CHECK", record->allocId, record->netnsPath, "eth0", node_.cniPath,
                         std::chrono::milliseconds(node_.pluginTimeoutMs)};
            if (auto r = runChain(call, record->conflist, record->spec.ports, withLiveHostMacs(record->result)); !r)
                checked = r.error();
        }
        if (checked) {
            networks_[record->allocId] = *record;
            continue;
        }
        warn("CHECK of the network of " + record->allocId + " failed: " + checked.error().message + "; making it again");
        (void)teardown(*record);
        auto again = build(*record);
        if (!again) {
            warn("Failed to make the network of " + record->allocId + " again: " + again.error().message);
            (void)teardown(*record);
            continue;
        }
        networks_[record->allocId] = *again;
    }
}

Result<std::string> NetworkManager::get(const std::string& allocId) const {
    auto it = networks_.find(allocId);
    if (it == networks_.end()) return makeError(common::errors::kNoSuchNetwork, "allocation " + allocId + " has no network");
    const auto& r = it->second;
    json ports = json::array();
    for (const auto& p : r.spec.ports)
        ports.push_back({{"host_port", p.hostPort}, {"container_port", p.containerPort}, {"protocol", p.protocol}});
    const std::string state = busy_.count(allocId) ? (r.phase == "deleting" ? "destroying" : "creating") : "ready";
    return json{{"alloc_id", r.allocId},   {"mode", toString(r.spec.mode)}, {"netns", r.netnsPath},
                {"state", state},          {"addresses", r.addresses},      {"ports", ports},
                {"interface", r.spec.mode == Mode::Bridge ? "eth0" : ""}}
        .dump();
}

std::vector<std::tuple<std::string, std::string, std::string>> NetworkManager::list() const {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const auto& [alloc, r] : networks_) out.emplace_back(alloc, toString(r.spec.mode), r.netnsPath);
    return out;
}

Result<std::string> NetworkManager::netnsPath(const std::string& allocId) const {
    auto it = networks_.find(allocId);
    if (it == networks_.end() || busy_.count(allocId) || it->second.phase != "ready")
        return makeError(common::errors::kNoSuchNetwork, "allocation " + allocId + " has no ready network");
    return it->second.netnsPath;
}

}  // namespace taskscope::network
