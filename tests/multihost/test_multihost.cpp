// Jobs whose ranks run on several hosts (the bed of scripts/multihost): the
// monitors' exchange, the stacks and the dumps travel over TCP, every host
// has its own name, /proc and processes. Each case spreads its ranks so that
// the ranks it is about run on another host than rank 0, whose monitor judges.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <catch2/catch.hpp>

#include "../deadlock/ssend_ring.hpp"
#include "../graph/partial_cycle.hpp"
#include "bed.hpp"
#include "report_text.hpp"

using namespace harness;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The report's JSON names each rank's host as the bed placed it.
void check_json_hosts(const JobResult& result, int ranks, int per_host) {
  REQUIRE(result.report_json.has_value());
  for (int rank = 0; rank < ranks; ++rank) {
    INFO("rank " << rank);
    const std::regex entry(R"("rank":)" + std::to_string(rank) + R"(,"host":")" + bed::host_of(rank, per_host) +
                           R"(","pid":[1-9])");
    CHECK(std::regex_search(*result.report_json, entry));
  }
}

std::vector<std::string> with_json(const Workspace& workspace, const std::vector<std::string>& options) {
  return with(options, {"--report-json", workspace.json_path().string()});
}

}  // namespace

TEST_CASE("multihost where_am_i: ranks on different hosts exchange over TCP, and the checker stays silent",
          "[.multihost]") {
  constexpr int kRanks = 4, kPerHost = 2;
  Workspace workspace;
  const JobResult result = bed::run_checked(workspace, kRanks, kPerHost, TEST_PROGRAM(where_am_i), kDeadlockOptions);
  check_clean_run(result, workspace);
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank << "\n" << result.out);
    const std::regex line("rank " + std::to_string(rank) + " host " + bed::host_of(rank, kPerHost) +
                          R"( partner \d+ received right tcp_to_other_hosts [1-9])");
    CHECK(std::regex_search(result.out, line));
  }
}

TEST_CASE("multihost ssend_ring: a cycle through three hosts is HARD, with every rank's stack and host",
          "[.multihost]") {
  constexpr int kRanks = 4, kPerHost = 1;
  const Program program = TEST_PROGRAM(ssend_ring);
  Workspace workspace;
  // The monitors meet on ports of a range, as behind a firewall that opens one.
  const JobResult result = bed::run_checked(
      workspace, kRanks, kPerHost, program,
      with_json(workspace, with(kDeadlockOptions, {"--monitor-ports", "41000-41015", "--monitor-interfaces", "eth0"})));
  check_deadlock(result, program, ssend_ring_deadlock(kRanks, "pass_to_right"));
  check_json_hosts(result, kRanks, kPerHost);
  // The rank class names each host with its ranks and their pids.
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank);
    CHECK(any_line_matches(result.report.value_or(""), R"(^\[0\] ERROR: +where: .*host )" +
                                                           bed::host_of(rank, kPerHost) + R"(: ranks? [\d,]*\b)" +
                                                           std::to_string(rank) + R"(\b[\d,]* \(pids? [1-9])"));
  }
}

TEST_CASE("multihost partial_cycle: a deadlock across two hosts while ranks on others compute", "[.multihost]") {
  const Program program = TEST_PROGRAM(partial_cycle);
  const int compute_seconds = 5 * kDeadlockTimeoutSeconds;
  Workspace workspace;
  // Ranks 0-1 on node1, 2-3 on node2, 4-5 on node3 (node1 again on 2 hosts).
  const JobResult result = bed::run_checked(workspace, 6, 2, program, kDeadlockOptions, {std::to_string(compute_seconds)});
  check_deadlock(result, program, partial_cycle_deadlock());
  INFO(describe(result));
  CHECK(result.elapsed_seconds < compute_seconds);
  CHECK(contains(result.report.value_or(""), "the other ranks still run"));
}

TEST_CASE("multihost poll_forever: polling on another host is NO_PROGRESS", "[.multihost]") {
  Workspace workspace;
  const std::vector<std::string> options = {"--deadlock-timeout", kDeadlockTimeout, "--deadlock-warning", "2s"};
  Job job(workspace, bed::checked_command(workspace, 2, 1, TEST_PROGRAM(poll_forever), options, {"20"}));
  const std::string warning = "[0] WARNING: GLOBAL:DEADLOCK:NO_PROGRESS: warning";
  const bool warned = job.wait_for_text(workspace.stderr_path(), warning, kJobTimeout);
  job.signal_group(SIGKILL);
  const JobResult result = job.finish();
  INFO(describe(result));
  REQUIRE(warned);
  CHECK(contains(result.err.substr(result.err.find(warning)), "MPI_Test"));
  CHECK_FALSE(contains(result.err, "GLOBAL:DEADLOCK:HARD"));
}

