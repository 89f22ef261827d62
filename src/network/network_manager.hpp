#pragma once
// Allocation networks: one network namespace per allocation, empty (mode
// none) or wired to the node's bridge by the CNI chain (mode bridge),
// recorded on disk so that a restart re-checks them and finishes or undoes
// whatever a crash interrupted. Plugins and namespace helpers run on a
// Worker (common/worker.hpp); their outcome comes back through the event
// loop, so the manager serves other calls meanwhile.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/worker.hpp"
#include "network/cni_config.hpp"
#include "network/network_spec.hpp"

namespace taskscope::network {

/// What the outside (the bus) hears of networks.
class NetworkEvents {
public:
    virtual ~NetworkEvents() = default;
    virtual void networkCreated(const std::string& allocId, const std::string& netnsPath) = 0;
    virtual void networkDestroyed(const std::string& allocId) = 0;
};

/// One allocation's network, as kept in memory and on disk.
struct NetworkRecord {
    std::string allocId;
    std::string specJson;
    NetworkSpec spec;
    /// "intent" (being made: ADD may have run), "ready", "deleting".
    std::string phase = "intent";
    std::string netnsPath;
    nlohmann::json conflist;  ///< the chain ADD ran (DEL and CHECK run the same)
    nlohmann::json result;    ///< the chain's final ADD result (bridge)
    std::vector<std::string> addresses;
};

/// The record's file content, and back (pure, for tests).
nlohmann::json recordToJson(const NetworkRecord& r);
common::Result<NetworkRecord> recordFromJson(const std::string& text);

class NetworkManager {
public:
    using Done = std::function<void(common::Result<void>)>;
    using Log = std::function<void(const std::string&)>;

    /// Records live in stateDir/networks, one 0600 file per allocation.
    NetworkManager(NodeNetworkConfig node, std::string stateDir, common::EventLoop& loop);
    ~NetworkManager();
    NetworkManager(const NetworkManager&) = delete;
    NetworkManager& operator=(const NetworkManager&) = delete;

    /// Tells whether tasks of an allocation run (destroy is refused then).
    void setInUse(std::function<bool(const std::string& allocId)> inUse) { inUse_ = std::move(inUse); }
    /// Where warnings go (a DEL that failed but was cleaned up anyway).
    void setLog(Log warn) { warn_ = std::move(warn); }
    void attach(NetworkEvents& events) { events_ = &events; }

    /// At start, before publishing (blocking): every ready network gets
    /// CHECK, and is made again once when that fails; every intent or
    /// deletion a crash interrupted is undone.
    void recover();

    void create(const std::string& allocId, const std::string& specJson, Done done);
    void destroy(const std::string& allocId, Done done);

    /// GetNetwork's JSON (NoSuchNetwork).
    common::Result<std::string> get(const std::string& allocId) const;
    /// (alloc_id, mode, netns path) of every network.
    std::vector<std::tuple<std::string, std::string, std::string>> list() const;
    /// The namespace a task of the allocation joins: NoSuchNetwork unless
    /// the allocation's network is ready.
    common::Result<std::string> netnsPath(const std::string& allocId) const;

private:
    using Work = std::function<common::Result<NetworkRecord>()>;
    void offLoop(Work work, std::function<void(common::Result<NetworkRecord>)> done);
    common::Result<void> checkPorts(const NetworkSpec& spec) const;
    std::string recordPath(const std::string& allocId) const;

    // Blocking steps, run on workers (they touch no member but constants).
    common::Result<NetworkRecord> build(NetworkRecord record) const;
    common::Result<void> teardown(const NetworkRecord& record) const;
    common::Result<void> save(const NetworkRecord& record) const;

    NodeNetworkConfig node_;
    std::string dir_;
    common::EventLoop& loop_;
    NetworkEvents* events_ = nullptr;
    std::function<bool(const std::string&)> inUse_;
    Log warn_;
    std::map<std::string, NetworkRecord> networks_;
    std::set<std::string> busy_;  ///< an operation is under way
    /// Networks of different allocations are made and torn down at once,
    /// up to this many (one allocation's operations wait for each other).
    static constexpr size_t kMaxJobs = 16;
    /// Last: its threads stop before what their results would touch goes.
    common::Worker worker_;
};

}  // namespace taskscope::network
