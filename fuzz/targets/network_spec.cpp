// Fuzz target: CreateNetwork's spec (from the bus), read by
// network::parseNetworkSpec. Properties: no crash or hang; a refusal names
// itself; an accepted conflist can be written out (the manager dumps it
// into the CNI config it runs: a value the parser takes must not take the
// writer down); a good spec still parses after any input.

#include "network/network_spec.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto got = network::parseNetworkSpec(std::string(fuzz::text(data, size)));
    if (got) {
        if (got->conflist) fuzz::check(!got->conflist->dump().empty(), "an accepted conflist does not write out");
    } else {
        fuzz::check(!got.error().name.empty() && !got.error().message.empty(), "an error without name or message");
    }
    static const std::string kGood =
        R"({"mode":"bridge","ports":[{"host_port":8080,"container_port":80},{"host_port":53,"protocol":"udp"}]})";
    static const network::NetworkSpec kGoodSpec = *network::parseNetworkSpec(kGood);
    auto good = network::parseNetworkSpec(kGood);
    fuzz::check(good.ok() && *good == kGoodSpec, "a good spec no longer parses after this input");
    return 0;
}
