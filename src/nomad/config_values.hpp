#pragma once
// The values of a driver config block (the plugin block and a task's
// config block, decoded from Nomad's cty msgpack into JSON), read with one
// error: InvalidConfig naming where the value sits ("config.work_dir",
// "denied_host_uids"), as Nomad's drivers name the key they refuse. Pure.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/result.hpp"

namespace taskscope::nomad::config {

/// InvalidConfig with `message`.
common::Error invalid(const std::string& message);
common::Result<bool> boolean(const nlohmann::json& v, const std::string& at);
common::Result<std::string> text(const nlohmann::json& v, const std::string& at);
common::Result<std::vector<std::string>> texts(const nlohmann::json& v, const std::string& at);

}  // namespace taskscope::nomad::config
