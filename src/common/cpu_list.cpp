#include "common/cpu_list.hpp"

#include "common/files.hpp"
#include "common/error_names.hpp"

#include <charconv>

namespace taskscope::common {

namespace {


Error invalid(std::string_view text, const std::string& why) {
    return makeError(common::errors::kInvalidCpuList, "invalid CPU list '" + std::string(text) + "': " + why);
}

// from_chars stops at the first non-digit, so it must also consume the
// whole token: otherwise "3x" would parse as 3.
Result<unsigned> parseCpuId(std::string_view whole, std::string_view token) {
    if (token.empty()) return invalid(whole, "empty CPU number");
    unsigned value = 0;
    const auto* end = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(token.data(), end, value);
    if (ec == std::errc::result_out_of_range) return invalid(whole, "CPU number '" + std::string(token) + "' too large");
    if (ec != std::errc() || ptr != end) return invalid(whole, "'" + std::string(token) + "' is not a CPU number");
    if (value > kMaxCpuId)
        return invalid(whole, "CPU " + std::string(token) + " exceeds the maximum " + std::to_string(kMaxCpuId));
    return value;
}

}  // namespace

Result<std::set<unsigned>> parseCpuList(std::string_view text) {
    const std::string_view list = trim(text);
    std::set<unsigned> cpus;
    if (list.empty()) return cpus;

    size_t pos = 0;
    for (;;) {
        const size_t comma = list.find(',', pos);
        const std::string_view item = list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos);
        if (item.empty()) return invalid(list, "empty element");

        const size_t dash = item.find('-');
        auto first = parseCpuId(list, item.substr(0, dash));
        if (!first) return first.error();
        unsigned last = *first;
        if (dash != std::string_view::npos) {
            auto end = parseCpuId(list, item.substr(dash + 1));
            if (!end) return end.error();
            last = *end;
            if (last < *first) return invalid(list, "range '" + std::string(item) + "' is descending");
        }
        for (unsigned cpu = *first; cpu <= last; ++cpu) cpus.insert(cpu);

        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return cpus;
}

std::string formatCpuList(const std::set<unsigned>& cpus) {
    std::string out;
    auto it = cpus.begin();
    while (it != cpus.end()) {
        const unsigned first = *it;
        unsigned last = first;
        for (++it; it != cpus.end() && *it == last + 1; ++it) last = *it;
        if (!out.empty()) out += ',';
        out += std::to_string(first);
        if (last != first) out += '-' + std::to_string(last);
    }
    return out;
}

}  // namespace taskscope::common
