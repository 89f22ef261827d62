#pragma once
// What every reader of a spec's JSON shares: the JSON type, how strictly
// it is read, and the error a bad value is (the tables are schema.hpp's).

#include <string>

#include <nlohmann/json.hpp>

#include "common/error_names.hpp"
#include "common/result.hpp"

namespace taskscope::spec {

using Json = nlohmann::json;

/// How a reader takes its input: a caller's (Strict: an unknown field or a
/// missing required one is an error) or one another daemon wrote (Lenient:
/// unknown fields are skipped, so a newer writer's additions do no harm).
enum class Strictness { Strict, Lenient };

/// A bad value: InvalidSpec naming what is wrong.
inline common::Error invalid(const std::string& message) {
    return common::makeError(common::errors::kInvalidSpec, message);
}

}  // namespace taskscope::spec
