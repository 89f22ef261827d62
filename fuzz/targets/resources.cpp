// Fuzz target: UpdateResources' JSON (from the bus), read by
// spec::parseResources. Properties: no crash or hang; a refusal names
// itself; a good change still parses after any input.

#include "spec/resources.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto got = spec::parseResources(fuzz::text(data, size));
    if (!got)
        fuzz::check(!got.error().name.empty() && !got.error().message.empty(), "an error without name or message");
    static const char* kGood = R"({"memory_mb":256,"cpu_shares":512})";
    static const spec::Resources kGoodValue = *spec::parseResources(kGood);
    auto good = spec::parseResources(kGood);
    fuzz::check(good.ok() && *good == kGoodValue, "a good change no longer parses after this input");
    return 0;
}
