// Ranks that poll (MPI_Test, MPI_Iprobe) without anything completing are
// not blocked in MPI: no deadlock, but a warning once it lasts.
#include <csignal>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::string kWarning = "[0] WARNING: GLOBAL:DEADLOCK:NO_PROGRESS: warning";
constexpr int kWarningSeconds = 4;
// Past the timeout, so that a checker taking polling for blocking would
// report a deadlock before the warning.
const std::vector<std::string> kNoProgressOptions = {"--deadlock-timeout", kDeadlockTimeout, "--deadlock-warning",
                                                     std::to_string(kWarningSeconds) + "s"};

}  // namespace

TEST_CASE("poll_forever: endless polling is reported as no progress", "[noprogress]") {
  Workspace workspace;
  const std::string poll_limit_seconds = "20";
  Job job(workspace,
          checked_command(workspace, 2, TEST_PROGRAM(poll_forever), kNoProgressOptions, {poll_limit_seconds}));
  const bool warned = job.wait_for_text(workspace.stderr_path(), kWarning, kJobTimeout);
  // The warning is all this test waits for; the program would poll on.
  job.signal_group(SIGKILL);
  const JobResult result = job.finish();
  INFO(describe(result));
  REQUIRE(warned);
  const std::string after_warning = result.err.substr(result.err.find(kWarning));
  CHECK(after_warning.find("MPI_Test") != std::string::npos);
  CHECK(result.err.find("GLOBAL:DEADLOCK:HARD") == std::string::npos);
}

TEST_CASE("poll_then_receive: one warning for a long poll that succeeds", "[noprogress][.slow]") {
  Workspace workspace;
  // The warning compares the ranks' average stall with DEADLOCK-WARNING and
  // a computing rank does not stall: with one of two ranks polling it comes
  // after twice the threshold, so rank 1 computes for three times it.
  const std::string compute_seconds = std::to_string(3 * kWarningSeconds);
  const JobResult result =
      run_checked(workspace, 2, TEST_PROGRAM(poll_then_receive), kNoProgressOptions, {compute_seconds});
  INFO(describe(result));
  CHECK(result.succeeded());
  CHECK(count_occurrences(result.err, kWarning) == 1);
  CHECK(result.err.find("ERROR") == std::string::npos);
}
