#include "spec/plugin_spec.hpp"

namespace taskscope::spec {

std::string pluginId(const PluginSpec& spec) {
    return spec.type + "/" + spec.name;
}

std::string pluginHostDir(const std::string& root, const PluginSpec& spec) {
    return root + "/" + spec.type + "/" + spec.name;
}

}  // namespace taskscope::spec
