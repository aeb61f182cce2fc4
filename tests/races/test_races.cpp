// RECORD and REPLAY: a run's timing-dependent outcomes, recorded, come back
// in every replay (a hang as a hang with the same cycle, a result as the
// same result, also when the timing would favour another order), a
// race-free run records nothing but its header, and a recording that does
// not fit the run stops it with a message naming the problem, never a hang.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "recording/recording.hpp"
#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;
namespace recording = mpisentry::recording;

namespace {

// Open MPI's teardown after an abort takes about 7 s a job here: 20 hung
// replays took 155 s under it, past ctest's 150 s.
constexpr int kReplays = MPISENTRY_BUILT_FOR_OPEN_MPI ? 10 : 20;
const std::vector<std::string> kQuickDeadlock = {"--deadlock-timeout", "1s"};

// rank r sends late, so the others win the race (race_orders.c).
Environment late(int rank) { return {{"RACE_DELAY_RANK", std::to_string(rank)}}; }

JobResult run_with(const Workspace& workspace, const std::vector<std::string>& options, int ranks,
                   const std::vector<std::string>& args, const Environment& env = {}) {
  const Program program = TEST_PROGRAM(race_orders);
  std::vector<std::string> command = checker_prefix(workspace, with(kQuickDeadlock, options));
  command.insert(command.end(), {"-n", std::to_string(ranks), program.executable});
  command.insert(command.end(), args.begin(), args.end());
  return run_job(workspace, command, env);
}

std::string recording_of(const Workspace& workspace, const std::string& dir, int rank) {
  return read_file(workspace.dir() / dir / ("rank-" + std::to_string(rank) + ".record")).value_or("(missing)");
}

void write_recording(const Workspace& workspace, const std::string& dir, int rank, const std::string& text) {
  std::ofstream(workspace.dir() / dir / ("rank-" + std::to_string(rank) + ".record"), std::ios::trunc) << text;
}

// Records race_orders order on 3 ranks in "run": rank 0's recording.
std::string record_order(const Workspace& workspace) {
  const JobResult recorded = run_with(workspace, {"--record", "run"}, 3, {"order"});
  INFO(describe(recorded));
  REQUIRE(recorded.succeeded());
  return recording_of(workspace, "run", 0);
}

// The hang's report, without what differs from run to run (times, pids, addresses).
std::string hang_verdict(const JobResult& result) {
  const std::size_t at = result.err.find("deadlock: rank");
  return at == std::string::npos ? "" : result.err.substr(at, result.err.find('\n', at) - at);
}

}  // namespace

TEST_CASE("race_orders hang: a hang that one order shows replays as the same hang every time",
          "[races][.slow]") {
  Workspace workspace;
  // Rank 2 sends late: rank 1's message is the first, and the second receive hangs.
  const JobResult recorded = run_with(workspace, {"--record", "hang"}, 3, {"hang"}, late(2));
  INFO(describe(recorded));
  REQUIRE(recorded.failed());
  REQUIRE(recorded.out.find("first from 1") != std::string::npos);
  const std::string verdict = hang_verdict(recorded);
  CHECK(verdict == "deadlock: rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv waits for its source, rank 1; rank 1: "
                   "MPI_Barrier on MPI_COMM_WORLD (its collective #1 there) cannot complete before every member has "
                   "joined it)");
  CHECK(recording_of(workspace, "hang", 0).find("\nR 1\n") != std::string::npos);
  // Replayed with rank 1 late, which left alone would let rank 2 win.
  for (int replay = 0; replay < kReplays; ++replay) {
    const JobResult replayed = run_with(workspace, {"--replay", "hang"}, 3, {"hang"}, late(1));
    INFO("replay " << replay << ": " << describe(replayed));
    REQUIRE(replayed.failed());
    CHECK(replayed.out == recorded.out);
    CHECK(hang_verdict(replayed) == verdict);
  }
}

