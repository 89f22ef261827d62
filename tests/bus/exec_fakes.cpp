// Stand-ins for taskscope-manager and systemd on a private bus, for the
// bus tier's exec test: GetTask describes one local process as a running
// task, and AttachProcessesToUnit records the pids it was asked to move
// (into ATTACH_LOG) without moving anything. Only what the streamer's exec
// path calls is here; the real daemons are tested against real systemd in
// the system tier.
//
//   taskscope-bus-exec-fakes BUS_ADDRESS ALLOC TASK PID ATTACH_LOG

#include <sdbus-c++/sdbus-c++.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/sdbus_compat.hpp"

int main(int argc, char** argv) {
    if (argc != 7) {
        std::fprintf(stderr, "usage: %s BUS_ADDRESS ALLOC TASK PID ATTACH_LOG PROCESS_SPEC\n", argv[0]);
        return 2;
    }
    const std::string alloc = argv[2], task = argv[3], logPath = argv[5], processSpec = argv[6];
    const int pid = std::stoi(argv[4]);
    // The task's cgroup is the one the process is really in.
    std::ifstream cg("/proc/" + std::to_string(pid) + "/cgroup");
    std::string line, cgroup;
    while (std::getline(cg, line))
        if (!line.empty()) cgroup = line.substr(line.find(':', line.find(':') + 1) + 1);

    auto bus = sdbus::createSessionBusConnectionWithAddress(argv[1]);
    auto manager = sdbus::createObject(*bus, sdbus::ObjectPath{"/org/taskscope/Manager1"});
    namespace compat = taskscope::sdbus_compat;
    compat::VTable(*manager, "org.taskscope.Manager1")
        .method("GetTask",
                [&](const std::string& a, const std::string& t) -> std::string {
                    if (a != alloc || t != task)
                        throw taskscope::sdbus_compat::makeError("org.taskscope.Error.NoSuchTask",
                                                                 "no task " + a + "/" + t);
                    const nlohmann::json spec = {
                        {"command", "/bin/sleep"}, {"cwd", "/tmp"}, {"env", {{"FROM_TASK", "yes"}}}};
                    return nlohmann::json{
                        {"alloc_id", alloc},           {"task", task}, {"unit", alloc + "-" + task + ".scope"},
                        {"state", "running"},          {"pid", pid},   {"cgroup", cgroup},
                        {"process_spec", processSpec}, {"spec", spec}}
                        .dump();
                })
        .add();
    compat::finishRegistration(*manager);
    auto systemd = sdbus::createObject(*bus, sdbus::ObjectPath{"/org/freedesktop/systemd1"});
    compat::VTable(*systemd, "org.freedesktop.systemd1.Manager")
        .method("AttachProcessesToUnit",
                [&](const std::string& unit, const std::string&, const std::vector<uint32_t>& pids) {
                    std::ofstream log(logPath, std::ios::app);
                    for (auto p : pids) log << unit << " " << p << "\n";
                })
        .add();
    compat::finishRegistration(*systemd);
    bus->requestName(taskscope::sdbus_compat::ServiceName{"org.freedesktop.systemd1"});
    bus->requestName(taskscope::sdbus_compat::ServiceName{"org.taskscope.Manager1"});
    std::cout << "ready" << std::endl;
    bus->enterEventLoop();
}
