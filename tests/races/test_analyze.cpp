// mpisentry --comm-log and mpisentry analyze on real runs: the deadlocks
// that only another matching of a receive from MPI_ANY_SOURCE gives are
// found in the log of a run that passed, as --explore finds them; programs
// that every matching leaves correct are clean; a program that relies on
// buffering deadlocks with zero buffering only; the log of a run that hung
// or crashed is on disk and read for what it is; bad logs are refused with
// the file and the problem.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "scenario.hpp"

using namespace harness;

namespace {

struct Analyzed {
  JobResult job;       // the run that wrote the logs
  JobResult analysis;  // mpisentry analyze on them
};

JobResult analyze(const Workspace& workspace, const std::filesystem::path& dir) {
  return run_job(workspace, {MPISENTRY_LAUNCHER, "analyze", "--json", (workspace.dir() / "analysis.json").string(),
                             dir.string()});
}

// Where the runs write their logs: a directory in one that does not exist
// yet either (--comm-log makes both).
std::filesystem::path log_dir(const Workspace& workspace) { return workspace.dir() / "runs" / "logs"; }

Analyzed logged_run(const Workspace& workspace, int ranks, const Program& program,
                    const std::vector<std::string>& args) {
  const std::filesystem::path dir = log_dir(workspace);
  Analyzed result;
  result.job = run_checked(workspace, ranks, program, {"--deadlock-timeout", "2s", "--comm-log", dir.string()}, args);
  result.analysis = analyze(workspace, dir);
  return result;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The two runs' verdicts, in order: "DEADLOCK" or "no deadlock found".
std::vector<std::string> verdicts(const std::string& out) {
  std::vector<std::string> found;
  for (std::size_t at = 0; (at = out.find("\n  ", at)) != std::string::npos; ++at) {
    if (out.compare(at + 3, 8, "DEADLOCK") == 0) found.push_back("DEADLOCK");
    if (out.compare(at + 3, 17, "no deadlock found") == 0) found.push_back("no deadlock found");
  }
  return found;
}

const std::vector<std::string> kBothDeadlock = {"DEADLOCK", "DEADLOCK"};
const std::vector<std::string> kNeither = {"no deadlock found", "no deadlock found"};

}  // namespace

TEST_CASE("analyze: the log of a run that passed shows the deadlock another matching gives", "[races][analyze]") {
  const Program program = TEST_PROGRAM(matchings);
  for (const std::string mode : {"hidden", "waitall"}) {
    Workspace workspace;
    const Analyzed run = logged_run(workspace, 3, program, {mode});
    INFO(mode << "\n" << describe(run.job) << describe(run.analysis));
    REQUIRE(run.job.succeeded());
    CHECK(run.analysis.exit_status == 1);
    CHECK(verdicts(run.analysis.out) == kBothDeadlock);
    CHECK(has(run.analysis.out, "  DEADLOCK when these receives from MPI_ANY_SOURCE take these messages:\n    rank 0: "
                                "MPI_" + std::string(mode == "hidden" ? "Recv" : "Irecv") +
                                    "(source MPI_ANY_SOURCE, tag 1, comm 1"));
    CHECK(has(run.analysis.out, "matchings.c:"));
    CHECK(has(run.analysis.out, "takes rank 1's message (tag 1), the last that a later receive of rank 0 from rank 1 "
                                "needs"));
    CHECK(has(run.analysis.out, "Rule: a receive from MPI_ANY_SOURCE may take any sender's message"));
    const std::string json = read_file(workspace.dir() / "analysis.json").value_or("");
    CHECK(has(json, R"("schema": "mpisentry-analyze/1")"));
    CHECK(has(json, R"("deadlock": true)"));
  }
}

TEST_CASE("analyze: programs whose every matching is right are clean", "[races][analyze]") {
  const Program program = TEST_PROGRAM(matchings);
  // causal: the message the receive matches is sent because of it. probe: a
  // receive from the rank MPI_Probe found is logged as a receive from that
  // rank (what --explore finds there comes from the program's choice).
  for (const std::string mode : {"sum", "causal", "probe"}) {
    Workspace workspace;
    const Analyzed run = logged_run(workspace, 3, program, {mode});
    INFO(mode << "\n" << describe(run.job) << describe(run.analysis));
    REQUIRE(run.job.succeeded());
    CHECK(run.analysis.exit_status == 0);
    CHECK(verdicts(run.analysis.out) == kNeither);
  }
}

TEST_CASE("analyze: generated programs, correct under every matching and with a bug", "[races][analyze]") {
  // Receives from MPI_ANY_SOURCE, persistent requests, MPI_Sendrecv,
  // nonblocking collectives, split and duplicated communicators.
  const Program program = TEST_PROGRAM(random_program);
  {
    Workspace workspace;
    const Analyzed correct = logged_run(workspace, 4, program, {"--seed", "4"});
    INFO(describe(correct.job) << describe(correct.analysis));
    REQUIRE(correct.job.succeeded());
    CHECK(correct.analysis.exit_status == 0);
    CHECK(verdicts(correct.analysis.out) == kNeither);
    CHECK(has(correct.analysis.out, "receives from MPI_ANY_SOURCE matched"));
  }
  {
    Workspace workspace;
    const Analyzed buggy = logged_run(workspace, 3, program, {"--seed", "1", "--bug", "missing-send"});
    INFO(describe(buggy.job) << describe(buggy.analysis));
    CHECK(has(buggy.job.err, "GLOBAL:DEADLOCK:HARD"));
    CHECK(buggy.analysis.exit_status == 1);
    CHECK(verdicts(buggy.analysis.out) == kBothDeadlock);
  }
}

TEST_CASE("analyze: sends that rely on buffering deadlock with zero buffering only", "[races][analyze]") {
  const std::vector<std::pair<Program, int>> programs = {{TEST_PROGRAM(send_pair), 2}, {TEST_PROGRAM(isend_ring), 3}};
  for (const auto& [program, ranks] : programs) {
    Workspace workspace;
    const Analyzed run = logged_run(workspace, ranks, program, {});
    INFO(describe(run.job) << describe(run.analysis));
    REQUIRE(run.job.succeeded());
    CHECK(run.analysis.exit_status == 1);
    CHECK(verdicts(run.analysis.out) == std::vector<std::string>{"no deadlock found", "DEADLOCK"});
    CHECK(has(run.analysis.out, "waits for rank 1 to receive it (zero buffering)"));
    CHECK(has(run.analysis.out, "With zero buffering a standard send waits until its receive takes it"));
  }
}

TEST_CASE("analyze: the log of a run that hung or crashed is on disk and read as such", "[races][analyze]") {
  {
    Workspace workspace;
    const Analyzed hung = logged_run(workspace, 2, TEST_PROGRAM(recv_recv), {});
    INFO(describe(hung.job) << describe(hung.analysis));
    CHECK(has(hung.job.err, "GLOBAL:DEADLOCK:HARD"));
    CHECK(hung.analysis.exit_status == 1);
    CHECK(verdicts(hung.analysis.out) == kBothDeadlock);
    CHECK(has(hung.analysis.out, "    rank 0: MPI_Recv(source 1, tag 0, comm 1) at "));
    CHECK(has(hung.analysis.out, "      it waits for a message from rank 1 (tag 0): rank 1 is stopped too\n"));
    CHECK(has(hung.analysis.out, "Rule: each of these ranks waits for an operation that no rank will make; none of "
                                 "them received from MPI_ANY_SOURCE."));
  }
  {
    // Rank 1 crashes while rank 0 waits for its message.
    Workspace workspace;
    const Analyzed crashed = logged_run(workspace, 2, TEST_PROGRAM(segfault), {});
    INFO(describe(crashed.job) << describe(crashed.analysis));
    CHECK(crashed.job.exit_status != 0);
    CHECK(crashed.analysis.exit_status == 0);
    CHECK(verdicts(crashed.analysis.out) == kNeither);
    CHECK(has(crashed.analysis.out, "where the logs end without MPI_Finalize, the recorded run went no further: 1 rank "
                                    "stops there, 1 waiting for them."));
  }
}

TEST_CASE("analyze: logs that are missing, cut or not of one run are refused, naming the file",
          "[races][analyze][errors]") {
  Workspace workspace;
  const std::filesystem::path dir = log_dir(workspace);
  JobResult missing = analyze(workspace, dir);
  CHECK(missing.exit_status == 2);
  CHECK(has(missing.err, "mpisentry analyze: " + dir.string() + ": no such directory"));

  std::filesystem::create_directories(dir);
  JobResult empty = analyze(workspace, dir);
  CHECK(empty.exit_status == 2);
  CHECK(has(empty.err, dir.string() + ": no rank-0.log; a run writes its communication logs there with mpisentry "
                                      "--comm-log " + dir.string()));

  const Analyzed run = logged_run(workspace, 3, TEST_PROGRAM(matchings), {"sum"});
  REQUIRE(run.analysis.exit_status == 0);
  std::filesystem::remove(dir / "rank-2.log");
  JobResult one_missing = analyze(workspace, dir);
  CHECK(one_missing.exit_status == 2);
  CHECK(has(one_missing.err, (dir / "rank-2.log").string() + ": missing; rank-0.log says the run had 3 ranks"));

  std::ofstream(dir / "rank-2.log") << "mpisentry-log 1\nrank 2 of 3\n";
  JobResult cut = analyze(workspace, dir);
  CHECK(cut.exit_status == 2);
  CHECK(has(cut.err, (dir / "rank-2.log").string() + ": the log ends inside its 3 header lines (truncated)"));

  std::ofstream(dir / "rank-2.log") << "mpisentry-log 7\n";
  JobResult version = analyze(workspace, dir);
  CHECK(has(version.err, (dir / "rank-2.log").string() +
                             ": line 1 (\"mpisentry-log 7\"): this mpisentry reads version 1 only"));

  std::ofstream(dir / "rank-2.log") << "mpisentry-log 1\nrank 2 of 4\ncommand ./x\nend\n";
  JobResult other = analyze(workspace, dir);
  CHECK(has(other.err, "rank-2.log: its header says rank 2 of 4, not rank 2 of 3"));

  JobResult usage = run_job(workspace, {MPISENTRY_LAUNCHER, "analyze"});
  CHECK(usage.exit_status == 2);
  CHECK(has(usage.err, "mpisentry analyze: needs the directory of the logs"));
}

TEST_CASE("analyze: a run on an inter-communicator is refused with the call and line", "[races][analyze][errors]") {
  Workspace workspace;
  const Analyzed run = logged_run(workspace, 2, TEST_PROGRAM(msg_comms), {"intercomm_create", "good"});
  INFO(describe(run.job) << describe(run.analysis));
  REQUIRE(run.job.succeeded());
  CHECK(run.analysis.exit_status == 2);
  CHECK(has(run.analysis.err, "on an inter-communicator, which analyze does not model"));
}
