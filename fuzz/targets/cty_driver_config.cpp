// Fuzz target: the plugin's config as Nomad sends it (SetConfig's
// msgpack_config: go-cty msgpack, from the agent's config file), read as
// the driver's SetConfig reads it: nomad::decodeCty, then
// nomad::parseDriverConfig. Properties: no crash, hang or unbounded
// allocation; a decoded value prints; a refusal names itself.

#include "fuzz_support.hpp"
#include "nomad/cty_msgpack.hpp"
#include "nomad/driver_config.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto config = nomad::decodeCty(fuzz::text(data, size));
    if (!config) {
        fuzz::check(!config.error().name.empty() && !config.error().message.empty(),
                    "an error without name or message");
        return 0;
    }
    fuzz::check(!config->dump().empty(), "a decoded config does not print");
    if (!config->is_object()) return 0;  // SetConfig refuses it before parsing
    auto driver = nomad::parseDriverConfig(*config);
    if (!driver) fuzz::check(!driver.error().message.empty(), "a refused config without a message");
    return 0;
}
