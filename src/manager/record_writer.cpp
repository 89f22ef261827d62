#include "manager/record_writer.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "common/files.hpp"

namespace taskscope::manager {

RecordWriter::RecordWriter(const StateStore& store, common::EventLoop& loop)
    : store_(store), writer_(std::make_unique<common::DurableWriter>(loop)) {}

void RecordWriter::persist(const TaskRecord& record, std::function<void()> durable) {
    writer_->write(store_.recordFile(record.unit), StateStore::recordText(record), common::kPrivateFileMode,
                   [unit = record.unit, durable = std::move(durable)](common::Result<void> r) {
                       if (!r) {
                           spdlog::critical("Failed to save task {}: {}", unit, r.error().message);
                           std::abort();
                       }
                       if (durable) durable();
                   });
}

void RecordWriter::unpersist(const std::string& unit, std::function<void(common::Result<void>)> gone) {
    ::unlink(store_.exitFile(unit).c_str());
    ::unlink(store_.abortedMark(unit).c_str());
    ::unlink(store_.processSpecFile(unit).c_str());
    writer_->remove(store_.recordFile(unit), [gone = std::move(gone)](common::Result<void> r) {
        if (gone) gone(std::move(r));
    });
}

}  // namespace taskscope::manager
