// How checking ends other than in MPI_Finalize, in one place:
//  - a rank exits without MPI_Finalize: the program's thread, in exit(),
//    tells its monitor and waits (ExitNotice) until the ranks' monitors have
//    reported it, then every monitor stops;
//  - a fatal report (a deadlock) ends the job with MPI_Abort, once the
//    report has reached the launcher (abort_job).
#pragma once

#include <atomic>
#include <chrono>

#include "report/report.hpp"

namespace mpisentry::monitor {

// A rank's exit without MPI_Finalize, between the program's thread and the monitor's.
class ExitNotice {
 public:
  // The longest an exiting rank waits for its report: the other ranks' monitors
  // meet it within a round (a second at most) unless something is badly wrong.
  static constexpr std::chrono::seconds kReportLimit{10};

  // The program's thread: the status it passed to exit().
  void announce(int status) {
    status_.store(status & 0xff, std::memory_order_release);
    exiting_.store(true, std::memory_order_release);
  }
  // The program's thread, after announce() and waking the monitor: until the
  // report is written, or kReportLimit.
  void wait_for_report() const;

  bool exiting() const { return exiting_.load(std::memory_order_acquire); }
  int status() const { return status_.load(std::memory_order_acquire); }

  // The monitor: the report is written, the monitors no longer meet.
  void end_checking() { checking_ended_.store(true, std::memory_order_release); }
  bool checking_ended() const { return checking_ended_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> exiting_{false};
  std::atomic<int> status_{0};
  std::atomic<bool> checking_ended_{false};
};

// After a fatal report, on rank 0's monitor: says so, lets the launcher
// read the report from stderr, then ends the job with MPI_Abort.
[[noreturn]] void abort_job(report::Check check);

}  // namespace mpisentry::monitor
