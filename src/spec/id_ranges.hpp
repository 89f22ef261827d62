#pragma once
// Ranges of user or group IDs in Nomad's exec syntax ("0,10-20"), as the
// exec and raw_exec drivers' denied_host_uids / denied_host_gids take
// them: comma-separated single IDs and low-high spans, each bound a
// decimal 0..2^32-1 (Nomad's drivers/shared/validators validateBounds,
// parsed with client/lib/idset Parse). A task spec carries them as
// `denied_uids` / `denied_gids`; the manager checks them against the
// resolved identity (manager/launch/task_resolve.hpp). Pure.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace taskscope::spec {

class IdRanges {
public:
    /// Parses the text; "" is no range. InvalidSpec naming `what` and the
    /// piece that does not parse, or a span whose low bound is above its
    /// high one. Stricter than Nomad where Nomad lets a piece through
    /// that idset.Parse then ignores ("1-2-3", " 5"): such a piece would
    /// deny nothing, which a deny list must never do silently.
    static common::Result<IdRanges> parse(const std::string& text, const std::string& what);

    bool contains(uint32_t id) const;
    bool empty() const { return spans_.empty(); }
    /// The ranges as parsed, in the same syntax ("0,10-20").
    std::string text() const;

    bool operator==(const IdRanges&) const = default;

private:
    std::vector<std::pair<uint32_t, uint32_t>> spans_;
};

}  // namespace taskscope::spec
