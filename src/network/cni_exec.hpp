#pragma once
// Runs a program the way CNI runs its plugins: argv and environment given,
// a document on stdin, stdout and stderr collected, killed past a
// deadline. Blocking: the network manager calls it from a worker thread,
// never from the event loop.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "network/network_spec.hpp"

namespace taskscope::network {

struct ProgramOutput {
    int status = -1;  ///< exit status; -1 when killed by a signal (the deadline)
    bool timedOut = false;
    std::string out;
    std::string err;
};

/// fork+execve of argv[0]; Internal only when it could not be started.
common::Result<ProgramOutput> runProgram(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                         const std::string& input, std::chrono::milliseconds timeout);

/// The CNI_* environment of one call.
struct CniCall {
    std::string command;      ///< ADD, CHECK, DEL
    std::string containerId;  ///< the allocation id
    std::string netns;        ///< /run/netns/<alloc>
    std::string ifname = "eth0";
    std::string cniPath;
    std::chrono::milliseconds timeout{60000};
};

/// Runs plugin `type` from call.cniPath with `input` on stdin; its stdout
/// (the result, "" for DEL and CHECK) or CniFailed.
common::Result<std::string> runPlugin(const CniCall& call, const std::string& type, const nlohmann::json& input);

/// The whole chain of `conflist` for ADD (in order, each plugin gets the
/// previous result; the last result is returned), CHECK (in order, each
/// gets `cached`) or DEL (in reverse, each gets `cached`; every plugin
/// runs even after one failed, the first error is returned).
common::Result<nlohmann::json> runChain(const CniCall& call, const nlohmann::json& conflist,
                                        const std::vector<PortMapping>& ports, const nlohmann::json& cached = {});

}  // namespace taskscope::network
