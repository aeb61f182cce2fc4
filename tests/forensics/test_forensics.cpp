// Forensics of hangs and crashes: ranks that wait for a rank outside MPI are
// warned about (GLOBAL:DEADLOCK:OUTSIDE_MPI), DUMP-SIGNAL dumps a running or
// hung job that then goes on, and a rank that crashes (LOCAL:EXIT:SIGNAL) or
// exits without MPI_Finalize (LOCAL:EXIT:BEFORE_MPI_FINALIZE) is reported
// where it was, while the job ends as it would without the checker.
#include <csignal>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

// ---- Ranks waiting for a rank outside MPI ----

constexpr int kOutsideRanks = 4;
// DEADLOCK-WARNING 2 s; rank 0 stays outside MPI three times that long.
const std::vector<std::string> kWarningOptions = {"--deadlock-warning", "2s", "--deadlock-timeout", "3s"};
constexpr double kOutsideSeconds = 6;
const std::string kOutsideArgument = std::to_string(kOutsideSeconds);
const std::string kOutsideHeadline = "[0] WARNING: GLOBAL:DEADLOCK:OUTSIDE_MPI: warning";

// `headline` once on stderr and once in the report file.
void check_reported_once(const JobResult& result, const std::string& headline) {
  CHECK(count_occurrences(result.err, headline) == 1);
  REQUIRE(result.report.has_value());
  CHECK(count_occurrences(*result.report, headline) == 1);
}

// The job ended by itself with status 0, without error, with exactly one
// OUTSIDE_MPI warning on stderr and in the report: ranks of 1-3 waiting in
// MPI_Allreduce for rank 0, outside MPI at the marked line tagged `way` of
// `function`, whose stack the report shows. The warning may name only the
// first of ranks 1-3 to pass DEADLOCK-WARNING: they enter MPI_Allreduce
// moments apart.
void check_outside_warning(const JobResult& result, const Program& program, const std::string& way,
                           const std::string& function) {
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.succeeded());
  CHECK(result.err.find("ERROR") == std::string::npos);
  check_reported_once(result, kOutsideHeadline);
  const std::vector<int> lines = marked_lines(program.source, "outside [" + way + "]");
  REQUIRE(lines.size() == 1);
  const std::string frame = frame_pattern(function, program.source, lines[0]);
  INFO("expected the culprit line and a stack frame matching " << frame);
  const std::regex culprit_line(R"(^\[0\] WARNING: .*\branks? ([\d,-]+) ha(?:s|ve) waited .*MPI_Allreduce.*\brank 0\b.*outside MPI.*)" + frame);
  std::istringstream report(*result.report);
  std::smatch culprit;
  std::string line;
  while (std::getline(report, line) && !std::regex_search(line, culprit, culprit_line)) continue;
  REQUIRE(!culprit.empty());
  INFO(line);
  for (int rank : expand_ranks(culprit[1])) CHECK((rank >= 1 && rank <= 3));
  CHECK(any_line_matches(*result.report, R"(^\[0\] WARNING: +)" + frame));
}

// ---- Dumps on DUMP-SIGNAL ----

const std::vector<std::string> kDumpOptions = {"--dump-signal", "SIGUSR1"};
// Rank 0's dump: this headline, then lines with the same prefix.
const std::string kDumpLinePrefix = "[0] INFO: ";
const std::string kDumpHeadline = kDumpLinePrefix + "DUMP:";
// How long the job runs before the signal, so that the checker knows the
// ranks' state.
constexpr Seconds kBeforeDump{3};
// How long the dump may take to appear in the report file.
constexpr Seconds kDumpTime{15};
// dump_running's running time: well past the signal and the dump.
const std::string kRunningSeconds = "12";

struct Dumped {
  JobResult result;
  bool dumped = false;  // the dump headline reached the report file
};

// Starts `command`, sends SIGUSR1 to mpiexec once rank 0 said "ready" and
// kBeforeDump passed, waits for the dump (when `dumps`), and lets the job
// run to its end.
Dumped signal_once_and_finish(const Workspace& workspace, const std::vector<std::string>& command, bool dumps) {
  Job job(workspace, command);
  REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
  std::this_thread::sleep_for(kBeforeDump);
  job.signal_leader(SIGUSR1);
  Dumped dumped;
  dumped.dumped = dumps && job.wait_for_text(workspace.report_path(), kDumpHeadline, kDumpTime);
  dumped.result = job.finish();
  return dumped;
}

// One dump, on stderr and in the report, in a job that ended well.
void check_one_dump(const Dumped& dumped) {
  const JobResult& result = dumped.result;
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(dumped.dumped);
  CHECK(result.succeeded());
  CHECK(result.err.find("ERROR") == std::string::npos);
  check_reported_once(result, kDumpHeadline);
}

// The dump in `report`: its headline and the lines of its prefix that follow.
std::string dump_section(const std::string& report) {
  const std::size_t start = report.find(kDumpHeadline);
  if (start == std::string::npos) return "";
  std::size_t end = start;
  while (end < report.size() && report.compare(end, kDumpLinePrefix.size(), kDumpLinePrefix) == 0) {
    const std::size_t line_end = report.find('\n', end);
    end = line_end == std::string::npos ? report.size() : line_end + 1;
  }
  return report.substr(start, end - start);
}

