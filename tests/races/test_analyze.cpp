// mpisentry --comm-log and mpisentry analyze on real runs: the deadlocks
// that only another matching of a receive from MPI_ANY_SOURCE gives are
// found in the log of a run that passed, as --explore finds them, and
// confirmed by a run forced to that matching; programs that every matching
// leaves correct are clean; a program that relies on buffering deadlocks
// with zero buffering only; a master that answers whichever worker it heard
// from, whose log shows a deadlock of the logged calls, is never a confirmed
// one, and its bug twin, with the same log, is; the log of a run that hung
// or crashed is on disk and read for what it is; bad logs are refused with
// the file and the problem.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "recording/recording.hpp"
#include "scenario.hpp"

using namespace harness;
namespace recording = mpisentry::recording;

namespace {

struct Analyzed {
  JobResult job;       // the run that wrote the logs
  JobResult analysis;  // mpisentry analyze on them
};

// mpisentry analyze, its confirming runs in the workspace's "confirming".
JobResult analyze(const Workspace& workspace, const std::filesystem::path& dir,
                  const std::vector<std::string>& options = {}) {
  std::vector<std::string> command = {MPISENTRY_LAUNCHER, "analyze", "--json",
                                      (workspace.dir() / "analysis.json").string(), "--deadlock-timeout", "2s",
                                      "--runs-dir", (workspace.dir() / "confirming").string()};
  command.insert(command.end(), options.begin(), options.end());
  command.push_back(dir.string());
  return run_job(workspace, command);
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

// The two analyses' verdicts, in order: "DEADLOCK" (confirmed),
// "UNCONFIRMED" or "no deadlock found".
std::vector<std::string> verdicts(const std::string& out) {
  std::vector<std::string> found;
  for (std::size_t at = 0; (at = out.find("\n  ", at)) != std::string::npos; ++at)
    for (const std::string verdict : {"DEADLOCK", "UNCONFIRMED", "no deadlock found"})
      if (out.compare(at + 3, verdict.size(), verdict) == 0) found.push_back(verdict);
  return found;
}

const std::vector<std::string> kBothDeadlock = {"DEADLOCK", "DEADLOCK"};
const std::vector<std::string> kNeither = {"no deadlock found", "no deadlock found"};
const std::vector<std::string> kZeroOnly = {"no deadlock found", "DEADLOCK"};
const std::vector<std::string> kZeroUnconfirmed = {"no deadlock found", "UNCONFIRMED"};

// master_worker.c's shapes, and the ranks each runs on.
const std::vector<std::pair<std::string, int>> kMasterWorkerShapes = {
    {"recv", 3}, {"irecv", 3}, {"mprobe", 3}, {"recv", 4}};

}  // namespace

TEST_CASE("analyze: the log of a run that passed shows the deadlock another matching gives",
          "[races][analyze][.slow]") {
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
    CHECK(has(run.analysis.out, "  Confirmed: the run forced to this matching hung: GLOBAL:DEADLOCK:HARD: "));
    CHECK(has(run.analysis.err, "mpisentry analyze: a deadlock with standard buffering: confirming it by a run "
                                "forced to its matching, in " + (workspace.dir() / "confirming" / "standard").string()));
    const std::string json = read_file(workspace.dir() / "analysis.json").value_or("");
    CHECK(has(json, R"("schema": "mpisentry-analyze/2")"));
    CHECK(has(json, R"("deadlock": true)"));
    CHECK(has(json, R"("confirmed": true)"));
    CHECK(has(read_file(workspace.dir() / "confirming" / "confirmations.json").value_or(""),
              R"("schema": "mpisentry-analyze-runs/1")"));
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
    CHECK(verdicts(run.analysis.out) == kZeroOnly);
    CHECK(has(run.analysis.out, "waits for rank 1 to receive it (zero buffering)"));
    CHECK(has(run.analysis.out, "With zero buffering a standard send waits until its receive takes it"));
    // Confirmed with each standard send made synchronous.
    CHECK(has(run.analysis.out, "  Confirmed: the run forced to this matching hung: GLOBAL:DEADLOCK:"));
    CHECK(has(run.analysis.out, "/confirming/zero/record --potential --deadlock-timeout 2s -n "));
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
                             ": line 1 (\"mpisentry-log 7\"): this mpisentry reads versions 1 to 2 only"));

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

