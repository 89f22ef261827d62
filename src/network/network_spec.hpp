#pragma once
// The network spec a caller hands to CreateNetwork, read with the same
// tables as a task spec (spec/schema.hpp): an unknown field or a value out
// of range is InvalidSpec.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"

namespace taskscope::network {

enum class Mode { None, Bridge };

const char* toString(Mode mode);

/// A host port forwarded to a port inside the allocation's namespace.
struct PortMapping {
    uint16_t hostPort = 0;
    uint16_t containerPort = 0;
    std::string protocol = "tcp";  ///< "tcp" or "udp"

    bool operator==(const PortMapping&) const = default;
};

struct NetworkSpec {
    Mode mode = Mode::None;
    std::vector<PortMapping> ports;  ///< bridge mode only
    /// A conflist that replaces the node's plugin chain (bridge mode).
    std::optional<nlohmann::json> conflist;

    bool operator==(const NetworkSpec&) const = default;
};

/// Parses and range-checks a spec (InvalidSpec); "" means mode none.
common::Result<NetworkSpec> parseNetworkSpec(const std::string& json);

/// An allocation id usable as a file name under /run/netns and as a CNI
/// container id ([A-Za-z0-9][A-Za-z0-9_.-]*, at most 64): InvalidName.
common::Result<void> checkAllocId(const std::string& allocId);

}  // namespace taskscope::network
