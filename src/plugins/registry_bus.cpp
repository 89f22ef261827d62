#include "plugins/registry_bus.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::plugins {

PluginObject::PluginObject(sdbus::IConnection& connection, const PluginEntry& plugin)
    : AdaptorInterfaces(connection, sdbus::ObjectPath{plugin.objectPath}), p_(plugin) {
    registerAdaptor();
}

PluginObject::~PluginObject() { unregisterAdaptor(); }

void PluginObject::changed() {
    sdbus_compat::emitPropertiesChanged(getObject(), org::taskscope::Plugin1_adaptor::INTERFACE_NAME,
                                        {"Provider", "Version", "Capabilities", "Healthy", "LastCheck", "Message"});
}

RegistryObject::RegistryObject(sdbus::IConnection& connection, PluginRegistry& registry)
    : AdaptorInterfaces(connection, sdbus::ObjectPath{kRegistryPath}), connection_(connection), registry_(registry) {
    registerAdaptor();
}

RegistryObject::~RegistryObject() { unregisterAdaptor(); }

void RegistryObject::pluginRegistered(const PluginEntry& plugin, bool announce) {
    auto obj = std::make_unique<PluginObject>(connection_, plugin);
    obj->emitInterfacesAddedSignal();
    objects_[plugin.objectPath] = std::move(obj);
    if (announce)
        emitPluginRegistered(plugin.spec.type, plugin.spec.name, plugin.provider, plugin.version, plugin.healthy,
                             sdbus::ObjectPath(plugin.objectPath));
}

void RegistryObject::pluginChanged(const PluginEntry& plugin, bool healthChanged) {
    if (auto it = objects_.find(plugin.objectPath); it != objects_.end()) it->second->changed();
    if (healthChanged) emitPluginHealthChanged(plugin.spec.type, plugin.spec.name, plugin.healthy, plugin.message);
}

void RegistryObject::pluginDeregistered(const PluginEntry& plugin, const std::string& reason) {
    if (auto it = objects_.find(plugin.objectPath); it != objects_.end()) {
        it->second->emitInterfacesRemovedSignal();
        objects_.erase(it);
    }
    emitPluginDeregistered(plugin.spec.type, plugin.spec.name, reason);
}

std::vector<sdbus::Struct<std::string, std::string, std::string, std::string, bool, sdbus::ObjectPath>>
RegistryObject::ListPlugins() {
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string, bool, sdbus::ObjectPath>> out;
    for (const auto* p : registry_.list())
        out.emplace_back(p->spec.type, p->spec.name, p->provider, p->version, p->healthy,
                         sdbus::ObjectPath(p->objectPath));
    return out;
}

}  // namespace taskscope::plugins
