#pragma once
// How the node's parts report what they could not do and left as it is
// (systemd's ", ignoring"): they never log; whoever holds them (the task
// registry, which passes it on as a TaskNotes note) decides who hears it.

#include <functional>
#include <string>

#include "common/result.hpp"

namespace taskscope::manager {

/// `what` failed because of `why`; `then` says what follows from it (may be
/// empty). `detail`: for debugging only (an expected race, handled).
struct NotDone {
    std::function<void(bool detail, const std::string& what, const common::Error& why, const std::string& then)> say;
    void operator()(bool detail, const std::string& what, const common::Error& why,
                    const std::string& then = {}) const {
        if (say) say(detail, what, why, then);
    }
};

}  // namespace taskscope::manager
