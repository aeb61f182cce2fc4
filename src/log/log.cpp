#include "log/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace mpisentry::log {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kStderrDrainLimit = 2s;
constexpr auto kStderrForwarding = 100ms;  // from the launcher's proxy on to mpiexec

spdlog::level::level_enum spdlog_level(Level level) {
  switch (level) {
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
  }
  return spdlog::level::err;
}

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

}  // namespace

bool shown(Level level) { return logger().should_log(spdlog_level(level)); }

void write(Level level, std::string_view message) {
  logger().log(spdlog_level(level), spdlog::string_view_t(message.data(), message.size()));
}

void set_rank(int world_rank) {
  logger().set_pattern("[mpisentry " + std::to_string(world_rank) + "] %^%l%$: %v");
}

void wait_for_stderr_to_drain() {
  const auto deadline = Clock::now() + kStderrDrainLimit;
  int unread = 0;
  while (ioctl(STDERR_FILENO, FIONREAD, &unread) == 0 && unread > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(kStderrForwarding);
}

void set_verbosity(int verbose) {
  logger().set_level(verbose <= 0 ? spdlog::level::err
                     : verbose == 1 ? spdlog::level::info
                                    : spdlog::level::debug);
}

}  // namespace mpisentry::log
