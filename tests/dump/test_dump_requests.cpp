// DUMP-SIGNAL reaching one rank, or all of them many times over: one
// report by rank 0 with every rank per request, and the program goes on.
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

constexpr int kRanks = 3;
const std::string kComputeSeconds = "12";
constexpr Seconds kDumpTime{15};
const std::string kDumpHeadline = "[0] INFO: DUMP: on request";

// The pid each rank printed ("pid <rank> <pid>"), by rank.
std::map<int, pid_t> rank_pids(const std::string& out) {
  std::map<int, pid_t> pids;
  const std::regex line(R"(^pid (\d+) (\d+)$)");
  std::istringstream lines(out);
  for (std::string text; std::getline(lines, text);) {
    std::smatch match;
    if (std::regex_match(text, match, line)) pids[std::stoi(match[1])] = std::stoi(match[2]);
  }
  return pids;
}

// The line of the source that carries `marker`.
int line_with(const std::string& source, const std::string& marker) {
  std::ifstream file(source);
  int number = 0;
  for (std::string text; std::getline(file, text);) {
    ++number;
    if (text.find(marker) != std::string::npos) return number;
  }
  return 0;
}

}  // namespace

TEST_CASE("dump_requests: DUMP-SIGNAL to one rank, then a burst to all, makes two dumps and the job goes on",
          "[integration][dump]") {
  const Workspace workspace;
  const Program program = TEST_PROGRAM(dump_requests);
  Job job(workspace,
          checked_command(workspace, kRanks, program, {"--dump-signal", "SIGUSR1"}, {kComputeSeconds}));
  REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
  const std::map<int, pid_t> pids = rank_pids(read_file(workspace.stdout_path()).value_or(""));
  REQUIRE(pids.size() == static_cast<std::size_t>(kRanks));

  // One rank is enough: the monitors' next round carries the request. Rank 0
  // must have computed for over a second first: a rank that called MPI less
  // than a second ago counts as polling, not as running outside MPI (the
  // dump said "polling" in a CI run whose round came 1.0 s into the compute).
  std::this_thread::sleep_for(Seconds{2});
  REQUIRE(::kill(pids.at(2), SIGUSR1) == 0);
  CHECK(job.wait_for_text(workspace.stderr_path(), kDumpHeadline, kDumpTime));
  const std::string first = read_file(workspace.report_path()).value_or("");
  const int compute_line = line_with(program.source, "mpisentry: computes");
  INFO(first);
  CHECK(any_line_matches(first, R"(^\[0\] INFO:    ranks 1-2 have waited \d:\d\d in MPI_Allreduce for rank 0, )"
                                R"(which runs outside MPI at compute_for \()"));
  CHECK(any_line_matches(first, R"(^\[0\] INFO:       )" + frame_pattern("compute", program.source, compute_line)));
  CHECK(any_line_matches(first, R"(^\[0\] INFO:    \[ranks 1-2 \(2 ranks\)\] blocked for)"));

  // A burst to every rank (mpiexec passes each on): merged into one dump.
  // Requests within a second of a dump are taken as part of it: wait longer.
  std::this_thread::sleep_for(Seconds{2});
  for (int burst = 0; burst < 5; ++burst) job.signal_group(SIGUSR1);
  const JobResult result = job.finish();
  INFO(describe(result));
  CHECK(result.succeeded());
  for (int rank = 0; rank < kRanks; ++rank)
    CHECK(result.out.find("rank " + std::to_string(rank) + " sum 3") != std::string::npos);
  REQUIRE(result.report.has_value());
  CHECK(count_occurrences(*result.report, kDumpHeadline + "\n") == 2);
  CHECK(count_occurrences(result.err, kDumpHeadline + "\n") == 2);
}
