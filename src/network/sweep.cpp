#include "network/sweep.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "network/cni_exec.hpp"
#include "common/error_names.hpp"

namespace taskscope::network {

namespace {

// Chains CNI makes for one container: the bridge plugin's masquerade
// chain CNI-<hash>, portmap's CNI-DN-<hash> (and CNI-SN- of older ones).
bool perContainerChain(const std::string& chain) {
    static const std::regex re("^CNI-((DN|SN)-)?[0-9a-f]{16,}$");
    return std::regex_match(chain, re);
}

std::string ipOnly(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

}  // namespace

std::vector<std::string> splitSaveLine(const std::string& line) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        if (i >= line.size()) break;
        std::string tok;
        if (line[i] == '"') {
            for (++i; i < line.size() && line[i] != '"'; ++i) {
                if (line[i] == '\\' && i + 1 < line.size()) ++i;
                tok += line[i];
            }
            ++i;
        } else {
            while (i < line.size() && line[i] != ' ') tok += line[i++];
        }
        out.push_back(std::move(tok));
    }
    return out;
}

std::vector<IptablesCommand> iptablesSweep(const std::string& save, const std::string& containerId,
                                           const std::vector<std::string>& addresses) {
    struct Rule {
        std::string table;
        std::vector<std::string> args;  // "-A" CHAIN ...
    };
    std::vector<Rule> rules;
    std::string table;
    size_t start = 0;
    while (start < save.size()) {
        auto end = save.find('\n', start);
        if (end == std::string::npos) end = save.size();
        const auto line = save.substr(start, end - start);
        start = end + 1;
        if (!line.empty() && line[0] == '*') table = line.substr(1);
        else if (line.rfind("-A ", 0) == 0) rules.push_back({table, splitSaveLine(line)});
    }
    const std::string idMark = "id: \"" + containerId + "\"";
    std::set<std::string> hosts;
    for (const auto& a : addresses) hosts.insert(ipOnly(a));
    auto valueOf = [](const std::vector<std::string>& args, const std::string& opt) {
        for (size_t i = 0; i + 1 < args.size(); ++i)
            if (args[i] == opt) return args[i + 1];
        return std::string();
    };
    auto ours = [&](const Rule& r) {
        for (size_t i = 0; i + 1 < r.args.size(); ++i)
            if (r.args[i] == "--comment" && r.args[i + 1].find(idMark) != std::string::npos) return true;
        if (r.args[1].rfind("CNI-", 0) != 0 || hosts.empty()) return false;
        for (const char* opt : {"-s", "-d"})
            if (auto v = valueOf(r.args, opt); !v.empty() && hosts.count(ipOnly(v))) return true;
        return false;
    };
    // Per-container chains: the targets of our rules, and chains holding one.
    std::set<std::pair<std::string, std::string>> chains;
    for (const auto& r : rules) {
        if (!ours(r)) continue;
        if (auto j = valueOf(r.args, "-j"); perContainerChain(j)) chains.insert({r.table, j});
        if (perContainerChain(r.args[1])) chains.insert({r.table, r.args[1]});
    }
    std::vector<IptablesCommand> out;
    for (const auto& r : rules) {
        if (chains.count({r.table, r.args[1]})) continue;  // goes with its chain's flush
        if (!ours(r) && !chains.count({r.table, valueOf(r.args, "-j")})) continue;
        IptablesCommand c = {"-t", r.table, "-D"};
        c.insert(c.end(), r.args.begin() + 1, r.args.end());
        out.push_back(std::move(c));
    }
    for (const auto& [t, chain] : chains) out.push_back({"-t", t, "-F", chain});
    for (const auto& [t, chain] : chains) out.push_back({"-t", t, "-X", chain});
    return out;
}

namespace {

// Calls found(name, path) for every reservation file of containerId in
// dir/<network>/; ENOENT of the directory is no reservation.
template <typename Found>
common::Result<void> forEachReservation(const std::string& ipamDir, const std::string& network,
                                        const std::string& containerId, Found found) {
    const auto dir = ipamDir + "/" + network;
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        if (errno == ENOENT) return {};
        return common::errnoError("open " + dir, errno);
    }
    while (auto* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == ".." || name == "lock" || name.rfind("last_reserved_ip", 0) == 0) continue;
        auto content = common::readFile(dir + "/" + name);
        if (!content) continue;
        // host-local writes "<container id>\r\n<ifname>" (older: the id alone).
        const auto first = content->substr(0, content->find_first_of("\r\n"));
        if (common::trim(first) == containerId) found(name, dir + "/" + name);
    }
    ::closedir(d);
    return {};
}

}  // namespace

