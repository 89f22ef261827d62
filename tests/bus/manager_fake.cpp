// A stand-in for taskscope-manager's task objects on a private bus, for the
// bus tier's retention test: an ObjectManager at /org/taskscope/Manager1
// with one org.taskscope.Task1 object per exited task named on the command
// line. A line "forget UNIT" on stdin removes that task's object
// (InterfacesRemoved), as ForgetTask does; "ok" is printed once done.
//
//   taskscope-bus-manager-fake BUS_ADDRESS ALLOC:TASK...

#include <poll.h>
#include <unistd.h>

#include <sdbus-c++/sdbus-c++.h>

#include "common/sdbus_compat.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>

namespace {

constexpr const char* kTask1 = "org.taskscope.Task1";

std::unique_ptr<sdbus::IObject> taskObject(sdbus::IConnection& bus, size_t n, const std::string& alloc,
                                           const std::string& task) {
    auto o = sdbus::createObject(bus, sdbus::ObjectPath{"/org/taskscope/Manager1/task/t" + std::to_string(n)});
    const std::string unit = alloc + "-" + task + ".scope";
    taskscope::sdbus_compat::VTable(*o, kTask1)
        .property("AllocId", [alloc] { return alloc; })
        .property("Name", [task] { return task; })
        .property("Unit", [unit] { return unit; })
        .property("State", [] { return std::string("exited"); })
        .add();
    taskscope::sdbus_compat::finishRegistration(*o);
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s BUS_ADDRESS ALLOC:TASK...\n", argv[0]);
        return 2;
    }
    auto bus = sdbus::createSessionBusConnectionWithAddress(argv[1]);
    auto manager = sdbus::createObject(*bus, sdbus::ObjectPath{"/org/taskscope/Manager1"});
    manager->addObjectManager();
    taskscope::sdbus_compat::finishRegistration(*manager);
    std::map<std::string, std::unique_ptr<sdbus::IObject>> tasks;  // by unit
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto colon = arg.find(':');
        const auto alloc = arg.substr(0, colon), task = arg.substr(colon + 1);
        tasks[alloc + "-" + task + ".scope"] = taskObject(*bus, static_cast<size_t>(i), alloc, task);
    }
    bus->requestName(taskscope::sdbus_compat::ServiceName{"org.taskscope.Manager1"});
    std::cout << "ready" << std::endl;
    for (;;) {
        try {
            while (taskscope::sdbus_compat::processPending(*bus)) {
            }
        } catch (const sdbus::Error&) {
            return 0;  // the test ended and took the bus away
        }
        const auto wait = taskscope::sdbus_compat::busWait(*bus);
        std::vector<pollfd> p{{STDIN_FILENO, POLLIN, 0}};
        wait.addTo(p);
        ::poll(p.data(), p.size(), wait.timeoutMs());
        if (!(p[0].revents & (POLLIN | POLLHUP))) continue;
        std::string command, unit;
        if (!(std::cin >> command >> unit)) return 0;
        if (command == "forget") {
            if (auto it = tasks.find(unit); it != tasks.end()) {
                it->second->emitInterfacesRemovedSignal();
                tasks.erase(it);
            }
        }
        std::cout << "ok" << std::endl;
    }
}
