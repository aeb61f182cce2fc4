#include "log/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <string>

namespace mpisentry::log {

spdlog::logger& logger() {
  // Not registered in spdlog's registry: the program may use spdlog itself.
  static spdlog::logger* instance = [] {
    auto* created = new spdlog::logger("mpisentry", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_pattern("[mpisentry] %^%l%$: %v");
    created->set_level(spdlog::level::info);
    created->flush_on(spdlog::level::trace);
    return created;
  }();
  return *instance;
}

void set_rank(int world_rank) {
  logger().set_pattern("[mpisentry " + std::to_string(world_rank) + "] %^%l%$: %v");
}

void set_verbosity(int verbose) {
  logger().set_level(verbose <= 0 ? spdlog::level::err
                     : verbose == 1 ? spdlog::level::info
                                    : spdlog::level::debug);
}

}  // namespace mpisentry::log
