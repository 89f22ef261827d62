#pragma once
// Where a task's scope goes: the nested slice layout (issue 31).
//
//   nomad.slice                                  the configured slice
//   ├── nomad-share.slice                        tasks on the shared cores (its AllowedCPUs is the pool)
//   │   └── nomad-share-b2a.slice                a bucket: a stable hash of the allocation id
//   │       └── nomad-share-b2a-<alloc>.slice    the allocation
//   │           ├── <alloc>-<task>.scope         the task (its name as before)
//   │           └── nomad-share-b2a-<alloc>-o1.slice   overflow, once the allocation holds `cap` scopes
//   └── nomad-reserve.slice                      tasks with reserved cores (no more than the node's cores)
//       └── nomad-reserve-<alloc>.slice
//           └── <alloc>-<task>.scope
//
// Why: systemd's work for each start and for each collected unit grows
// with the members of every slice above the unit (bench/README.md), so no
// slice may hold more than a bounded number. In a slice name every '-' is a
// level, so an allocation id is escaped whole (its '-' too) with systemd's
// \xNN escaping, which parseAllocationSlice() reverses. (systemd
// src/basic/unit-name.c, do_escape(): '-', '\\' and every character outside
// [A-Za-z0-9:_.] as \xNN, a leading '.' too; a slice's parents are its name
// cut at each '-', slice_build_parent_slice().)
// Pure: names only, nothing is asked of systemd here.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace taskscope::scope {

/// Buckets one level of the layout may have (two hex digits name one).
inline constexpr unsigned kMaxBucketFanOut = 256;

struct SliceLayout {
    std::string root = "nomad.slice";  ///< the configured slice
    unsigned fanOut = 64;              ///< buckets below the share slice
    unsigned cap = 100;                ///< scopes an allocation (or overflow) slice holds directly
};

/// Which of the two trees a task is in.
enum class Pool { Shared, Reserved };

/// Every slice a task's scope sits in, outermost first (the configured
/// slice itself not included), and the allocation's own slice.
struct TaskSlices {
    std::vector<std::string> chain;  ///< e.g. share, bucket, allocation[, overflow]
    std::string allocation;          ///< the allocation's slice
    std::string parent() const { return chain.back(); }
};

/// "<stem>-share.slice" / "<stem>-reserve.slice".
std::string poolSlice(const SliceLayout& layout, Pool pool);
/// FNV-1a of the id, modulo the fan-out: the same on every node and run.
unsigned bucketOf(std::string_view allocId, unsigned fanOut);
std::string bucketSlice(const SliceLayout& layout, unsigned bucket);
/// The allocation's slice in `pool`, or InvalidName when the escaped id
/// does not fit a slice name (with room for an overflow suffix).
common::Result<std::string> allocationSlice(const SliceLayout& layout, std::string_view allocId, Pool pool);
/// The n-th (n >= 1) overflow slice of an allocation's slice.
std::string overflowSlice(std::string_view allocationSlice, unsigned n);
/// The chain for a task of `allocId` placed in overflow slice `overflow`
/// (0: the allocation's slice itself).
common::Result<TaskSlices> taskSlices(const SliceLayout& layout, std::string_view allocId, Pool pool,
                                      unsigned overflow);

/// An allocation or overflow slice of this layout, read back from its name.
struct AllocationSliceName {
    std::string allocId;
    Pool pool = Pool::Shared;
    unsigned overflow = 0;  ///< 0: the allocation's own slice
};
std::optional<AllocationSliceName> parseAllocationSlice(const SliceLayout& layout, std::string_view slice);

/// A slice's ancestors as systemd derives them from its name, outermost
/// first ("a-b-c.slice" -> "a.slice", "a-b.slice"); "-.slice" has none.
std::vector<std::string> sliceAncestors(std::string_view slice);

/// Escapes every character a slice-name component cannot hold ('-', and
/// what escapeComponent escapes) as \xNN; unescapeSliceComponent reverses it.
std::string escapeSliceComponent(std::string_view text);
std::optional<std::string> unescapeSliceComponent(std::string_view text);

}  // namespace taskscope::scope