TEST_CASE("race_orders hang: a passing recording replays as a pass every time", "[races]") {
  Workspace workspace;
  // Rank 1 sends late: rank 2's message is the first, and both receives complete.
  const JobResult recorded = run_with(workspace, {"--record", "pass"}, 3, {"hang"}, late(1));
  INFO(describe(recorded));
  REQUIRE(recorded.succeeded());
  REQUIRE(recorded.out.find("first from 2") != std::string::npos);
  for (int replay = 0; replay < kReplays; ++replay) {
    const JobResult replayed = run_with(workspace, {"--replay", "pass"}, 3, {"hang"}, late(2));
    INFO("replay " << replay << ": " << describe(replayed));
    REQUIRE(replayed.succeeded());
    CHECK(replayed.out == recorded.out);
  }
}

TEST_CASE("race_orders crash: a crash that one order shows, recorded just before it, replays as the same crash",
          "[races]") {
  Workspace workspace;
  // Rank 1's message first: rank 0 crashes at once. The monitor's tick, every 20 s, cannot have written the
  // recording: the crash dump does.
  const std::vector<std::string> slow_tick = {"--deadlock-timeout", "1m", "--deadlock-check-interval", "20s"};
  const JobResult recorded = run_with(workspace, with(slow_tick, {"--record", "crash"}), 3, {"crash"}, late(2));
  INFO(describe(recorded));
  REQUIRE(recorded.failed());
  REQUIRE(recorded.out.find("first from 1") != std::string::npos);
  CHECK(recording_of(workspace, "crash", 0).find("\nR 1\n") != std::string::npos);
  for (int replay = 0; replay < 5; ++replay) {
    const JobResult replayed = run_with(workspace, {"--replay", "crash"}, 3, {"crash"}, late(1));
    INFO("replay " << replay << ": " << describe(replayed));
    CHECK(replayed.failed());
    CHECK(replayed.out.rfind("first from 1\n", 0) == 0);  // then mpiexec's words on the crash, with its pid
    CHECK(replayed.err.find("[0] ERROR:    rank 0 (host ") != std::string::npos);
    CHECK(replayed.err.find("received SIGSEGV") != std::string::npos);
  }
}

TEST_CASE("race_orders: the order of arrival replays exactly, whichever call takes it", "[races]") {
  // Receives from MPI_ANY_SOURCE (blocking and Irecv + Wait), Waitany,
  // Waitsome, Testsome, Iprobe and Test loops; the program prints a checksum
  // of the order and how often it found nothing.
  const std::string mode = GENERATE("order", "waitany", "waitsome", "testsome", "iprobe", "test");
  INFO("mode " << mode);
  Workspace workspace;
  const JobResult recorded = run_with(workspace, {"--record", "run"}, 4, {mode});
  INFO(describe(recorded));
  REQUIRE(recorded.succeeded());
  REQUIRE(recorded.out.find("checksum ") != std::string::npos);
  CHECK(recorded.err.find("[mpisentry 0] info: recorded ") != std::string::npos);
  // Each worker late in turn: left alone, the order would follow the delays.
  for (int late_rank = 1; late_rank <= 3; ++late_rank) {
    const JobResult replayed = run_with(workspace, {"--replay", "run"}, 4, {mode}, late(late_rank));
    INFO("rank " << late_rank << " late: " << describe(replayed));
    REQUIRE(replayed.succeeded());
    CHECK(replayed.out == recorded.out);
    CHECK(replayed.err.find("error") == std::string::npos);
  }
}

TEST_CASE("race_orders order: receives that had another sender's message waiting are named as raced", "[races]") {
  Workspace workspace;
  // Every worker sends at once and rank 0 starts receiving late: the first receives find all the messages there.
  // Which workers' messages each place takes is MPI's matching order (Open MPI's differs from MPICH's).
  const JobResult recorded = run_with(workspace, {"--record", "run"}, 4, {"order"}, late(0));
  INFO(describe(recorded));
  REQUIRE(recorded.succeeded());
  const Program program = TEST_PROGRAM(race_orders);
  const std::vector<int> lines = marked_lines(program.source, "races");
  REQUIRE(lines.size() == 2);
  for (const int line : lines)
    CHECK(std::regex_search(recorded.err, std::regex(R"(\[mpisentry 0\] info:   \S*race_orders\.c:)" + std::to_string(line) +
                                                     R"( \(receive_in_order\): 6 receives from ranks [1-3](, [1-3]){0,2}; [1-6] raced: a )"
                                                     R"(message from another rank that it could have taken was already )"
                                                     R"(there when it completed)")));
}

