// Fuzz target: a task record of the manager's state store
// (<state>/tasks/<unit>.json), read back after a crash or restart as
// StateStore::loadAll reads it: spec::parseJson, then
// task::recordFromJson (which reads the spec inside it too).
// Properties: no crash or hang; a refusal names itself; a record it
// accepts writes out and reads back.

#include "task/task_record.hpp"
#include "fuzz_support.hpp"
#include "spec/json_text.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto j = spec::parseJson(fuzz::text(data, size), "task record");
    if (!j) return 0;
    auto rec = task::recordFromJson(*j);
    if (!rec) {
        fuzz::check(!rec.error().name.empty() && !rec.error().message.empty(), "an error without name or message");
        return 0;
    }
    fuzz::check(task::recordFromJson(task::toJson(*rec)).ok(), "an accepted record's own JSON is refused");
    return 0;
}
