#include "manager/spec_redaction.hpp"

namespace taskscope::manager {

nlohmann::json redactSpec(const nlohmann::json& spec) {
    if (!spec.is_object()) return kRedactedValue;
    nlohmann::json out = spec;
    if (auto env = out.find("env"); env != out.end()) {
        if (env->is_object())
            for (auto& [key, value] : env->items()) value = kRedactedValue;
        else
            *env = kRedactedValue;
    }
    const auto secretArgs = out.find("secret_args");
    if (secretArgs != out.end() && secretArgs->is_boolean() && secretArgs->get<bool>())
        if (auto args = out.find("args"); args != out.end()) {
            if (args->is_array())
                for (auto& a : *args) a = kRedactedValue;
            else
                *args = kRedactedValue;
        }
    return out;
}

std::string redactSpecJson(const std::string& specJson) {
    return redactSpec(nlohmann::json::parse(specJson, nullptr, false)).dump();
}

}  // namespace taskscope::manager