TEST_CASE("multihost outside_mpi: ranks on other hosts wait for rank 0 outside MPI, one warning", "[.multihost]") {
  const Program program = TEST_PROGRAM(outside_mpi);
  Workspace workspace;
  const JobResult result = bed::run_checked(workspace, 4, 1, program,
                                            with_json(workspace, {"--deadlock-warning", "2s", "--deadlock-timeout", "3s"}),
                                            {"sleep", "6"});
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.succeeded());
  const std::string headline = "[0] WARNING: GLOBAL:DEADLOCK:OUTSIDE_MPI: warning";
  CHECK(count_occurrences(result.err, headline) == 1);
  REQUIRE(result.report.has_value());
  CHECK(count_occurrences(*result.report, headline) == 1);
  const std::vector<int> lines = marked_lines(program.source, "outside [sleep]");
  REQUIRE(lines.size() == 1);
  CHECK(any_line_matches(*result.report, R"(^\[0\] WARNING: .*\branks? [\d,-]+ ha(?:s|ve) waited .*MPI_Allreduce.*\brank 0\b.*outside MPI.*)" +
                                             frame_pattern("rest", program.source, lines[0])));
}

TEST_CASE("multihost segfault: a crash on another host is reported with its host, the job ends", "[.multihost]") {
  const Program program = TEST_PROGRAM(segfault);
  Workspace workspace;
  const JobResult result = bed::run_checked(workspace, 2, 1, program, kDeadlockOptions);
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.failed());
  REQUIRE(result.report.has_value());
  CHECK(count_occurrences(*result.report, "[1] ERROR: LOCAL:EXIT:SIGNAL: fatal error") == 1);
  CHECK(any_line_matches(*result.report, R"(^\[1\] ERROR: .*rank 1 \(host )" + bed::host_of(1, 1) +
                                             R"(, pid [1-9]\d*\) received SIGSEGV)"));
  const std::vector<int> lines = marked_lines(program.source, "crashes");
  REQUIRE(lines.size() == 1);
  CHECK(any_line_matches(*result.report, R"(^\[1\] ERROR: .*)" + frame_pattern("crash_here", program.source, lines[0])));
  CHECK_FALSE(contains(result.err, "GLOBAL:DEADLOCK"));
}

TEST_CASE("multihost dump: `mpisentry dump` and kill -USR1 of mpiexec each dump ranks on every host",
          "[.multihost]") {
  constexpr int kRanks = 3;
  Workspace workspace;
  Job job(workspace, bed::checked_command(workspace, kRanks, 1, TEST_PROGRAM(dump_requests),
                                          {"--dump-signal", "SIGUSR1"}, {"20"}));
  REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
  const std::string header = "[0] INFO: DUMP:";
  Workspace dump_workspace;
  const JobResult dump = run_job(dump_workspace, {MPISENTRY_LAUNCHER, "dump", std::to_string(job.pid())});
  const bool first = job.wait_until(
      [&] { return count_occurrences(read_file(workspace.report_path()).value_or(""), header) >= 1; }, Seconds{15});
  // A dump signal that comes while a dump is being made merges into it.
  std::this_thread::sleep_for(Seconds{2});
  job.signal_leader(SIGUSR1);
  const bool second = job.wait_until(
      [&] { return count_occurrences(read_file(workspace.report_path()).value_or(""), header) >= 2; }, Seconds{15});
  const JobResult result = job.finish();
  INFO("the dump command:\n" << describe(dump) << "\nthe job:\n" << describe(result));
  CHECK(dump.succeeded());
  CHECK(contains(dump.out, "sent SIGUSR1 to process " + std::to_string(job.pid())));
  CHECK(first);
  CHECK(second);
  CHECK(result.succeeded());
  // Rank 0 computes while the others wait for it in MPI_Allreduce.
  const std::string& report = result.report.value_or("");
  CHECK(any_line_matches(report, R"(^\[0\] INFO: +compute \()"));
  BlockedCalls blocked = parse_blocked_calls(report);  // [] gives "" for a rank left out
  for (int rank = 1; rank < kRanks; ++rank) {
    INFO("rank " << rank << " on " << bed::host_of(rank, 1));
    CHECK(any_line_matches(blocked.call_of[rank], R"(^MPI_Allreduce\()"));
  }
}

