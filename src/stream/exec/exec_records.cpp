#include "stream/exec/exec_records.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/fd_store.hpp"
#include "common/files.hpp"
#include "spec/json_text.hpp"

namespace taskscope::stream::exec {

namespace {

constexpr const char* kStatusSuffix = ".status";
constexpr const char* kTerminalSuffix = ".pty";
constexpr const char* kHoldSuffix = ".hold";
constexpr const char* kPrefix = "exec.";
constexpr const char* kNextFile = "next-session";

bool parseNumber(const std::string& text, uint64_t& out) {
    if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) return false;
    char* end = nullptr;
    out = std::strtoull(text.c_str(), &end, 10);
    return *end == '\0' && out > 0;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

DescriptorStore& systemdDescriptorStore() {
    struct Systemd final : DescriptorStore {
        common::Result<void> store(int fd, const std::string& name) override { return common::storeFd(fd, name); }
        void drop(const std::string& name) override { common::unstoreFd(name); }
    };
    static Systemd store;
    return store;
}

std::string statusFdName(uint64_t session) { return kPrefix + std::to_string(session) + kStatusSuffix; }
std::string statusHoldFdName(uint64_t session) { return kPrefix + std::to_string(session) + kHoldSuffix; }
std::string terminalFdName(uint64_t session) { return kPrefix + std::to_string(session) + kTerminalSuffix; }

bool parseExecFdName(const std::string& name, uint64_t& session) {
    if (name.rfind(kPrefix, 0) != 0) return false;
    const std::string rest = name.substr(std::char_traits<char>::length(kPrefix));
    for (const std::string suffix : {kStatusSuffix, kHoldSuffix, kTerminalSuffix})
        if (endsWith(rest, suffix)) return parseNumber(rest.substr(0, rest.size() - suffix.size()), session);
    return false;
}

common::Result<void> SessionRecords::open() {
    if (dir_.empty()) return {};
    return common::makePrivateDir(dir_);
}

std::string SessionRecords::path(uint64_t session) const { return dir_ + "/" + std::to_string(session) + ".json"; }

common::Result<void> SessionRecords::save(const SessionRecord& r) {
    if (dir_.empty()) return {};
    const nlohmann::json j = {{"session", r.session}, {"alloc_id", r.allocId}, {"task", r.task},
                              {"owner", r.owner},     {"tty", r.tty},          {"keeper", r.keeper},
                              {"leader", r.leader},   {"keeper_start", r.keeperStart}};
    // A session dies with the machine: its record must outlive only the streamer.
    return common::writeFileAtomic(path(r.session), j.dump() + "\n", common::kPrivateFileMode,
                                   common::Durability::ProcessCrash);
}

void SessionRecords::remove(uint64_t session) {
    if (!dir_.empty()) (void)::unlink(path(session).c_str());
}

std::vector<SessionRecord> SessionRecords::load() {
    std::vector<SessionRecord> out;
    if (dir_.empty()) return out;
    DIR* d = ::opendir(dir_.c_str());
    if (!d) return out;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
    ::closedir(d);
    for (const auto& name : names) {
        uint64_t id = 0;
        if (!endsWith(name, ".json") || !parseNumber(name.substr(0, name.size() - 5), id)) continue;
        const auto file = dir_ + "/" + name;
        auto text = common::readFile(file);
        try {
            if (!text) throw std::runtime_error(text.error().message);
            const auto j = nlohmann::json::parse(*text);
            SessionRecord r;
            // Whole numbers only: nlohmann's get<>() turns 1.2e46 into an
            // integer with undefined behaviour (fuzz/exec_records found it).
            r.session = spec::numberAt<uint64_t>(j, "session");
            r.allocId = j.at("alloc_id").get<std::string>();
            r.task = j.at("task").get<std::string>();
            r.owner = j.at("owner").get<std::string>();
            r.tty = j.at("tty").get<bool>();
            r.keeper = spec::numberAt<pid_t>(j, "keeper");
            r.leader = spec::numberAt<pid_t>(j, "leader");
            r.keeperStart = spec::numberOr(j, "keeper_start", uint64_t{0});
            if (r.session != id || r.keeper <= 0 || r.leader <= 0) throw std::runtime_error("inconsistent fields");
            out.push_back(std::move(r));
        } catch (const std::exception& e) {
            spdlog::warn("Dropping unreadable exec session record {}: {}", file, e.what());
            (void)::unlink(file.c_str());
        }
    }
    return out;
}

uint64_t SessionRecords::firstUnused() const {
    if (dir_.empty()) return 1;
    auto text = common::readFile(dir_ + "/" + kNextFile);
    uint64_t n = 0;
    if (text && parseNumber(std::string(common::trim(*text)), n)) return n;
    return 1;
}

common::Result<void> SessionRecords::reserveBelow(uint64_t upTo) {
    if (dir_.empty()) return {};
    return common::writeFileAtomic(dir_ + "/" + kNextFile, std::to_string(upTo) + "\n", common::kPrivateFileMode,
                                   common::Durability::ProcessCrash);
}

}  // namespace taskscope::stream::exec
