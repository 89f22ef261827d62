#pragma once
// The kernel's CPU list format ("0-3,5,7-8"), as found in
// /sys/devices/system/cpu/{present,online} and cpuset.cpus*. Shared by the
// fingerprint and the cpuset partitions so both agree on one parser.

#include <set>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::common {

/// Highest CPU number accepted. The kernel's NR_CPUS tops out at 8192 on
/// every architecture we run on; the bound keeps a hostile range such as
/// "0-4000000000" from allocating a set of billions of entries.
inline constexpr unsigned kMaxCpuId = 65535;

/// Parses a CPU list. Surrounding whitespace (the trailing newline of a
/// sysfs file) is ignored and an empty list is the empty set; anything
/// else that is not comma-separated numbers and ascending ranges is an
/// Error named "InvalidCpuList".
Result<std::set<unsigned>> parseCpuList(std::string_view text);

/// Formats a set in the kernel's canonical form: ascending, runs of two or
/// more consecutive CPUs as ranges ("0-3,5"), "" for the empty set.
std::string formatCpuList(const std::set<unsigned>& cpus);

}  // namespace taskscope::common