TEST_CASE("analyze: a master that answers whichever worker it heard from is never a confirmed deadlock",
          "[races][analyze][confirm]") {
  // With zero buffering, the analysis lets the master's first receive take
  // rank 1's request and then runs the logged reply to the run's first
  // sender, which waits in its own send: a deadlock of the logged calls.
  // The program replies to rank 1 there: the run forced to that matching
  // passes.
  const Program program = TEST_PROGRAM(master_worker);
  for (const auto& [shape, ranks] : kMasterWorkerShapes) {
    Workspace workspace;
    const Analyzed run = logged_run(workspace, ranks, program, {shape, "sender"});
    INFO(shape << " on " << ranks << " ranks\n" << describe(run.job) << describe(run.analysis));
    REQUIRE(run.job.succeeded());
    CHECK(run.analysis.exit_status == 3);
    CHECK(verdicts(run.analysis.out) == kZeroUnconfirmed);
    CHECK(has(run.analysis.out, "  UNCONFIRMED DEADLOCK when these receives from MPI_ANY_SOURCE take these messages:"));
    CHECK(has(run.analysis.out, "takes rank 1's message (tag 1)"));
    CHECK(has(run.analysis.out, "  Not confirmed: the run forced to this matching passed: under it the program makes "
                                "other calls than the logged ones"));
    CHECK(!has(run.analysis.out, "Confirmed:"));
    const std::string json = read_file(workspace.dir() / "analysis.json").value_or("");
    CHECK(has(json, R"("confirmed": false)"));
    CHECK(!has(json, R"("confirmed": true)"));
    // The run was forced: its recording has rank 1's request first, as the analysis chose.
    const std::vector<recording::Event> forced =
        recording::parse(read_file(workspace.dir() / "confirming" / "zero" / "record" / "rank-0.record").value_or(""))
            .events();
    REQUIRE(!forced.empty());
    CHECK(forced.front() ==
          recording::Event{shape == "mprobe" ? recording::Kind::Probe : recording::Kind::Receive, 1, {}});
  }
}

TEST_CASE("analyze: a master that replies in a fixed order, whose log is the same, is a confirmed deadlock",
          "[races][analyze][confirm][.slow]") {
  const Program program = TEST_PROGRAM(master_worker);
  for (const auto& [shape, ranks] : kMasterWorkerShapes) {
    Workspace workspace;
    const Analyzed run = logged_run(workspace, ranks, program, {shape, "fixed"});
    INFO(shape << " on " << ranks << " ranks\n" << describe(run.job) << describe(run.analysis));
    REQUIRE(run.job.succeeded());  // MPICH buffers the replies
    CHECK(run.analysis.exit_status == 1);
    CHECK(verdicts(run.analysis.out) == kZeroOnly);
    CHECK(has(run.analysis.out, "  Confirmed: the run forced to this matching hung: GLOBAL:DEADLOCK:"));
    CHECK(has(read_file(workspace.dir() / "analysis.json").value_or(""), R"("confirmed": true)"));
    if (shape != "recv" || ranks != 3) continue;
    // The replay it prints hangs the same way.
    std::smatch replay;
    REQUIRE(std::regex_search(run.analysis.out, replay, std::regex("replay: mpisentry (--replay [^\n]*)")));
    std::vector<std::string> command = {MPISENTRY_LAUNCHER};
    std::istringstream words(replay[1].str());
    for (std::string word; words >> word;) command.push_back(word);
    const JobResult replayed = run_job(workspace, command);
    INFO(describe(replayed));
    CHECK(replayed.failed());
    CHECK(has(replayed.err, "GLOBAL:DEADLOCK:"));
  }
}

TEST_CASE("analyze: a deadlock no run confirms is unconfirmed, with why, and its own exit status",
          "[races][analyze][confirm]") {
  Workspace workspace;
  const Analyzed run = logged_run(workspace, 3, TEST_PROGRAM(matchings), {"hidden"});
  REQUIRE(run.analysis.exit_status == 1);
  const std::filesystem::path dir = log_dir(workspace);

  const JobResult offline = analyze(workspace, dir, {"--no-confirm"});
  INFO(describe(offline));
  CHECK(offline.exit_status == 3);
  CHECK(verdicts(offline.out) == std::vector<std::string>{"UNCONFIRMED", "UNCONFIRMED"});
  CHECK(has(offline.out, "  Not confirmed: no run was made (--no-confirm).\n"));

  // Without the recording beside the logs, the matching cannot be forced.
  std::filesystem::rename(dir / "rank-0.record", workspace.dir() / "rank-0.record");
  const JobResult unrecorded = analyze(workspace, dir);
  INFO(describe(unrecorded));
  CHECK(unrecorded.exit_status == 3);
  CHECK(verdicts(unrecorded.out) == std::vector<std::string>{"UNCONFIRMED", "UNCONFIRMED"});
  CHECK(has(unrecorded.out, "  Not confirmed: no run could be forced to this matching: " + dir.string() +
                                "/rank-0.record: missing, or not of the logged run"));

  // A directory for the runs that is not an earlier analysis's is refused.
  std::filesystem::create_directories(workspace.dir() / "mine");
  std::ofstream(workspace.dir() / "mine" / "notes.txt") << "mine\n";
  std::filesystem::rename(workspace.dir() / "rank-0.record", dir / "rank-0.record");
  const JobResult taken = analyze(workspace, dir, {"--runs-dir", (workspace.dir() / "mine").string()});
  INFO(describe(taken));
  CHECK(taken.exit_status == 2);
  CHECK(has(taken.err, "mine holds files and is not an analysis's runs (no confirmations.json): give --runs-dir "
                       "another directory"));
  CHECK(std::filesystem::exists(workspace.dir() / "mine" / "notes.txt"));
}
