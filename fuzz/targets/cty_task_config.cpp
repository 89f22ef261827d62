// Fuzz target: a task's config block as Nomad sends it (TaskConfig's
// msgpack_driver_config: go-cty msgpack, from the job's author), read as
// the driver's StartTask reads it: nomad::decodeCty, then the exec and
// raw_exec keys by nomad::parseTaskBlock. The node's own keys in the same
// block are node_task_keys' (fuzz/targets/node_task_keys.cpp).
// Properties: no crash, hang or unbounded allocation; a decoded value
// prints (dump() throws on a string that is not UTF-8); a refusal names
// itself; a good block still decodes after any input.

#include "fuzz_support.hpp"
#include "nomad/cty_msgpack.hpp"
#include "nomad/task_config.hpp"

using namespace taskscope;

namespace {

// {"command": "/bin/true", "args": ["-x"]} as go-cty writes it (octal
// escapes: a hex one would run into the letters after it).
constexpr char kGood[] = "\202\247command\251/bin/true\244args\221\242-x";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto config = nomad::decodeCty(fuzz::text(data, size));
    if (config) {
        // The driver prints what it decoded (the spec it sends, errors
        // that quote a value): a decoded value must print.
        fuzz::check(!config->dump().empty(), "a decoded config does not print");
        auto block = nomad::parseTaskBlock(*config);
        if (!block) fuzz::check(!block.error().message.empty(), "a refused block without a message");
        // Every number a key may hold is read this way.
        if (config->is_object())
            for (const auto& [key, value] : config->items()) (void)nomad::ctyInteger(value, key.c_str());
    } else {
        fuzz::check(!config.error().name.empty() && !config.error().message.empty(),
                    "an error without name or message");
    }
    auto good = nomad::decodeCty({kGood, sizeof kGood - 1});
    fuzz::check(good.ok() && nomad::parseTaskBlock(*good).ok(), "a good block no longer decodes after this input");
    return 0;
}
