// Fuzz target: GetTask's JSON as another daemon reads it back
// (wire::parseTaskJson: the streamer and the Nomad driver read the
// manager's answer; the manager's own records hold the same fields).
// Properties: no crash or hang; a refusal names itself; a task it accepts
// writes out and reads back.

#include "wire/task_json.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto got = wire::parseTaskJson(fuzz::text(data, size));
    if (got) {
        fuzz::check(wire::parseTaskJson(wire::toJson(*got)).ok(), "an accepted task's own JSON is refused");
    } else {
        fuzz::check(!got.error().name.empty() && !got.error().message.empty(), "an error without name or message");
    }
    return 0;
}
