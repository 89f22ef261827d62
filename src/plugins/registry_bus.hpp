#pragma once
// The registry's D-Bus face: org.taskscope.PluginRegistry1 at
// /org/taskscope/Manager1/plugins and one org.taskscope.Plugin1 object per
// registered plugin below it. Converts types, nothing more.

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <memory>
#include <string>

#include "dbus/plugin1_adaptor.h"
#include "dbus/plugin_registry1_adaptor.h"
#include "plugins/plugin_registry.hpp"

namespace taskscope::plugins {

inline constexpr const char* kRegistryPath = "/org/taskscope/Manager1/plugins";

class PluginObject final
    : public sdbus::AdaptorInterfaces<org::taskscope::Plugin1_adaptor, sdbus::ManagedObject_adaptor,
                                      sdbus::Properties_adaptor> {
public:
    PluginObject(sdbus::IConnection& connection, const PluginEntry& plugin);
    ~PluginObject();
    PluginObject(const PluginObject&) = delete;
    PluginObject& operator=(const PluginObject&) = delete;

    void changed();

private:
    std::string Type() override { return p_.spec.type; }
    std::string Name() override { return p_.spec.name; }
    std::string Provider() override { return p_.provider; }
    std::string Version() override { return p_.version; }
    std::vector<std::string> Capabilities() override { return p_.capabilities; }
    std::string SocketPath() override { return p_.socketPath; }
    bool Healthy() override { return p_.healthy; }
    uint64_t LastCheck() override { return p_.lastCheckUs; }
    std::string Message() override { return p_.message; }
    std::string AllocId() override { return p_.allocId; }
    std::string Task() override { return p_.task; }

    const PluginEntry& p_;
};

class RegistryObject final : public sdbus::AdaptorInterfaces<org::taskscope::PluginRegistry1_adaptor>,
                             public PluginEvents {
public:
    RegistryObject(sdbus::IConnection& connection, PluginRegistry& registry);
    ~RegistryObject();
    RegistryObject(const RegistryObject&) = delete;
    RegistryObject& operator=(const RegistryObject&) = delete;

    // PluginEvents
    void pluginRegistered(const PluginEntry& plugin, bool announce) override;
    void pluginChanged(const PluginEntry& plugin, bool healthChanged) override;
    void pluginDeregistered(const PluginEntry& plugin, const std::string& reason) override;

private:
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string, bool, sdbus::ObjectPath>>
    ListPlugins() override;

    sdbus::IConnection& connection_;
    PluginRegistry& registry_;
    std::map<std::string, std::unique_ptr<PluginObject>> objects_;  // by object path
};

}  // namespace taskscope::plugins
