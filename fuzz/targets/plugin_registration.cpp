// Fuzz target: a plugin's registration file (<root>/<type>/<name>.json),
// read back by the manager's plugin registry after a restart
// (plugins::parseRegistration). Before this target the registry read it
// with nlohmann's value(key, default), which throws on a field of another
// type: {"type":1} stopped the manager at every start. Properties: no
// crash or hang; a refusal names itself; an accepted registration writes
// out and reads back the same.

#include "fuzz_support.hpp"
#include "plugins/registration.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto got = plugins::parseRegistration(fuzz::text(data, size));
    if (!got) {
        fuzz::check(!got.error().name.empty() && !got.error().message.empty(), "an error without name or message");
        return 0;
    }
    auto again = plugins::parseRegistration(plugins::registrationText(*got));
    fuzz::check(again.ok() && again->type == got->type && again->capabilities == got->capabilities &&
                    again->healthy == got->healthy && again->allocId == got->allocId,
                "an accepted registration reads back different");
    return 0;
}
