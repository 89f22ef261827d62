#pragma once
// The registry's gRPC calls to plugins block (for seconds, when a plugin
// hangs): they run on a worker thread of their own, never on the loop.

#include "common/worker.hpp"

namespace taskscope::plugins {

using ProbeWorker = common::Worker;

}  // namespace taskscope::plugins
