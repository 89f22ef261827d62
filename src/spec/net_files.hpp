#pragma once
// The allocation network's files an isolated task gets (issue 47): its
// /etc/resolv.conf from the network's DNS settings (Nomad's `dns` block:
// servers, searches, options) and an /etc/hosts naming the allocation
// (Nomad's HostsConfig: its address and hostname). A task without them
// keeps the files its root binds from the host.

#include <string>
#include <vector>

namespace taskscope::spec {

/// resolv.conf's limits are glibc's (MAXNS 3, MAXDNSRCH 6); these only
/// bound what a spec may hold.
inline constexpr size_t kMaxDnsEntries = 16;

struct DnsConfig {
    std::vector<std::string> servers;   ///< IPv4 or IPv6 addresses
    std::vector<std::string> searches;  ///< domains
    std::vector<std::string> options;   ///< "ndots:2", "edns0"

    bool empty() const { return servers.empty() && searches.empty() && options.empty(); }
    bool operator==(const DnsConfig&) const = default;
};

struct HostsEntry {
    std::string hostname;
    std::string address;

    bool operator==(const HostsEntry&) const = default;
};

/// An IPv4 or IPv6 address in text (inet_pton).
bool isIpAddress(const std::string& s);
/// A word resolv.conf and hosts take: 1..253 printable characters, no
/// whitespace, no '#'.
bool isConfWord(const std::string& s);

/// Nomad's rule (drivers/shared/resolvconf/mount.go, GenerateDNSMount):
/// what the dns block leaves empty comes from the host's resolv.conf
/// (`hostResolvConf`, its text): its nameservers, its search (or domain)
/// list, its options.
DnsConfig completedDns(const DnsConfig& asked, const std::string& hostResolvConf);

}  // namespace taskscope::spec
