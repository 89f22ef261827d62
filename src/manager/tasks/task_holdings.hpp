#pragma once
// What one task holds beyond its entry in the registry, as one value: its
// place in the CPU pool, its place in its allocation's slices, the dirs
// taskscope made for it, its spool entry and its process spec file.
//
// Its start fills it step by step (recovery fills it from the record), and
// it is given back one way, part by part, whoever ends the task: a failed
// start's undo (start_undo.cpp, in the start's own order), a task's end
// (its cores), a forget and recovery's sweep of a start that never ran
// (releaseRest). A part given back is no longer held, so nothing is given
// back twice, and nothing is forgotten: the registry only erases an entry.
//
// No logging here: what could not be given back is said to the caller.

#include <functional>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "common/worker.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/node/allocation_slices.hpp"
#include "manager/node/cpu_pool.hpp"
#include "manager/records/log_spool.hpp"
#include "manager/records/record_writer.hpp"

namespace taskscope::manager {

/// The daemon's parts that a task's holdings are taken from and given back
/// to; they outlive every task.
struct HoldingParts {
    CpuPool& cpus;
    AllocationSlices* slices;  ///< null: no nested layout (no slice places)
    const LogSpool& spool;
    RecordWriter& records;
    /// Dirs are made and removed on it, one job after another: a later
    /// start of the allocation makes its dir again after a removal.
    common::Worker& startWorker;
};

class TaskHoldings {
public:
    TaskHoldings() = default;
    explicit TaskHoldings(std::string unit) : unit_(std::move(unit)) {}

    const std::string& unit() const { return unit_; }

    // Taken (each from the step that takes it).
    void tookCores() { cores_ = true; }
    void tookSlicePlace() { slicePlace_ = true; }
    void tookDirs(OwnedTaskDirs dirs) { dirs_ = std::move(dirs); }
    void tookSpoolEntry() { spoolEntry_ = true; }
    void tookProcessSpec() { processSpec_ = true; }

    bool holdsCores() const { return cores_; }
    bool holdsSlicePlace() const { return slicePlace_; }
    bool holdsDirs() const { return dirs_.has_value(); }
    bool holdsSpoolEntry() const { return spoolEntry_; }
    bool holdsProcessSpec() const { return processSpec_; }

    /// The dirs were never made (the start's worker turn was skipped).
    void dirsNeverMade() { dirs_.reset(); }
    /// The record writer removed the process spec with the record (unpersist).
    void processSpecGone() { processSpec_ = false; }
    /// The task ran: its spool entry is the streamer's from its end on
    /// (marked exited, drained and deleted there), no longer the task's.
    void spoolEntryHandedOver() { spoolEntry_ = false; }

    // Given back, each once; a part not held is left alone.
    /// Its place in the pool; true when the shared pool grew (the shared
    /// tasks are to be given it).
    [[nodiscard]] bool releaseCores(const HoldingParts& parts);
    /// Its weight leaves its slices' sums; the allocation's slice goes with
    /// the allocation's last task.
    void releaseSlicePlace(const HoldingParts& parts);
    /// A spool entry whose output nobody will read (the task never ran).
    void releaseSpoolEntry(const HoldingParts& parts);
    /// The process spec file, off the loop; `done` on the loop.
    void releaseProcessSpec(const HoldingParts& parts, std::function<void(common::Result<void>)> done);
    /// The dirs, on the start worker, in order with every start's dirs;
    /// the allocation's too when `lastOfAlloc` (asked of the registry now,
    /// on the loop). `removed` on the loop with the removal's result.
    void releaseDirs(const HoldingParts& parts, bool lastOfAlloc,
                     std::function<void(common::Result<void>)> removed);

    /// What the task still holds once its record is off the disk (a forget,
    /// a start found never to have run), in one order: the spool entry, the
    /// process spec, the slice place and the cores at once, then the dirs on
    /// the start worker; `dirsRemoved` on the loop once they are gone, with
    /// the removal's result. Returns whether the shared pool grew.
    [[nodiscard]] bool releaseRest(const HoldingParts& parts, bool lastOfAlloc,
                                   std::function<void(common::Result<void>)> dirsRemoved);

private:
    std::string unit_;
    bool cores_ = false;
    bool slicePlace_ = false;
    std::optional<OwnedTaskDirs> dirs_;
    bool spoolEntry_ = false;
    bool processSpec_ = false;
};

}  // namespace taskscope::manager
