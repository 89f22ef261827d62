// Task records written and removed in order, off the loop, through one
// group-committing writer (record_writer.hpp).
#include "manager/records/record_writer.hpp"

#include <unistd.h>

#include <cstdlib>

#include "common/files.hpp"

namespace taskscope::manager {

RecordWriter::RecordWriter(const StateStore& store, common::EventLoop& loop)
    : store_(store), writer_(std::make_unique<common::DurableWriter>(loop)) {}

void RecordWriter::persist(const TaskRecord& record, std::function<void()> durable, bool first) {
    writer_->write(store_.recordFile(record.unit), StateStore::recordText(record), common::kPrivateFileMode,
                   [unit = record.unit, durable = std::move(durable), lastWord = lastWord_](common::Result<void> r) {
                       if (!r) {
                           if (*lastWord) (*lastWord)(unit, r.error());
                           std::abort();
                       }
                       if (durable) durable();
                   },
                   first ? common::DurableWriter::Priority::First : common::DurableWriter::Priority::Normal);
}

void RecordWriter::unpersist(const std::string& unit, std::function<void(common::Result<void>)> gone) {
    // On the writer's thread, in the record's round, not on the loop: a
    // drain forgets thousands of tasks, and each unlink waits for its
    // directory's lock behind the round's renames and the journal; the
    // loop spent most of a 3,000-task drain in unlink (bench/README.md,
    // stop 39). `gone` runs after all four, so a start of the same name
    // (which waits for the forget) never meets an exit file of the old task.
    // A removal that failed leaves a file the next start of the name must
    // remove (its completion runs before `gone`, so before such a start).
    const auto suspect = [this, unit](common::Result<void> r) {
        if (!r) suspectLeftovers(unit);
    };
    writer_->remove(store_.exitFile(unit), suspect);
    writer_->remove(store_.abortedMark(unit), suspect);
    removeProcessSpec(unit);
    writer_->remove(store_.recordFile(unit), [gone = std::move(gone)](common::Result<void> r) {
        if (gone) gone(std::move(r));
    });
}

void RecordWriter::removeProcessSpec(const std::string& unit, std::function<void(common::Result<void>)> gone) {
    writer_->remove(store_.processSpecFile(unit), [gone = std::move(gone)](common::Result<void> r) {
        if (gone) gone(std::move(r));
    });
}

}  // namespace taskscope::manager
