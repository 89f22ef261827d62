#pragma once
// A plugin's registration as the manager keeps it on disk
// (<root>/<type>/<name>.json): written when the plugin registers, read back
// after a restart to tell the bus which plugins are still served. One
// wire, both ways. Pure.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace taskscope::plugins {

struct Registration {
    std::string type;
    std::string name;
    std::string allocId;
    std::string task;
    std::string provider;
    std::string version;
    std::vector<std::string> capabilities;
    bool healthy = false;
};

/// The file's text.
std::string registrationText(const Registration& r);
/// Reads a file's text; a missing field is empty, as an older manager left
/// it. Internal naming the field (or the byte) when the text is not a
/// registration: a torn or foreign file must not take the manager down.
common::Result<Registration> parseRegistration(std::string_view text);

}  // namespace taskscope::plugins
