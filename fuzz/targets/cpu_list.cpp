// Fuzz target: a CPU list (common::parseCpuList) as sysfs, cgroup cpuset
// files and a caller's cpuset resource spell it. Properties: no crash,
// hang or allocation past kMaxCpu; a list it accepts formats to a list
// that reads back as the same set.

#include "common/cpu_list.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto got = common::parseCpuList(fuzz::text(data, size));
    if (!got) {
        fuzz::check(got.error().name == "InvalidCpuList", "an error not named InvalidCpuList");
        return 0;
    }
    auto again = common::parseCpuList(common::formatCpuList(*got));
    fuzz::check(again.ok() && *again == *got, "a formatted list reads back different");
    return 0;
}
