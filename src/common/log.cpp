#include "common/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace taskscope::common {

void setupLogging(const std::string& ident, bool verbose) {
    std::shared_ptr<spdlog::logger> logger;
    if (std::getenv("JOURNAL_STREAM") != nullptr) {
        // Structured journal entries keep the priority; the journal adds
        // its own timestamp and unit, so the pattern is just the message.
        auto sink = std::make_shared<spdlog::sinks::systemd_sink_st>(ident);
        logger = std::make_shared<spdlog::logger>(ident, sink);
        logger->set_pattern("%v");
    } else {
        logger = spdlog::stderr_logger_st(ident);
        logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %n %l: %v");
    }
    logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
    logger->flush_on(spdlog::level::debug);
    spdlog::set_default_logger(logger);
}

}  // namespace taskscope::common
