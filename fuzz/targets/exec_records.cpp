// Fuzz target: the streamer's exec session records (<dir>/<session>.json
// and <dir>/next-session), read back by a streamer that restarts
// (stream::exec::SessionRecords::load, firstUnused). They are files, so
// the input is written to a scratch directory first: byte 0 picks which
// file, the rest is its text. Properties: no crash or hang; load() drops
// (and deletes) what it cannot read; a record it keeps is consistent.

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "fuzz_support.hpp"
#include "stream/exec/exec_records.hpp"

using namespace taskscope;

namespace {

// A plain array, not a std::string: the exit handler below runs after
// static objects are destroyed.
char scratch[] = "/tmp/fuzz-exec-records.XXXXXX";

const std::string& scratchDir() {
    static const std::string dir = [] {
        fuzz::check(::mkdtemp(scratch) != nullptr, "mkdtemp");
        // Each input's file is gone after it, so the directory is empty
        // at exit.
        std::atexit([] { (void)::rmdir(scratch); });
        return std::string(scratch);
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const auto& dir = scratchDir();
    const bool nextFile = data[0] & 1;
    const std::string file = dir + (nextFile ? "/next-session" : "/7.json");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        const auto text = fuzz::text(data + 1, size - 1);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    stream::exec::SessionRecords records(dir);
    if (nextFile) {
        fuzz::check(records.firstUnused() >= 1, "a session number of 0");
    } else {
        for (const auto& r : records.load())
            fuzz::check(r.session == 7 && r.keeper > 0 && r.leader > 0, "an inconsistent record kept");
    }
    (void)::unlink(file.c_str());
    // The fd store's names come back from systemd as they were stored.
    uint64_t session = 0;
    (void)stream::exec::parseExecFdName(std::string(fuzz::text(data + 1, size - 1)), session);
    return 0;
}
