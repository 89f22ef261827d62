// Nomad's devices and the allocation network's files into the spec
// (devices_network.hpp).
#include "nomad/devices_network.hpp"

#include "nomad/hcl_block.hpp"

namespace taskscope::nomad {

using common::Result;
using hclblock::invalid;

Result<void> addNomadDevices(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg, bool isolated,
                             spec::TaskSpec& out) {
    for (int i = 0; i < cfg.devices_size(); ++i) {
        const auto& d = cfg.devices(i);
        const std::string at = "device " + (d.host_path().empty() ? std::to_string(i) : d.host_path());
        if (!spec::isDevicePath(d.host_path())) return invalid(at + ": host_path must be a device node under /dev/");
        spec::Device dev;
        dev.hostPath = d.host_path();
        dev.taskPath = d.task_path().empty() ? d.host_path() : d.task_path();
        dev.permissions = d.cgroup_permissions().empty() ? "rwm" : d.cgroup_permissions();
        if (!spec::validDevicePermissions(dev.permissions))
            return invalid(at + ": permissions \"" + dev.permissions + "\" are not a combination of r, w and m");
        // On the host's root the task sees the host's /dev and its scope
        // has no device policy: the device is there already, at its host
        // path, and nowhere else.
        if (!isolated && dev.taskPath != dev.hostPath)
            return invalid(at + " at " + dev.taskPath +
                           ": with isolation = \"none\" a task sees the host's /dev, so a device can only be at its "
                           "host path");
        if (!isolated) dev.taskPath.clear();
        out.devices.push_back(std::move(dev));
    }
    return {};
}

void addNetworkFiles(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg, bool isolated,
                     spec::TaskSpec& out) {
    namespace pb = hashicorp::nomad::plugins::drivers::proto;
    if (!isolated || !cfg.has_network_isolation_spec() ||
        cfg.network_isolation_spec().mode() != pb::NetworkIsolationSpec::GROUP)
        return;
    if (cfg.has_dns()) {
        const auto& d = cfg.dns();
        spec::DnsConfig dns{{d.servers().begin(), d.servers().end()},
                            {d.searches().begin(), d.searches().end()},
                            {d.options().begin(), d.options().end()}};
        if (!dns.empty()) out.dns = std::move(dns);
    }
    const auto& hosts = cfg.network_isolation_spec().hostsconfig();
    if (!hosts.hostname().empty() && !hosts.address().empty())
        out.hosts = spec::HostsEntry{hosts.hostname(), hosts.address()};
}

std::string allocHostname(const std::string& allocId, const std::string& networkHostname) {
    return networkHostname.empty() ? allocId.substr(0, 8) : networkHostname;
}

}  // namespace taskscope::nomad