TEST_CASE("multihost sigterm_hang: SIGTERM to mpiexec gives every rank's stack, on every host", "[.multihost]") {
  constexpr int kRanks = 3;
  const Program program = TEST_PROGRAM(sigterm_hang);
  Workspace workspace;
  Job job(workspace, bed::checked_command(workspace, kRanks, 1, program, {"--deadlock-timeout", "60s"}), {},
          Seconds{60});
  REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
  std::this_thread::sleep_for(Seconds{4});
  job.signal_leader(SIGTERM);
  const JobResult result = job.finish();
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.report.has_value());
  const std::vector<int> lines = marker_lines(program.source);
  REQUIRE(lines.size() == 1);
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank);
    const std::string prefix = "[" + std::to_string(rank) + "] ERROR: ";
    CHECK(contains(*result.report, prefix + "LOCAL:EXIT:SIGNAL: fatal error"));
    CHECK(any_line_matches(*result.report, R"(^\[)" + std::to_string(rank) + R"(\] ERROR: .*rank )" +
                                               std::to_string(rank) + R"( \(host )" + bed::host_of(rank, 1) +
                                               R"(, pid [1-9]\d*\) received SIGTERM)"));
    CHECK(any_line_matches(*result.report, R"(^\[)" + std::to_string(rank) + R"(\] .*)" +
                                               frame_pattern("wait_for_anything", program.source, lines[0])));
  }
}

TEST_CASE("multihost late_rank: a rank computing on another host past the timeout is no deadlock", "[.multihost]") {
  constexpr int kRanks = 3;
  const Program program = TEST_PROGRAM(late_rank);
  Workspace workspace;
  const JobResult plain = run_job(workspace, bed::plain_command(kRanks, 1, program, {kLongComputation}));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  const JobResult checked = bed::run_checked(workspace, kRanks, 1, program, kDeadlockOptions, {kLongComputation});
  check_clean_run(checked, workspace);
  CHECK(checked.out == plain.out);
}

TEST_CASE("multihost coll_mismatch: the consistency checks compare ranks on different hosts", "[.multihost]") {
  Workspace workspace;
  const JobResult result = bed::run_checked(workspace, 2, 1, TEST_PROGRAM(coll_mismatch),
                                            with({"--check-all"}, kDeadlockOptions), {"root"});
  INFO(describe(result));
  CHECK_FALSE(result.timed_out);
  CHECK(result.failed());
  check_reported(result, {R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:ROOT_MISMATCH: error$)",
                          R"(rank 0 calls MPI_Bcast\(root=0\), rank 1 calls MPI_Bcast\(root=1\)$)"});
}

TEST_CASE("multihost launch: the library missing on node2 ends the job after the bound, saying why", "[.multihost]") {
  Workspace workspace;
  const std::string library_folder = std::filesystem::path(MPISENTRY_LIBRARY).parent_path().string();
  const JobResult result =
      run_job(workspace, bed::checked_command(workspace, 2, 1, TEST_PROGRAM(pingpong), kTimedDeadlockOptions),
              {{"MULTIHOST_HIDE", "node2:" + library_folder}});
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_status == 2);
  CHECK(contains(result.err, std::string(MPISENTRY_LIBRARY) + "' from LD_PRELOAD cannot be preloaded"));
  CHECK(contains(result.err, "[mpisentry 0] error: rank 0 (host node1): the checker in some ranks did not answer in "
                             "MPI_Init within " + kDeadlockTimeout + " (DEADLOCK-TIMEOUT)"));
  CHECK(contains(result.err, "likely causes: the mpisentry library is missing on some host"));
  CHECK_FALSE(contains(result.out, "checksum"));
}

TEST_CASE("multihost launch: a config file missing on node2 is named with the rank and host", "[.multihost]") {
  Workspace workspace;
  const std::filesystem::path folder = workspace.dir() / "config";
  std::filesystem::create_directory(folder);
  const std::string config = (folder / "mpisentry.conf").string();
  std::ofstream(config) << "DEADLOCK-TIMEOUT 3s\n";
  const JobResult result = run_job(
      workspace, bed::checked_command(workspace, 2, 1, TEST_PROGRAM(pingpong), {"--config", config}),
      {{"MULTIHOST_HIDE", "node2:" + folder.string()}});
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_status == 2);
  CHECK(contains(result.err, "[mpisentry 1] error: rank 1 (host node2): " + config +
                                 ": cannot read config file: No such file or directory"));
  CHECK(contains(result.err, "bad configuration: every rank stops before the program starts, with exit status 2"));
  CHECK_FALSE(contains(result.out, "checksum"));
}

TEST_CASE("multihost channel: monitors offered only loopback cannot reach another host: said at start-up, the "
          "program runs unchecked",
          "[.multihost]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(pingpong);
  const JobResult result = run_job(
      workspace, bed::checked_command(workspace, 2, 1, program, with(kDeadlockOptions, {"--monitor-interfaces", "lo"})));
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_status == 0);
  CHECK(contains(result.out, "checksum"));
  CHECK(std::regex_search(result.err, std::regex(R"(\[mpisentry 1\] error: rank 1 \(host node2\) cannot reach its )"
                                                 R"(parent in the monitors' tree, rank 0 \(host node1\), within 10 s: )"
                                                 R"(tried 127\.0\.0\.1:\d+ \(Connection refused\))")));
  CHECK(contains(result.err, "[mpisentry 0] error: the monitor threads cannot reach each other (said above): this run "
                             "has no deadlock checks"));
  CHECK_FALSE(result.report.has_value());
}
