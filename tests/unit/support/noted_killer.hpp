#pragma once
// A ScopeKiller that kills nothing: it notes what it was asked and answers
// with `answer` at once (an error stands for a kill neither cgroup.kill
// nor systemd delivered).

#include <string>
#include <vector>

#include "common/result.hpp"
#include "scope/scope_killer.hpp"

namespace taskscope::test {

struct NotedKiller final : scope::ScopeKiller {
    std::vector<std::string> killed;     ///< killAll's units, in order
    std::vector<std::string> leftovers;  ///< killLeftovers' units, in order
    common::Result<void> answer;
    void killAll(const std::string& unit, const std::string&, Done done) override {
        killed.push_back(unit);
        done(answer);
    }
    void killLeftovers(const std::string& unit, const std::string&, Done done) override {
        leftovers.push_back(unit);
        done(answer);
    }
};

}  // namespace taskscope::test