// Each of the ranks 0..ranks-1 is in one of the dump's classes.
void check_every_rank_classed(const BlockedCalls& dump, int ranks) {
  std::vector<bool> classed(ranks, false);
  for (const std::vector<int>& rank_class : dump.classes)
    for (int rank : rank_class)
      if (rank >= 0 && rank < ranks) classed[rank] = true;
  for (int rank = 0; rank < ranks; ++rank) {
    INFO("rank " << rank << " in a class of the dump");
    CHECK(classed[rank]);
  }
}

// ---- Crashes and early exits ----

// One error `check` by `rank`, on stderr and in the report, and a line of
// it that names the line marked `mark`, in `function`.
void check_exit_report(const JobResult& result, const Program& program, int rank, const std::string& check,
                       const std::string& function, const std::string& mark) {
  INFO(describe(result));
  const std::string prefix = "[" + std::to_string(rank) + "] ERROR: ";
  CHECK(count_occurrences(result.err, prefix + check + ": fatal error") == 1);
  REQUIRE(result.report.has_value());
  CHECK(count_occurrences(*result.report, prefix + check + ": fatal error") == 1);
  const std::vector<int> lines = marked_lines(program.source, mark);
  REQUIRE(lines.size() == 1);
  const std::string frame = regex_escape(prefix) + ".*" + frame_pattern(function, program.source, lines[0]);
  INFO("expected a line matching " << frame);
  CHECK(any_line_matches(result.err, frame));
  CHECK(any_line_matches(*result.report, frame));
}

}  // namespace

TEST_CASE("outside_mpi: ranks waiting in MPI_Allreduce for a spinning rank 0 are warned about once",
          "[forensics][outside][.slow]") {
  const Program program = TEST_PROGRAM(outside_mpi);
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(kOutsideRanks, program, {"spin", kOutsideArgument}));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  const JobResult checked = run_checked(workspace, kOutsideRanks, program, kWarningOptions, {"spin", kOutsideArgument});
  check_outside_warning(checked, program, "spin", "spin");
  CHECK(checked.out == plain.out);
}

TEST_CASE("outside_mpi: a sleeping rank 0 is warned about once and sleeps its whole time",
          "[forensics][outside]") {
  const Program program = TEST_PROGRAM(outside_mpi);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, kOutsideRanks, program, kWarningOptions, {"sleep", kOutsideArgument});
  check_outside_warning(checked, program, "sleep", "rest");
  std::smatch slept;
  const std::regex slept_line(R"(rank 0 slept ([0-9.]+) s of ([0-9.]+) s)");
  REQUIRE(std::regex_search(checked.out, slept, slept_line));
  INFO(slept[0]);
  // Not cut short by the checker's signals.
  CHECK(std::stod(slept[1]) >= std::stod(slept[2]));
}

TEST_CASE("outside_mpi: a rank outside MPI for less than DEADLOCK-WARNING is no warning", "[forensics][outside]") {
  // DEADLOCK-WARNING 2.5 times rank 0's computation, which is long enough
  // for a warning to come when the threshold is ignored (the warning comes
  // at the monitor's next round, up to about 3 s after the threshold).
  check_unchanged_by_checker(Workspace(), kOutsideRanks, TEST_PROGRAM(outside_mpi),
                             {"--deadlock-warning", "10s", "--deadlock-timeout", "12s"}, {"spin", "4"});
}

TEST_CASE("dump_running: DUMP-SIGNAL dumps a healthy job once, and it goes on unchanged",
          "[forensics][dump][.slow]") {
  constexpr int kRanks = 3;
  const Program program = TEST_PROGRAM(dump_running);
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(kRanks, program, {kRunningSeconds}));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  const Dumped dumped = signal_once_and_finish(
      workspace, checked_command(workspace, kRanks, program, kDumpOptions, {kRunningSeconds}), true);
  check_one_dump(dumped);
  INFO(describe(dumped.result));
  CHECK(dumped.result.out == plain.out);
  check_every_rank_classed(parse_blocked_calls(dump_section(dumped.result.report.value_or(""))), kRanks);
}

TEST_CASE("dump_running: the program's own SIGUSR1 handler still runs with DUMP-SIGNAL SIGUSR1",
          "[forensics][dump][.slow]") {
  constexpr int kRanks = 3;
  const Program program = TEST_PROGRAM(dump_running);
  const std::vector<std::string> args = {kRunningSeconds, "own-handler"};
  Workspace workspace;
  const Dumped plain = signal_once_and_finish(workspace, plain_command(kRanks, program, args), false);
  INFO("without the checker:\n" << describe(plain.result));
  REQUIRE(plain.result.succeeded());
  const Dumped dumped =
      signal_once_and_finish(workspace, checked_command(workspace, kRanks, program, kDumpOptions, args), true);
  check_one_dump(dumped);
  INFO(describe(dumped.result));
  for (int rank = 0; rank < kRanks; ++rank)
    CHECK(dumped.result.out.find("rank " + std::to_string(rank) + ": own SIGUSR1 handler ran 1 time(s)") !=
          std::string::npos);
  CHECK(dumped.result.out == plain.result.out);
}

