// Fuzz target: a CNI plugin's stdout (network::parseCniResult for a
// result, network::cniError for an error document). The plugin is a
// program of the node's, but its output is read as outside input.
// Properties: no crash or hang; a refusal names itself.

#include "fuzz_support.hpp"
#include "network/cni_config.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string out(fuzz::text(data, size));
    auto got = network::parseCniResult(out);
    if (!got)
        fuzz::check(!got.error().name.empty() && !got.error().message.empty(), "an error without name or message");
    auto err = network::cniError("bridge", "ADD", out, "stderr", 1);
    fuzz::check(!err.message.empty(), "a plugin's failure without a message");
    return 0;
}
