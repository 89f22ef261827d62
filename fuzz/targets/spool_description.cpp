// Fuzz target: a log spool's description (<unit>.json in the spool
// directory), read back by the streamer after a restart
// (wire::parseSpoolDescription) and rewritten when the task exits
// (wire::markedExited). Properties: no crash or hang; a description it
// accepts is one markedExited accepts too, and reads back as exited.

#include "fuzz_support.hpp"
#include "wire/spool.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto text = fuzz::text(data, size);
    auto got = wire::parseSpoolDescription(text);
    auto marked = wire::markedExited(text);
    if (got) {
        fuzz::check(marked.ok(), "an accepted description cannot be marked exited");
        auto again = wire::parseSpoolDescription(*marked);
        fuzz::check(again.ok() && again->exited, "a description marked exited does not read back so");
    } else {
        fuzz::check(!got.error().message.empty(), "an error without a message");
    }
    return 0;
}
