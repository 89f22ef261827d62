// Fuzz target: the node's task-config keys (ulimit, oom_score_adj,
// io_weight, device_{read,write}_{bps,iops}; src/nomad/node_task_config.hpp)
// in a task's config block as Nomad sends it (go-cty msgpack, from the
// job's author), read as the driver's StartTask reads them: decodeCty,
// then addNodeTaskKey for each of the block's node keys that is not null,
// over a spec that already holds a command.
// Properties: no crash or hang; a refusal names the key ("config.<key>")
// and leaves the spec as it was; what the keys accept, the manager's spec
// parser accepts too (the driver sends spec::toJson of it: a value the
// driver takes must not come back as InvalidSpec from StartTask), and it
// reads back the same; a good block still reads after any input.

#include <cstdio>
#include <string>

#include "fuzz_support.hpp"
#include "nomad/cty_msgpack.hpp"
#include "nomad/node_task_config.hpp"
#include "spec/task_spec.hpp"

using namespace taskscope;

namespace {

spec::TaskSpec base() {
    static const spec::TaskSpec s = [] {
        auto parsed = spec::parseTaskSpec(R"({"command":"/bin/true","resources":{"memory_mb":64}})");
        fuzz::check(parsed.ok(), "the base spec does not parse");
        return *parsed;
    }();
    return s;
}

// {"oom_score_adj": 10, "device_read_bps": {"/dev/sda": "10M"}} as go-cty
// writes it.
constexpr char kGood[] = "\202\255oom_score_adj\012\257device_read_bps\201\250/dev/sda\24310M";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto config = nomad::decodeCty(fuzz::text(data, size));
    if (!config || !config->is_object()) return 0;
    spec::TaskSpec task = base();
    for (const auto& [key, value] : config->items()) {
        if (!nomad::isNodeTaskKey(key) || value.is_null()) continue;
        const std::string before = spec::toText(task);
        auto r = nomad::addNodeTaskKey(key, value, task);
        if (!r) {
            fuzz::check(r.error().message.rfind("config." + key, 0) == 0, "a refusal that does not name its key");
            fuzz::check(spec::toText(task) == before, "a refused key changed the spec");
            return 0;
        }
    }
    const std::string text = spec::toText(task);
    auto back = spec::parseTaskSpec(text);
    if (!back) std::fprintf(stderr, "the manager refuses: %s\n", back.error().message.c_str());
    fuzz::check(back.ok(), "the keys accepted what the manager's spec refuses");
    fuzz::check(spec::toText(*back) == text, "the spec reads back different");

    auto good = nomad::decodeCty({kGood, sizeof kGood - 1});
    spec::TaskSpec g = base();
    fuzz::check(good.ok() && nomad::addNodeTaskKey("oom_score_adj", (*good)["oom_score_adj"], g).ok() &&
                    nomad::addNodeTaskKey("device_read_bps", (*good)["device_read_bps"], g).ok() &&
                    g.oomScoreAdj == 10 && g.resources.ioReadBps.at("/dev/sda") == 10u << 20,
                "a good block no longer reads after this input");
    return 0;
}
