#include "monitor/ending.hpp"

#include <chrono>
#include <thread>

#include "config/exit_status.hpp"
#include "log/log.hpp"
#include "records/lifecycle.hpp"

namespace mpisentry::monitor {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

}  // namespace

void ExitNotice::wait_for_report() const {
  const auto deadline = Clock::now() + kReportLimit;
  while (!checking_ended() && Clock::now() < deadline) std::this_thread::sleep_for(2ms);
}

void abort_job(report::Check check) {
  log::error("{}: aborting the job", report::check_name(check));
  lifecycle::abort_job(config::kDeadlockStatus);
}

}  // namespace mpisentry::monitor
