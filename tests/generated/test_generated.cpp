// Random correct programs made from seeds (tests/generated/random_program.c):
// the checker must leave them unchanged, also when ranks compute past the
// timeout; the bugs injected into them must hang without the checker and be
// reported as hard deadlocks in the calls the program says they hang in.
#include <regex>
#include <sstream>
#include <tuple>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const Program kRandomProgram = TEST_PROGRAM(random_program);

// Past the moment a proven verdict may be taken (DEADLOCK-TIMEOUT auto), so
// that a checker taking the ranks that wait for a computing rank as
// deadlocked reports them; few enough delays per seed to keep each job short.
const std::string kDelaySeconds = kLongComputation;
const std::string kDelayPercent = "8";

std::vector<std::string> seed_arguments(int seed) { return {"--seed", std::to_string(seed)}; }

void check_generated_run(int seed, int ranks, const std::vector<std::string>& extra_arguments) {
  std::vector<std::string> arguments = seed_arguments(seed);
  arguments.insert(arguments.end(), extra_arguments.begin(), extra_arguments.end());
  INFO("seed " << seed << " on " << ranks << " ranks");
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, ranks, kRandomProgram, kDeadlockOptions, arguments);
  INFO(describe(plain));
  CHECK(plain.succeeded());
  CHECK(std::regex_match(plain.out, std::regex("ok [0-9a-f]{16}\n")));
}

// What the program announces for a bug: every rank's call and the function
// of the program that makes it.
struct ExpectedCall {
  std::string call;
  std::string function;
};

std::map<int, ExpectedCall> announced_calls(const std::string& out) {
  static const std::regex expect_line(R"(^expect (\d+) (MPI_\w+) (\w+)$)");
  std::map<int, ExpectedCall> calls;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (std::regex_match(line, match, expect_line)) calls[std::stoi(match[1])] = {match[2], match[3]};
  }
  return calls;
}

void check_bug_reported(const std::string& bug, int seed, int ranks) {
  std::vector<std::string> arguments = seed_arguments(seed);
  arguments.insert(arguments.end(), {"--bug", bug});
  INFO("--bug " << bug << ", seed " << seed << " on " << ranks << " ranks");
  Workspace workspace;

  // Without the checker the job hangs: it outlives a correct run's longest delay.
  Job plain_job(workspace, plain_command(ranks, kRandomProgram, arguments), {},
                Seconds{std::stod(kLongComputation) + 1});
  const JobResult plain = plain_job.finish();
  {
    INFO("without the checker:\n" << describe(plain));
    CHECK(plain.timed_out);
  }

  const JobResult result = run_checked(workspace, ranks, kRandomProgram, kDeadlockOptions, arguments);
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.failed());
  CHECK(result.elapsed_seconds < kDeadlockJobSeconds);
  const std::string verdict = "[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error";
  CHECK(result.err.find(verdict) != std::string::npos);
  REQUIRE(result.report.has_value());
  CHECK(result.report->find(verdict) != std::string::npos);

  const std::map<int, ExpectedCall> expected = announced_calls(result.out);
  REQUIRE(expected.size() == static_cast<std::size_t>(ranks));
  const BlockedCalls blocked = parse_blocked_calls(*result.report);
  for (const auto& [rank, call] : expected) {
    const auto found = blocked.call_of.find(rank);
    const std::string listed = found == blocked.call_of.end() ? "(none listed)" : found->second;
    INFO("rank " << rank << " should be blocked in " << call.call << ", the report lists " << listed);
    CHECK(listed.starts_with(call.call + "("));
    const std::string frame = regex_escape(call.function) + R"( \(([^\s()]*/)?random_program\.c:\d+\))";
    INFO("expected a stack frame matching " << frame);
    CHECK(any_line_matches(*result.report, frame));
  }
}

}  // namespace

TEST_CASE("generated: random programs are unchanged by the checker", "[generated]") {
  const auto [seed, ranks] = GENERATE(table<int, int>({{1, 2}, {2, 3}, {3, 4}, {4, 2}, {5, 3}, {6, 4}}));
  check_generated_run(seed, ranks, {});
}

TEST_CASE("generated: random programs with ranks computing past the timeout", "[generated][.slow]") {
  const auto [seed, ranks] = GENERATE(table<int, int>({{22, 2}, {24, 3}, {26, 4}}));
  check_generated_run(seed, ranks, {"--delay-seconds", kDelaySeconds, "--delay-percent", kDelayPercent});
}

TEST_CASE("generated: a send that is never made", "[generated][deadlock]") {
  check_bug_reported("missing-send", 36, 4);
}

TEST_CASE("generated: two synchronous messages received in the wrong order", "[generated][deadlock]") {
  check_bug_reported("swapped-receives", 32, 3);
}

TEST_CASE("generated: a rank that skips a collective", "[generated][deadlock]") {
  check_bug_reported("skipped-collective", 58, 4);
}

TEST_CASE("generated: a rank that skips an MPI_Allreduce waits in another communicator's MPI_Allreduce",
          "[generated][deadlock]") {
  // Ranks 0, 1 and 3 in MPI_Allreduce on MPI_COMM_WORLD, rank 2 in the final
  // MPI_Allreduce on a communicator of its own: the same call, no match.
  check_bug_reported("skipped-collective", 33, 4);
}
