#pragma once
// What of a task spec an unprivileged reader may see. Scheduler agents put
// secrets (Vault tokens, database passwords) in a task's environment, and
// the bus hands properties and signals to any local user: everything but
// root-only calls carries the redacted view.

#include <nlohmann/json.hpp>

#include <string>

namespace taskscope::manager {

/// Replaces every secret value; keys and the shape of the spec stay.
inline constexpr const char* kRedactedValue = "<redacted>";

/// The spec with every env value, and every argument when the spec sets
/// "secret_args": true, replaced by kRedactedValue. A spec that is not a
/// JSON object (never stored, but never trusted either) becomes the marker
/// itself. Pure.
nlohmann::json redactSpec(const nlohmann::json& spec);

/// redactSpec on JSON text, returning JSON text.
std::string redactSpecJson(const std::string& specJson);

}  // namespace taskscope::manager
