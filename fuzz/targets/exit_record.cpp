// Fuzz target: the exit record a task's shim leaves on disk
// (<state>/exits/<unit>), read back by the manager after a crash or a
// restart (manager::parseExitFile). A torn or foreign file must be an
// error naming the key, never a crash. Properties: no crash or hang; a
// refusal names itself.

#include "manager/records/exit_record.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto got = manager::parseExitFile(std::string(fuzz::text(data, size)));
    if (!got)
        fuzz::check(!got.error().name.empty() && !got.error().message.empty(), "an error without name or message");
    return 0;
}