TEST_CASE("race_orders ring: a race-free run records its header and end only", "[races]") {
  Workspace workspace;
  const JobResult recorded = run_with(workspace, {"--record", "ring"}, 3, {"ring"});
  INFO(describe(recorded));
  REQUIRE(recorded.succeeded());
  const Program program = TEST_PROGRAM(race_orders);
  for (int rank = 0; rank < 3; ++rank)
    CHECK(recording_of(workspace, "ring", rank) == "mpisentry-record 2\nrank " + std::to_string(rank) +
                                                       " of 3\ncommand " + program.executable + " ring\nend\n");
  CHECK(recorded.err.find("info: recorded") == std::string::npos);
}

TEST_CASE("race_orders: a recording that does not fit the run stops it with the reason, without a hang",
          "[races][errors]") {
  Workspace workspace;
  const std::string rank0 = record_order(workspace);
  const Program program = TEST_PROGRAM(race_orders);
  struct Case {
    std::string name;
    int ranks;
    std::vector<std::string> args;
    std::string recording_of_rank0;  // empty: as recorded
    std::string expected;            // in stderr
  };
  const std::vector<Case> cases = {
      {"other rank count", 2, {"order"}, "", "recorded by rank 0 of 3 ranks; this is rank 0 of 2"},
      {"other arguments", 3, {"ring"}, "",
       "recorded running `" + program.executable + " order`; this rank runs `" + program.executable + " ring`"},
      {"corrupted", 3, {"order"}, std::regex_replace(rank0, std::regex("\nR [^\n]*"), "\nX 3", std::regex_constants::format_first_only),
       "cannot replay: line 4 (\"X 3\"): unknown event letter"},
      {"cut in its header", 3, {"order"}, rank0.substr(0, 24), "cannot replay: the recording ends inside its 3 header lines"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    if (!c.recording_of_rank0.empty()) write_recording(workspace, "run", 0, c.recording_of_rank0);
    const JobResult replayed = run_with(workspace, {"--replay", "run"}, c.ranks, c.args);
    INFO(describe(replayed));
    CHECK(replayed.failed());
    CHECK(replayed.err.find(c.expected) != std::string::npos);
    write_recording(workspace, "run", 0, rank0);
  }
  const JobResult missing = run_with(workspace, {"--replay", "nowhere"}, 3, {"order"});
  INFO(describe(missing));
  CHECK(missing.failed());
  CHECK(missing.err.find("nowhere: cannot replay: no such directory") != std::string::npos);
}

TEST_CASE("race_orders: a run that calls otherwise than recorded stops at the first call that differs",
          "[races][errors]") {
  Workspace workspace;
  const std::string rank0 = record_order(workspace);
  const std::size_t first_event = rank0.find("\nR ") + 1;
  // The first receive from MPI_ANY_SOURCE meets a Test's outcome. Its source
  // comes as a fill ("= 0 SOURCE") when the recording was written out while
  // the receive waited; that line is about the receive and goes with it.
  const std::string after_first =
      std::regex_replace(rank0.substr(rank0.find('\n', first_event) + 1), std::regex("(^|\n)= 0 \\d+\n"), "$1");
  write_recording(workspace, "run", 0, rank0.substr(0, first_event) + "T +\n" + after_first);
  const JobResult diverged = run_with(workspace, {"--replay", "run"}, 3, {"order"});
  INFO(describe(diverged));
  CHECK(diverged.failed());
  CHECK(diverged.err.find("run/rank-0.record diverged at event 0: the program called MPI_Recv, but the recording has "
                          "`T +` (an MPI_Test, MPI_Testall or MPI_Request_get_status)") != std::string::npos);

  // Fewer outcomes than the run has calls for, in a recording of a run that reached MPI_Finalize.
  write_recording(workspace, "run", 0, rank0.substr(0, rank0.find("\nR ") + 1) + "R 1\nR 2\nend\n");
  const JobResult shorter = run_with(workspace, {"--replay", "run"}, 3, {"order"});
  INFO(describe(shorter));
  CHECK(shorter.failed());
  CHECK(shorter.err.find("run/rank-0.record diverged at event 2: the program called MPI_Recv, but the recorded run "
                         "reached MPI_Finalize after 2 events") != std::string::npos);

  // An outcome more than the run has calls for: said at MPI_Finalize.
  write_recording(workspace, "run", 0, rank0.substr(0, rank0.size() - 4) + "A 1\nend\n");
  const JobResult longer = run_with(workspace, {"--replay", "run"}, 3, {"order"});
  INFO(describe(longer));
  CHECK(std::regex_search(longer.err, std::regex(R"(\[mpisentry 0\] error: replay of \S*run/rank-0\.record: the program )"
                                                 R"(reached MPI_Finalize with recorded events left, the next event 8 )"
                                                 R"(`A 1` \(an MPI_Waitany or MPI_Testany\))")));
}

TEST_CASE("race_orders: a recording of a run that ended early is forced as far as it goes", "[races]") {
  Workspace workspace;
  const std::string rank0 = record_order(workspace);
  // Two outcomes of rank 0, as a run killed there leaves them (no "end").
  write_recording(workspace, "run", 0, rank0.substr(0, rank0.find("\nR ") + 1) + "R 1\nR 2\n");
  const JobResult replayed = run_with(workspace, {"--replay", "run"}, 3, {"order"});
  INFO(describe(replayed));
  CHECK(replayed.succeeded());
  CHECK(replayed.err.find("run/rank-0.record: the recorded run ended after 2 events (it hung, crashed or was "
                          "stopped); MPI_Recv and later calls run unforced") != std::string::npos);
}

TEST_CASE("msg_threads: a program at MPI_THREAD_MULTIPLE is told that its threads' outcomes share one order",
          "[races][threads]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(msg_threads);
  std::vector<std::string> command = checker_prefix(workspace, {"--record", "threads"});
  command.insert(command.end(), {"-n", "2", program.executable, "peer"});
  const JobResult recorded = run_job(workspace, command);
  INFO(describe(recorded));
  CHECK(recorded.succeeded());
  CHECK(recorded.err.find("[mpisentry 0] warning: the program runs at MPI_THREAD_MULTIPLE: the outcomes of a rank's "
                          "threads are recorded in one order") != std::string::npos);
}

TEST_CASE("race_orders: a replay that records its run writes the recording it replays", "[races]") {
  Workspace workspace;
  const std::string rank0 = record_order(workspace);
  const JobResult replayed = run_with(workspace, {"--replay", "run", "--record", "again"}, 3, {"order"}, late(1));
  INFO(describe(replayed));
  CHECK(replayed.succeeded());
  for (int rank = 0; rank < 3; ++rank) {
    const recording::Recording again = recording::parse(recording_of(workspace, "again", rank));
    const recording::Recording run = recording::parse(recording_of(workspace, "run", rank));
    CHECK(again.events() == run.events());
    CHECK(again.ending == recording::Ending::Finalized);
  }
}

TEST_CASE("mpisentry --record and --replay of one directory is refused, naming both", "[races][errors]") {
  Workspace workspace;
  const JobResult both = run_with(workspace, {"--record", "a", "--replay", "./a/"}, 2, {"ring"});
  INFO(describe(both));
  CHECK(both.failed());
  CHECK(both.err.find("RECORD (--record) and REPLAY are both \"a\": a replay that records its run needs another "
                      "directory to write") != std::string::npos);
}
