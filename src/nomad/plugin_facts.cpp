#include "nomad/plugin_facts.hpp"

namespace taskscope::nomad {

namespace hcl = hashicorp::nomad::plugins::shared::hclspec;

namespace {

hcl::Spec attr(const char* name, const char* type, bool required) {
    hcl::Spec s;
    auto* a = s.mutable_attr();
    a->set_name(name);
    a->set_type(type);
    a->set_required(required);
    return s;
}

hcl::Spec withDefault(hcl::Spec primary, const char* literal) {
    hcl::Spec s;
    *s.mutable_default_()->mutable_primary() = std::move(primary);
    s.mutable_default_()->mutable_default_()->mutable_literal()->set_value(literal);
    return s;
}

}  // namespace

hcl::Spec configSchema() {
    hcl::Spec s;
    auto& attrs = *s.mutable_object()->mutable_attributes();
    attrs["enabled"] = withDefault(attr("enabled", "bool", false), "true");
    attrs["default_isolation"] = withDefault(attr("default_isolation", "string", false), "\"chroot\"");
    return s;
}

hcl::Spec taskConfigSchema() {
    hcl::Spec s;
    auto& attrs = *s.mutable_object()->mutable_attributes();
    attrs["command"] = attr("command", "string", true);
    attrs["args"] = attr("args", "list(string)", false);
    attrs["isolation"] = attr("isolation", "string", false);
    return s;
}

void fillCapabilities(hashicorp::nomad::plugins::drivers::proto::DriverCapabilities& caps) {
    caps.set_send_signals(true);
    caps.set_exec(true);
    caps.set_fs_isolation(kFsIsolation);
    for (auto mode : kNetworkIsolationModes) caps.add_network_isolation_modes(mode);
    caps.set_must_create_network(true);
    // Mounts are bound into an isolated task's root (isolation = "none"
    // refuses them at start, with a message saying why).
    caps.set_mount_configs(hashicorp::nomad::plugins::drivers::proto::DriverCapabilities::ANY_MOUNTS);
    caps.set_disable_log_collection(false);
}

}  // namespace taskscope::nomad