common::Result<int> sweepIpam(const std::string& ipamDir, const std::string& network, const std::string& containerId) {
    int removed = 0;
    auto r = forEachReservation(ipamDir, network, containerId, [&](const std::string&, const std::string& path) {
        if (::unlink(path.c_str()) == 0) ++removed;
    });
    if (!r) return r.error();
    return removed;
}

std::vector<std::string> reservedAddresses(const std::string& ipamDir, const std::string& network,
                                           const std::string& containerId) {
    std::vector<std::string> out;
    (void)forEachReservation(ipamDir, network, containerId,
                             [&](const std::string& name, const std::string&) { out.push_back(name); });
    return out;
}

namespace {

const std::vector<std::string> kToolEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};

// The first of `candidates` that is executable, or "".
std::string installed(std::initializer_list<const char*> candidates) {
    for (const char* bin : candidates)
        if (::access(bin, X_OK) == 0) return bin;
    return {};
}

}  // namespace

common::Result<int> sweepIptables(const std::string& containerId, const std::vector<std::string>& addresses) {
    // IPv4 and IPv6 alike: a dual-stack range makes the bridge plugin
    // masquerade (and portmap map) through ip6tables as well.
    struct Family {
        std::initializer_list<const char*> save, tool;
    };
    const Family families[] = {
        {{"/usr/sbin/iptables-save", "/sbin/iptables-save"}, {"/usr/sbin/iptables", "/sbin/iptables"}},
        {{"/usr/sbin/ip6tables-save", "/sbin/ip6tables-save"}, {"/usr/sbin/ip6tables", "/sbin/ip6tables"}},
    };
    int done = 0;
    for (const auto& f : families) {
        const auto save = installed(f.save), tool = installed(f.tool);
        if (save.empty() || tool.empty()) continue;
        auto ran = runProgram({save}, kToolEnv, "", std::chrono::seconds(30));
        if (!ran) return ran.error();
        if (ran->status != 0) return common::makeError(common::errors::kInternal, save + " failed: " + ran->err);
        for (auto& c : iptablesSweep(ran->out, containerId, addresses)) {
            c.insert(c.begin(), {tool, "-w"});
            if (auto r = runProgram(c, kToolEnv, "", std::chrono::seconds(30)); r && r->status == 0) ++done;
        }
    }
    return done;
}

std::vector<NftCommand> nftSweep(const std::string& jsonRuleset, const std::string& containerId) {
    using nlohmann::json;
    std::vector<NftCommand> out;
    const json j = json::parse(jsonRuleset, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("nftables") || !j["nftables"].is_array()) return out;
    // iptables' comment, as iptables-nft stores it: name: "<net>" id: "<id>";
    // the plugins' nftables backend: "<hash>, net: <net>, if: <if>, id: <id>".
    const std::string idMark = "id: \"" + containerId + "\"", nativeEnd = ", id: " + containerId;
    auto carriesId = [&](const std::string& c) {
        return c.find(idMark) != std::string::npos ||
               (c.size() >= nativeEnd.size() && c.compare(c.size() - nativeEnd.size(), nativeEnd.size(), nativeEnd) == 0);
    };
    for (const auto& item : j["nftables"]) {
        if (!item.is_object() || !item.contains("rule") || !item["rule"].is_object()) continue;
        const auto& r = item["rule"];
        const auto str = [&](const char* key) {
            const auto it = r.find(key);
            return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        const auto comment = str("comment");
        const auto handle = r.find("handle");
        if (!carriesId(comment) || handle == r.end() || !handle->is_number_integer()) continue;
        out.push_back({"delete", "rule", str("family"), str("table"), str("chain"), "handle",
                       std::to_string(handle->get<int64_t>())});
    }
    return out;
}

common::Result<int> sweepNft(const std::string& containerId) {
    const auto nft = installed({"/usr/sbin/nft", "/sbin/nft"});
    if (nft.empty()) return 0;
    auto ran = runProgram({nft, "-j", "list", "ruleset"}, kToolEnv, "", std::chrono::seconds(30));
    if (!ran) return ran.error();
    if (ran->status != 0) return common::makeError(common::errors::kInternal, "nft list ruleset failed: " + ran->err);
    int done = 0;
    for (auto& c : nftSweep(ran->out, containerId)) {
        c.insert(c.begin(), nft);
        if (auto r = runProgram(c, kToolEnv, "", std::chrono::seconds(30)); r && r->status == 0) ++done;
    }
    return done;
}

}  // namespace taskscope::network
