// Fuzz target: the kernel's mount tables as the fingerprint, the stats
// sampler and the manager read them (scope::parseMountInfo, both ways of
// treating a bad line, and scope::parseMounts). The text is the kernel's,
// but a task in its own mount namespace shapes much of it (mount points
// with any byte, escapes). Properties: no crash or hang; every refusal
// names the file.

#include "scope/mount_table.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto text = fuzz::text(data, size);
    const std::string path = "/proc/self/mountinfo";
    auto strict = scope::parseMountInfo(text, path);
    if (!strict)
        fuzz::check(strict.error().message.find(path) != std::string::npos, "an error that does not name the file");
    auto lenient = scope::parseMountInfo(text, path, true);
    fuzz::check(lenient.ok(), "skipMalformed refused a table");
    if (strict) fuzz::check(strict->size() == lenient->size(), "skipMalformed dropped a good line");
    auto mounts = scope::parseMounts(text, "/proc/mounts");
    if (!mounts) fuzz::check(!mounts.error().message.empty(), "an error without a message");
    for (const auto& e : lenient.value()) (void)e.shared();
    (void)scope::unescapeMountField(text);
    return 0;
}
