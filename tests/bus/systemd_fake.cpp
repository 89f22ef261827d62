// A stand-in for systemd's Manager on a private bus, for the bus tier's
// test of the manager's systemd client: it answers what SdbusSystemdClient
// calls, and its jobs end in the order a test asks for. Units are
// bookkeeping only (no cgroups); KillUnit signals the PIDs a scope was
// started with. What systemd itself does is the system tier's to prove.
//
//   taskscope-bus-systemd-fake BUS_ADDRESS MODE
//   MODE: removed-before-reply  JobRemoved "done" is sent before the reply
//                               to StartTransientUnit/StopUnit (systemd
//                               may do that: the job can finish first)
//         removed-after-reply   the usual order
//         failed                JobRemoved says "failed" for every start
//         held                  jobs end (JobRemoved "done") only when
//                               org.taskscope.Test1.FinishJobs is called:
//                               systemd busy with them meanwhile

#include <signal.h>

#include <sdbus-c++/sdbus-c++.h>

#include <cctype>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/sdbus_compat.hpp"

namespace {

constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
using Properties = std::vector<sdbus::Struct<std::string, sdbus::Variant>>;
using Aux = std::vector<sdbus::Struct<std::string, Properties>>;

struct Unit {
    std::vector<uint32_t> pids;
    std::unique_ptr<sdbus::IObject> object;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s BUS_ADDRESS MODE\n", argv[0]);
        return 2;
    }
    const std::string mode = argv[2];
    auto bus = sdbus::createSessionBusConnectionWithAddress(argv[1]);
    auto manager = sdbus::createObject(*bus, sdbus::ObjectPath{"/org/freedesktop/systemd1"});
    std::map<std::string, Unit> units;
    uint32_t nextJob = 1;
    std::vector<std::function<void()>> held;

    auto unitPath = [](const std::string& unit) {
        std::string p = "/org/freedesktop/systemd1/unit/";
        for (unsigned char c : unit) {
            if (std::isalnum(c)) {
                p += static_cast<char>(c);
            } else {
                char buf[4];
                std::snprintf(buf, sizeof buf, "_%02x", c);
                p += buf;
            }
        }
        return sdbus::ObjectPath(p);
    };
    // Runs a job: the reply carries its path; JobRemoved goes out before
    // or after that reply as the mode says.
    auto job = [&](sdbus::Result<sdbus::ObjectPath>&& reply, const std::string& unit, const std::string& result) {
        const uint32_t id = nextJob++;
        const sdbus::ObjectPath path("/org/freedesktop/systemd1/job/" + std::to_string(id));
        auto removed = [&, id, path, unit, result] {
            manager->emitSignal("JobRemoved").onInterface(kManager).withArguments(id, path, unit, result);
        };
        if (mode == "removed-before-reply") {
            removed();
            reply.returnResults(path);
        } else if (mode == "held") {
            reply.returnResults(path);
            held.push_back(removed);
        } else {
            reply.returnResults(path);
            removed();
        }
    };

    namespace compat = taskscope::sdbus_compat;
    compat::VTable(*manager, "org.taskscope.Test1")
        .method("FinishJobs",
                [&] {
                    auto finishing = std::move(held);
                    held.clear();
                    for (auto& f : finishing) f();
                    return static_cast<uint32_t>(finishing.size());
                })
        .add();
    compat::VTable systemd(*manager, kManager);
    systemd.method("Subscribe", [] {});
    systemd.method("StartTransientUnit", [&](sdbus::Result<sdbus::ObjectPath>&& reply, const std::string& unit,
                                             const std::string&, const Properties& props, const Aux&) {
        // systemd collects a scope once its processes are gone (the
        // tasks' CollectMode); a stand-in without cgroups asks the PIDs.
        if (auto it = units.find(unit); it != units.end()) {
            bool alive = false;
            for (auto pid : it->second.pids) alive = alive || ::kill(static_cast<pid_t>(pid), 0) == 0;
            if (alive)
                throw taskscope::sdbus_compat::makeError("org.freedesktop.systemd1.UnitExists",
                                                         "Unit " + unit + " exists");
            units.erase(it);
        }
        Unit u;
        for (const auto& p : props)
            if (p.get<0>() == "PIDs") u.pids = p.get<1>().get<std::vector<uint32_t>>();
        u.object = sdbus::createObject(*bus, sdbus::ObjectPath{unitPath(unit)});
        const std::string cgroup = "/nomad.slice/" + unit;
        compat::VTable(*u.object, "org.freedesktop.systemd1.Scope")
            .property("ControlGroup", [cgroup] { return cgroup; })
            .add();
        compat::VTable(*u.object, "org.freedesktop.systemd1.Unit")
            .property("ActiveState", [] { return std::string("active"); })
            .property("SubState", [] { return std::string("running"); })
            .add();
        compat::finishRegistration(*u.object);
        const bool ok = mode != "failed";
        if (ok) units[unit] = std::move(u);
        job(std::move(reply), unit, ok ? "done" : "failed");
    });
    systemd.method("StopUnit",
                   [&](sdbus::Result<sdbus::ObjectPath>&& reply, const std::string& unit, const std::string&) {
                       units.erase(unit);
                       job(std::move(reply), unit, "done");
                   });
    systemd.method("KillUnit", [&](const std::string& unit, const std::string&, const int32_t& sig) {
        auto it = units.find(unit);
        if (it == units.end())
            throw taskscope::sdbus_compat::makeError("org.freedesktop.systemd1.NoSuchUnit",
                                                     "Unit " + unit + " not loaded");
        for (auto pid : it->second.pids) ::kill(static_cast<pid_t>(pid), sig);
    });
    for (const char* name : {"FreezeUnit", "ThawUnit", "ResetFailedUnit"})
        systemd.method(name, [](const std::string&) {});
    systemd.method("SetUnitProperties", [](const std::string&, const bool&, const Properties&) {});
    systemd.method("GetUnit", [&](const std::string& unit) {
        if (!units.count(unit))
            throw taskscope::sdbus_compat::makeError("org.freedesktop.systemd1.NoSuchUnit",
                                                     "Unit " + unit + " not loaded");
        return unitPath(unit);
    });
    systemd.signal<uint32_t, sdbus::ObjectPath, std::string, std::string>("JobRemoved");
    systemd.signal<std::string, sdbus::ObjectPath>("UnitRemoved");
    systemd.property("Version", [] { return std::string("252-fake"); });
    systemd.add();
    compat::finishRegistration(*manager);
    bus->requestName(taskscope::sdbus_compat::ServiceName{"org.freedesktop.systemd1"});
    std::cout << "ready" << std::endl;
    bus->enterEventLoop();
}