TEST_CASE("dump_hang: DUMP-SIGNAL dumps a hung job's blocked calls and waits, and the job goes on",
          "[forensics][dump]") {
  constexpr int kRanks = 3;
  // Far beyond the test: only the test ends the job.
  const std::vector<std::string> options = {"--deadlock-timeout", "60s", "--dump-signal", "SIGUSR1"};
  // Long enough to tell a job the dump ended from one that went on.
  constexpr Seconds kGoesOn{4};
  constexpr Seconds kEndedJobTimeout{60};
  const Program program = TEST_PROGRAM(dump_hang);
  Workspace workspace;
  Job job(workspace, checked_command(workspace, kRanks, program, options), {}, kEndedJobTimeout);
  REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
  std::this_thread::sleep_for(kBeforeDump);
  job.signal_leader(SIGUSR1);
  const bool dumped = job.wait_for_text(workspace.report_path(), kDumpHeadline, kDumpTime);
  std::this_thread::sleep_for(kGoesOn);
  const bool went_on = job.running();
  job.signal_group(SIGTERM);
  const JobResult result = job.finish();
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(dumped);
  CHECK(went_on);
  check_reported_once(result, kDumpHeadline);
  const std::string& report = *result.report;
  const std::string dump = dump_section(report);
  INFO("the dump:\n" << dump);
  BlockedCalls blocked = parse_blocked_calls(dump);  // [] gives "" for a rank left out
  check_every_rank_classed(blocked, kRanks);
  const std::vector<int> lines = marker_lines(program.source);
  REQUIRE(lines.size() == 1);
  CHECK(any_line_matches(dump, R"(^\[0\] INFO: +)" + frame_pattern("receive_from_next", program.source, lines[0])));
  // Each rank's receive, and whom it waits for: the next rank.
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string next = std::to_string((rank + 1) % kRanks);
    INFO("rank " << rank);
    CHECK(any_line_matches(blocked.call_of[rank], R"(^MPI_Recv\(.*source=)" + next + ","));
    CHECK(blocked.waits_for[rank] == "rank " + next);
  }
}

TEST_CASE("segfault: a rank's SIGSEGV is reported at its line and ends the job as without the checker",
          "[forensics][crash]") {
  const Program program = TEST_PROGRAM(segfault);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions);
  CHECK(checked.failed());
  check_ending_possible_without_checker(workspace, plain_command(2, program), checked);
  check_exit_report(checked, program, 1, "LOCAL:EXIT:SIGNAL", "crash_here", "crashes");
  INFO(describe(checked));
  CHECK(any_line_matches(checked.err, R"(^\[1\] ERROR: .*\brank 1\b.*SIGSEGV)"));
  CHECK(checked.err.find("GLOBAL:DEADLOCK") == std::string::npos);
}

TEST_CASE("segfault: a rank that crashes while computing after an MPI call is said to run outside MPI",
          "[forensics][crash]") {
  const Program program = TEST_PROGRAM(segfault);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions, {"after-computing"});
  check_exit_report(checked, program, 1, "LOCAL:EXIT:SIGNAL", "crash_here", "crashes");
  INFO(describe(checked));
  CHECK(any_line_matches(checked.err, R"(^\[1\] ERROR: .*\brank 1\b.*SIGSEGV.* while running outside MPI)"));
  CHECK(checked.err.find("polling") == std::string::npos);
}

TEST_CASE("segfault: the program's own SIGSEGV handler still runs", "[forensics][crash]") {
  const Program program = TEST_PROGRAM(segfault);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions, {"own-handler"});
  check_ending_possible_without_checker(workspace, plain_command(2, program, {"own-handler"}), checked);
  INFO(describe(checked));
  CHECK(checked.out.find("own SIGSEGV handler ran") != std::string::npos);
  check_exit_report(checked, program, 1, "LOCAL:EXIT:SIGNAL", "crash_here", "crashes");
}

TEST_CASE("early_exit: a rank's exit(3) without MPI_Finalize is reported, the job's status unchanged",
          "[forensics][exit]") {
  const Program program = TEST_PROGRAM(early_exit);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions);
  check_ending_possible_without_checker(workspace, plain_command(2, program), checked);
  INFO(describe(checked));
  check_exit_report(checked, program, 0, "LOCAL:EXIT:BEFORE_MPI_FINALIZE", "leave_early", "exits");
  CHECK(any_line_matches(checked.err, R"(^\[0\] ERROR: .*\brank 1\b.*\bstatus 3\b.*MPI_Finalize)"));
  // The other rank's class: rank 0 waits in MPI_Recv.
  const BlockedCalls blocked = parse_blocked_calls(*checked.report);
  CHECK((blocked.call_of.contains(0) && blocked.call_of.at(0).starts_with("MPI_Recv(")));
  CHECK(checked.err.find("GLOBAL:DEADLOCK") == std::string::npos);
}
