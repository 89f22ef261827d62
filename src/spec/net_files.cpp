#include "spec/net_files.hpp"

#include <arpa/inet.h>

#include <sstream>

namespace taskscope::spec {

bool isIpAddress(const std::string& s) {
    unsigned char buf[16];
    return ::inet_pton(AF_INET, s.c_str(), buf) == 1 || ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

bool isConfWord(const std::string& s) {
    if (s.empty() || s.size() > 253) return false;
    for (unsigned char c : s)
        if (c <= ' ' || c >= 0x7f || c == '#' || c == ';') return false;
    return true;
}

DnsConfig completedDns(const DnsConfig& asked, const std::string& hostResolvConf) {
    DnsConfig host;
    std::istringstream in(hostResolvConf);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string key;
        words >> key;
        std::vector<std::string> rest;
        for (std::string w; words >> w;) rest.push_back(w);
        if (key == "nameserver" && !rest.empty() && isIpAddress(rest[0])) host.servers.push_back(rest[0]);
        // The last of search and domain wins, as in resolv.conf(5).
        else if (key == "search" || key == "domain")
            host.searches = rest;
        else if (key == "options")
            host.options.insert(host.options.end(), rest.begin(), rest.end());
    }
    DnsConfig out = asked;
    if (out.servers.empty()) out.servers = host.servers;
    if (out.searches.empty()) out.searches = host.searches;
    if (out.options.empty()) out.options = host.options;
    return out;
}

}  // namespace taskscope::spec
