#pragma once
// The plugin's log channel. go-plugin's client reads the plugin's stderr
// line by line as its log: a line that is an hclog JSON record is logged
// at the record's "@level" with its fields, anything else at debug
// (go-plugin client.go logStderr, log_entry.go). Nomad's agent may go
// away while the plugin runs on (the plugin outlives an agent restart,
// and an agent that reattaches reads no stderr at all: a reattached
// go-plugin client has no pipes), so a record must neither stall the
// caller (a pipe nobody drains) nor kill it (SIGPIPE: main ignores it),
// and records after that still go somewhere: the journal when there is
// one, else nowhere.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace taskscope::nomad {

/// Makes writes to stderr non-blocking when it is a pipe (a terminal is
/// left alone: its file description is shared with the shell). Call
/// once at start.
void prepareLogChannel();

/// Writes one record line (with its newline) in one write(2), so that
/// records of calls on different threads do not mix. A record that would
/// block is dropped (the reader is alive but behind); when the reader is
/// gone (EPIPE) or stderr fails otherwise, stderr is moved to the journal
/// (sd_journal_stream_fd, identifier nomad-driver-taskscope), or to
/// /dev/null where there is no journal, and the record written there.
void writeLogRecord(std::string_view line);

/// An hclog JSON record ("@level", "@message", "@timestamp", "@module"
/// and the fields as strings) through writeLogRecord.
void logRecord(const char* level, const std::string& message,
               const std::vector<std::pair<std::string, std::string>>& fields = {});

/// Where stderr went after its reader left: "stderr", "journal" or "null".
std::string logChannel();

}  // namespace taskscope::nomad
