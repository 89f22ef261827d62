// Fuzz target: a caller's task spec (StartTask's JSON, from the bus), read
// by spec::parseTaskSpec. Properties: no input crashes or hangs it; a bad
// input's error has a name and a message; a spec it accepts reads back from
// its own JSON as the same spec (toJson's promise, which the manager's
// records rely on); and a good spec still parses after any input (the
// parser keeps no state a bad input can spoil: the bus feeds it one
// caller's spec after another's).

#include "spec/task_spec.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto got = spec::parseTaskSpec(fuzz::text(data, size));
    if (got) {
        auto again = spec::parseTaskSpec(spec::toText(*got));
        fuzz::check(again.ok(), "an accepted spec's own JSON is refused");
        fuzz::check(*again == *got, "an accepted spec reads back different");
    } else {
        fuzz::check(!got.error().name.empty() && !got.error().message.empty(), "an error without name or message");
    }
    static const char* kGood = R"({"command":"/bin/true","args":["-x"],"resources":{"memory_mb":64}})";
    static const spec::TaskSpec kGoodSpec = *spec::parseTaskSpec(kGood);
    auto good = spec::parseTaskSpec(kGood);
    fuzz::check(good.ok() && *good == kGoodSpec, "a good spec no longer parses after this input");
    return 0;
}
