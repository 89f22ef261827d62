// taskscope-fingerprint: prints this node's facts as a JSON attribute map.
// The probe is plain file reading; only the systemd version needs the bus,
// and a node without systemd (or a build host) still gets the rest.

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

#include <sdbus-c++/sdbus-c++.h>

#include "common/sdbus_compat.hpp"
#include "fingerprint/fingerprint.hpp"

namespace {

constexpr const char* kProgram = "taskscope-fingerprint";

void usage(std::FILE* out) {
    std::fprintf(out,
                 "Usage: %s [--sys DIR] [--proc DIR]\n"
                 "Print this node's facts (cgroups, cores, memory, kernel, systemd) as JSON.\n"
                 "\n"
                 "  --sys DIR    read sysfs below DIR instead of /sys (fixtures)\n"
                 "  --proc DIR   read procfs below DIR instead of /proc (fixtures)\n"
                 "  -h, --help   show this help\n",
                 kProgram);
}

// The bus is the error boundary: sdbus-c++ reports by exception.
std::string systemdVersion() {
    try {
        auto bus = sdbus::createSystemBusConnection();
        auto systemd = sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{"org.freedesktop.systemd1"},
                                          sdbus::ObjectPath{"/org/freedesktop/systemd1"});
        return systemd->getProperty("Version").onInterface("org.freedesktop.systemd1.Manager").get<std::string>();
    } catch (const sdbus::Error& e) {
        std::fprintf(stderr, "%s: Failed to read the systemd version: %s, ignoring\n", kProgram,
                     e.getMessage().c_str());
    }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    taskscope::fingerprint::Roots roots;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        std::string* target = nullptr;
        std::string_view option = arg;
        std::string_view inlineValue;
        bool hasInlineValue = false;
        if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
            option = arg.substr(0, eq);
            inlineValue = arg.substr(eq + 1);
            hasInlineValue = true;
        }
        if (arg == "-h" || arg == "--help") {
            usage(stdout);
            return 0;
        }
        if (option == "--sys") target = &roots.sys;
        if (option == "--proc") target = &roots.proc;
        if (target == nullptr) {
            std::fprintf(stderr, "%s: unknown argument '%s' (see --help)\n", kProgram, argv[i]);
            return 2;
        }
        if (hasInlineValue) {
            *target = std::string(inlineValue);
        } else if (i + 1 < argc) {
            *target = argv[++i];
        } else {
            std::fprintf(stderr, "%s: %s needs a directory (see --help)\n", kProgram, argv[i]);
            return 2;
        }
    }

    auto facts = taskscope::fingerprint::probe(roots);
    if (!facts) {
        std::fprintf(stderr, "%s: Failed to probe node facts: %s\n", kProgram, facts.error().message.c_str());
        return 1;
    }
    for (const auto& note : facts->notes) std::fprintf(stderr, "%s: %s\n", kProgram, note.c_str());

    // nlohmann::json objects keep keys sorted, so the output is stable.
    std::cout << taskscope::fingerprint::toJson(*facts, systemdVersion()).dump(2) << '\n';
    return std::cout.good() ? 0 : 1;
}
