// Giving back what a task holds, part by part (task_holdings.hpp). Each
// release clears its part before it starts, and no closure sent off the
// loop refers to the holdings: the task's entry may be erased before the
// files are gone.
#include "manager/tasks/task_holdings.hpp"

#include <utility>

namespace taskscope::manager {

bool TaskHoldings::releaseCores(const HoldingParts& parts) {
    if (!std::exchange(cores_, false)) return false;
    return parts.cpus.leave(unit_);
}

void TaskHoldings::releaseSlicePlace(const HoldingParts& parts) {
    if (!std::exchange(slicePlace_, false)) return;
    if (parts.slices) parts.slices->leave(unit_);
}

void TaskHoldings::releaseSpoolEntry(const HoldingParts& parts) {
    if (!std::exchange(spoolEntry_, false)) return;
    parts.spool.remove(unit_);
}

void TaskHoldings::releaseProcessSpec(const HoldingParts& parts, std::function<void(common::Result<void>)> done) {
    if (!std::exchange(processSpec_, false)) {
        if (done) done({});
        return;
    }
    // Off the loop, as every removal of a task's files (record_writer.hpp).
    parts.records.removeProcessSpec(unit_, std::move(done));
}

void TaskHoldings::releaseDirs(const HoldingParts& parts, bool lastOfAlloc,
                               std::function<void(common::Result<void>)> removed) {
    if (!dirs_) {
        if (removed) removed({});
        return;
    }
    auto dirs = std::move(*dirs_);
    dirs_.reset();
    parts.startWorker.submit([dirs = std::move(dirs), lastOfAlloc,
                              removed = std::move(removed)]() -> std::function<void()> {
        auto result = dirs.remove(lastOfAlloc);
        return [result = std::move(result), removed] {
            if (removed) removed(result);
        };
    });
}

bool TaskHoldings::releaseRest(const HoldingParts& parts, bool lastOfAlloc,
                               std::function<void(common::Result<void>)> dirsRemoved) {
    releaseSpoolEntry(parts);
    // Not waited for: the record's removal, answered already, took it with
    // it where there was one; what is left is a file no task reads.
    releaseProcessSpec(parts, {});
    releaseSlicePlace(parts);
    const bool grew = releaseCores(parts);
    releaseDirs(parts, lastOfAlloc, std::move(dirsRemoved));
    return grew;
}

}  // namespace taskscope::manager
