// mpisentry --explore: a bug that only another matching of a receive from
// MPI_ANY_SOURCE shows is found, and the recording it names replays it, as
// is one that only another outcome of a nonblocking probe shows; a program
// that every matching leaves correct explores clean, also where a tried
// matching cannot happen; a limit reached is said, never "no bug";
// --explore 0 is one run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kQuickDeadlock = {"--deadlock-timeout", "1s"};

struct Explored {
  JobResult job;
  std::string results;  // explore.json
};

Explored explore(const Workspace& workspace, const std::vector<std::string>& options, int ranks,
                 const Program& program, const std::vector<std::string>& args) {
  std::vector<std::string> command = checker_prefix(
      workspace, with(with(kQuickDeadlock, {"--explore-dir", (workspace.dir() / "explored").string()}), options));
  command.insert(command.end(), {"-n", std::to_string(ranks), program.executable});
  command.insert(command.end(), args.begin(), args.end());
  Explored explored{run_job(workspace, command), ""};
  explored.results = read_file(workspace.dir() / "explored" / "explore.json").value_or("(missing)");
  return explored;
}

Explored explore(const Workspace& workspace, const std::vector<std::string>& options, int ranks,
                 const std::string& mode) {
  return explore(workspace, options, ranks, TEST_PROGRAM(matchings), {mode});
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The words of `command`, as the shell would split it (no quotes in these).
std::vector<std::string> words_of(const std::string& command) {
  std::vector<std::string> words;
  std::istringstream in(command);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string verdict_line(const std::string& text) {
  const std::size_t at = text.find("deadlock: rank");
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

}  // namespace

TEST_CASE("matchings hidden: --explore finds the deadlock only the other matching shows, and replays it",
          "[races][explore]") {
  Workspace workspace;
  // Left alone, the run passes.
  const Program program = TEST_PROGRAM(matchings);
  const JobResult alone = run_checked(workspace, 3, program, kQuickDeadlock, {"hidden"});
  INFO(describe(alone));
  REQUIRE(alone.succeeded());
  CHECK(alone.out == "first from 2\n");

  const Explored explored = explore(workspace, {"--explore"}, 3, "hidden");
  INFO(describe(explored.job));
  CHECK(explored.job.exit_status == 1);
  CHECK(explored.job.err.find("explore: run 0 (1 of at most 50; 0 schedules waiting): as it runs: passed") !=
        std::string::npos);
  CHECK(explored.job.err.find("explore: 1 failing run:\n") != std::string::npos);
  CHECK(explored.job.err.find("explore:   run 1: GLOBAL:DEADLOCK:HARD: ") != std::string::npos);
  CHECK(explored.job.err.find("where rank 0's receive from MPI_ANY_SOURCE at event 0 takes rank 1's message, not "
                              "rank 2's") != std::string::npos);
  CHECK(explored.results.find(R"("complete": true)") != std::string::npos);
  const std::string run_output = read_file(workspace.dir() / "explored" / "run-1" / "output.txt").value_or("");
  const std::string verdict = verdict_line(run_output);
  CHECK(verdict == "deadlock: rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv waits for its source, rank 1; rank 1: "
                   "MPI_Barrier on MPI_COMM_WORLD (its collective #1 there) cannot complete before every member has "
                   "joined it)");

  // The replay command it prints gives the same HARD report, every time.
  std::smatch replay;
  REQUIRE(std::regex_search(explored.job.err, replay, std::regex("replay: mpisentry (--replay [^\n]*)")));
  std::vector<std::string> command = {MPISENTRY_LAUNCHER};
  for (const std::string& word : words_of(replay[1])) command.push_back(word);
  for (int time = 0; time < 3; ++time) {
    const JobResult replayed = run_job(workspace, command);
    INFO(describe(replayed));
    CHECK(replayed.failed());
    CHECK(replayed.err.find("GLOBAL:DEADLOCK:HARD") != std::string::npos);
    CHECK(verdict_line(replayed.err) == verdict);
  }
}

TEST_CASE("matchings probe: --explore changes what a probe from MPI_ANY_SOURCE finds", "[races][explore]") {
  Workspace workspace;
  const Explored explored = explore(workspace, {"--explore"}, 3, "probe");
  INFO(describe(explored.job));
  CHECK(explored.job.exit_status == 1);
  CHECK(explored.job.err.find("explore:   run 1: GLOBAL:DEADLOCK:HARD: ") != std::string::npos);
  CHECK(explored.job.err.find("where rank 0's probe from MPI_ANY_SOURCE at event 0 takes rank 1's message, not "
                              "rank 2's") != std::string::npos);
  // The probe's source is recorded, though its status's cancelled bit was left set (matchings.c sets it).
  const std::string first = read_file(workspace.dir() / "explored" / "run-0" / "record" / "rank-0.record").value_or("");
  CHECK(std::regex_search(first, std::regex("\n(P 2|= 0 2)\n")));
}

TEST_CASE("matchings waitall: a message that a receive posted later took is an alternative too",
          "[races][explore]") {
  Workspace workspace;
  const Explored explored = explore(workspace, {"--explore"}, 3, "waitall");
  INFO(describe(explored.job));
  CHECK(explored.job.exit_status == 1);
  CHECK(explored.job.err.find("explore:   run 1: GLOBAL:DEADLOCK:HARD: ") != std::string::npos);
  CHECK(explored.job.err.find("where rank 0's receive from MPI_ANY_SOURCE at event 0 takes rank 1's message, not "
                              "rank 2's") != std::string::npos);
}

TEST_CASE("matchings nested: --explore finds a crash behind two changed receives, and not with one allowed",
          "[races][explore][.slow]") {
  Workspace workspace;
  const Explored explored = explore(workspace, {"--explore"}, 3, "nested");
  INFO(describe(explored.job));
  CHECK(explored.job.exit_status == 1);
  CHECK(std::regex_search(explored.job.err,
                          std::regex(R"(explore:   run \d+: rank 0: LOCAL:EXIT:SIGNAL \(SIGSEGV\))")));
  CHECK(explored.job.err.find("where rank 0's receive from MPI_ANY_SOURCE at event 0 takes rank 2's message, not "
                              "rank 1's\nmpisentry: explore:     where rank 0's receive from MPI_ANY_SOURCE at event 2 "
                              "takes rank 2's message, not rank 1's") != std::string::npos);

  Workspace bounded_workspace;
  const Explored bounded = explore(bounded_workspace, {"--explore", "--explore-changes", "1"}, 3, "nested");
  INFO(describe(bounded.job));
  CHECK(bounded.job.exit_status == 0);
  CHECK(std::regex_search(bounded.job.err, std::regex(R"(not explored: \d+ schedules that would change more than 1 )"
                                                      R"(receives or probes \(EXPLORE-CHANGES\))")));
  CHECK(bounded.job.err.find("no failure in the runs made; the exploration is NOT complete") != std::string::npos);
  CHECK(bounded.results.find(R"("complete": false)") != std::string::npos);
}

TEST_CASE("matchings last: the bug behind 1 of 3 matchings of a receive is found", "[races][explore]") {
  Workspace workspace;
  const Explored explored = explore(workspace, {"--explore", "--explore-changes", "1"}, 4, "last");
  INFO(describe(explored.job));
  CHECK(explored.job.exit_status == 1);
  CHECK(explored.job.err.find("LOCAL:EXIT:BEFORE_MPI_FINALIZE") != std::string::npos);
  CHECK(explored.job.err.find("takes rank 3's message, not rank 1's") != std::string::npos);
  CHECK(explored.results.find(R"("runs": 4)") != std::string::npos);  // the first, then each other sender
}

TEST_CASE("matchings sum and causal: every matching right explores clean, one that cannot happen is never a bug",
          "[races][explore]") {
  Workspace workspace;
  const Explored sum = explore(workspace, {"--explore"}, 4, "sum");
  INFO(describe(sum.job));
  CHECK(sum.job.exit_status == 0);
  CHECK(sum.job.err.find("no failure under any matching tried, and every other sender the runs showed was "
                         "tried") != std::string::npos);
  CHECK(sum.results.find(R"("failures": [])") != std::string::npos);
  CHECK(sum.results.find(R"("runs": 1,)") == std::string::npos);  // other matchings were run

  // Rank 2's message matches the receive but is sent because of it: the
  // schedule that forces it hangs before its forced receive completes.
  Workspace causal_workspace;
  const Explored causal = explore(causal_workspace, {"--explore"}, 3, "causal");
  INFO(describe(causal.job));
  CHECK(causal.job.exit_status == 0);
  CHECK(causal.job.err.find("infeasible, it hung before rank 0's forced outcome 0 (R 2) came (GLOBAL:DEADLOCK:HARD") !=
        std::string::npos);
  CHECK(causal.job.err.find("1 schedules could not be followed") != std::string::npos);
  CHECK(causal.job.err.find("no failure under any matching tried") != std::string::npos);
}

TEST_CASE("matchings sum: a run limit reached is said, and the exploration is not called complete",
          "[races][explore]") {
  Workspace workspace;
  const Explored explored = explore(workspace, {"--explore", "2"}, 4, "sum");
  INFO(describe(explored.job));
  CHECK(explored.job.exit_status == 0);
  CHECK(std::regex_search(explored.job.err, std::regex(R"(not explored: [1-9]\d* schedules waiting when the run limit )"
                                                       R"(\(2\) was reached \(EXPLORE\))")));
  CHECK(explored.job.err.find("the exploration is NOT complete") != std::string::npos);
  CHECK(explored.results.find(R"("complete": false)") != std::string::npos);
}

TEST_CASE("mpisentry --explore: its own recordings only, a directory of its own, an MPI program", "[races][errors]") {
  Workspace workspace;
  const Explored recorded = explore(workspace, {"--explore", "--record", "mine"}, 2, "sum");
  INFO(describe(recorded.job));
  CHECK(recorded.job.exit_status == 2);
  CHECK(recorded.job.err.find("RECORD and EXPLORE (--explore) are both set: an exploration runs the program many "
                              "times, each run with recordings of its own, in EXPLORE-DIR") != std::string::npos);
  const Explored logged = explore(workspace, {"--explore", "--comm-log", "mine"}, 2, "sum");
  CHECK(logged.job.exit_status == 2);
  CHECK(logged.job.err.find("COMM-LOG and EXPLORE (--explore) are both set") != std::string::npos);

  std::filesystem::create_directories(workspace.dir() / "explored");
  std::ofstream(workspace.dir() / "explored" / "notes.txt") << "mine\n";
  const Explored taken = explore(workspace, {"--explore"}, 2, "sum");
  INFO(describe(taken.job));
  CHECK(taken.job.exit_status == 2);
  CHECK(taken.job.err.find("explored holds files and is not an exploration's (no explore.json): give EXPLORE-DIR "
                           "another directory") != std::string::npos);
  CHECK(std::filesystem::exists(workspace.dir() / "explored" / "notes.txt"));

  std::vector<std::string> command =
      checker_prefix(workspace, {"--explore", "--explore-dir", (workspace.dir() / "other").string()});
  command.insert(command.end(), {"-n", "1", "/bin/true"});
  const JobResult not_mpi = run_job(workspace, command);
  INFO(describe(not_mpi));
  CHECK(not_mpi.exit_status == 2);
  CHECK(not_mpi.err.find("the first run wrote no recording (it ended before MPI_Init, or is not an MPI program)") !=
        std::string::npos);
}

TEST_CASE("probes: --explore finds the bug behind another outcome of MPI_Iprobe or MPI_Improbe from MPI_ANY_SOURCE",
          "[races][explore][probes]") {
  const Program program = TEST_PROGRAM(probes);
  for (const std::string shape : {"iprobe", "improbe", "peek"}) {
    Workspace workspace;
    // Left alone, the run passes.
    const JobResult alone = run_checked(workspace, 3, program, kQuickDeadlock, {shape, "bug"});
    INFO(shape << "\n" << describe(alone));
    REQUIRE(alone.succeeded());
    const Explored explored = explore(workspace, {"--explore"}, 3, program, {shape, "bug"});
    INFO(describe(explored.job));
    CHECK(explored.job.exit_status == 1);
    CHECK(has(explored.job.err, "explore: run 0 (1 of at most 50; 0 schedules waiting): as it runs: passed"));
    CHECK(std::regex_search(explored.job.err, std::regex(R"(explore:   run \d+: (exit status 3|LOCAL:EXIT))")));
    CHECK(std::regex_search(explored.job.err,
                            std::regex(shape == "peek" ? "where rank 0's nonblocking probe from MPI_ANY_SOURCE at "
                                                         "event 0 finds rank [12]'s message, where it found none"
                                                       : "where rank 0's nonblocking probe from MPI_ANY_SOURCE at "
                                                         "event \\d+ finds rank 1's message, not rank 2's")));
    CHECK(has(explored.results, R"("kind": "nonblocking probe")"));
  }
}

TEST_CASE("probes: where every outcome of a nonblocking probe is right, each is tried and none fails",
          "[races][explore][probes][.slow]") {
  const Program program = TEST_PROGRAM(probes);
  for (const std::string shape : {"iprobe", "improbe", "peek"}) {
    Workspace workspace;
    const Explored explored = explore(workspace, {"--explore"}, 3, program, {shape, "correct"});
    INFO(shape << "\n" << describe(explored.job));
    CHECK(explored.job.exit_status == 0);
    CHECK(has(explored.results, R"("failures": [])"));
    // The probe's other outcome was tried, not passed over.
    CHECK(!has(explored.results, R"("first_run_alternatives": 0)"));
    CHECK(has(explored.results, R"("kind": "nonblocking probe")"));
    // Complete only when nothing was left, and said so either way.
    const bool complete = has(explored.results, R"("complete": true)");
    CHECK(has(explored.job.err, complete ? "no failure under any matching tried, and every other sender the runs "
                                           "showed was tried"
                                         : "the exploration is NOT complete"));
  }
}

TEST_CASE("probes causal: a forced find whose message is sent because of the probe hangs, and is the schedule's",
          "[races][explore][probes]") {
  // The forced MPI_Iprobe waits for rank 2's message as MPI_Probe would, and
  // the deadlock checks see it so: a HARD verdict ends that run, not the time
  // limit (DEADLOCK-WARNING, 5 minutes, + 30 s).
  Workspace workspace;
  const Explored explored = explore(workspace, {"--explore"}, 3, TEST_PROGRAM(probes), {"causal", "correct"});
  INFO(describe(explored.job));
  CHECK(explored.job.exit_status == 0);
  CHECK(has(explored.job.err, "finds rank 2's message, where it found none: infeasible, it hung before rank 0's "
                              "forced outcome 0 (I 2) came (GLOBAL:DEADLOCK:HARD"));
  CHECK(has(explored.results, R"("failures": [])"));
}

TEST_CASE("mpisentry --explore 0 before -n N is one run, as --help says, and so is every number in that place",
          "[races][explore][launcher]") {
  const Program program = TEST_PROGRAM(matchings);
  const std::vector<std::vector<std::string>> options = {
      {"--explore", "0"}, {"--explore=0"}, {"--verbose", "0"}, {"--check-max-errors", "0"},
      {"--explore-changes", "1"}, {"--check-suppression-limit", "0"}};
  for (const std::vector<std::string>& option : options) {
    Workspace workspace;
    const JobResult run =
        run_checked(workspace, 2, program, with(option, {"--explore-dir", (workspace.dir() / "explored").string()}),
                    {"sum"});
    INFO(option.front() << "\n" << describe(run));
    CHECK(run.succeeded());
    CHECK(run.out == "sum 1\n");
    CHECK(!has(run.err, "explore:"));
    CHECK(!has(run.err, "give -n N before the program"));
    CHECK(!std::filesystem::exists(workspace.dir() / "explored"));
  }
  // A number of runs, 1 too, explores; one out of range is refused by name.
  Workspace workspace;
  const Explored once = explore(workspace, {"--explore", "1"}, 2, "sum");
  INFO(describe(once.job));
  CHECK(once.job.exit_status == 0);
  CHECK(has(once.job.err, "explore: run 0 (1 of at most 1; 0 schedules waiting): as it runs: passed"));
  CHECK(has(once.results, R"("runs": 1,)"));
  const Explored negative = explore(workspace, {"--explore", "-1"}, 2, "sum");
  CHECK(negative.job.exit_status == 2);
  CHECK(has(negative.job.err, "--explore: EXPLORE \"-1\": out of range (0 to 1000000)"));
}
