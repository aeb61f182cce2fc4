// The decisions of --explore (offline/explore.hpp): which schedules a run
// opens, how a run is judged (a hang before a forced outcome came is the
// schedule's, never the program's), and how a failing run is replayed.
#include "launcher/arguments.hpp"
#include "offline/explore.hpp"

#include <catch2/catch.hpp>

using namespace mpisentry::launcher;
using namespace mpisentry::offline::explore;
using namespace mpisentry::recording;

namespace {

Recording recording_of(std::vector<Event> events, std::map<std::uint64_t, std::vector<int>> alternatives = {},
                       Ending ending = Ending::Finalized) {
  Recording recording;
  recording.header = {0, 3, "./app"};
  for (const Event& event : events) recording.runs.push_back({event, 1});
  recording.alternatives = std::move(alternatives);
  recording.ending = ending;
  return recording;
}

Event receive(int source) { return {Kind::Receive, source, {}}; }
const Event kPollNothing{Kind::Poll, kNothing, {}};

const char* const kHardReport =
    R"({"schema":"mpisentry-report/5","check":"GLOBAL:DEADLOCK:HARD","severity":"error","rule":"a cycle"})";

}  // namespace

TEST_CASE("explore: a run opens one schedule per other sender of each receive, the earliest receive first",
          "[explore]") {
  const std::vector<Recording> run = {
      recording_of({kPollNothing, receive(2), receive(1)}, {{1, {1, 3}}, {2, {2}}}),
      recording_of({receive(0)}, {{0, {2, 0}}}),  // the taken sender among them is not another
      recording_of({}),
  };
  std::size_t beyond = 0;
  const std::vector<Schedule> opened = children({}, run, 2, beyond);
  REQUIRE(opened.size() == 4);
  CHECK(beyond == 0);
  CHECK(opened[0].changes == std::vector<Change>{{1, 0, 0, 2}});  // event 0 before event 1
  CHECK(opened[0].forced.at(1) == std::vector<Event>{receive(2)});
  CHECK(opened[1].changes == std::vector<Change>{{0, 1, 2, 1}});
  CHECK(opened[1].forced.at(0) == std::vector<Event>{kPollNothing, receive(1)});  // what came before, then the change
  CHECK(opened[2].changes == std::vector<Change>{{0, 1, 2, 3}});
  CHECK(opened[3].changes == std::vector<Change>{{0, 2, 1, 2}});
  CHECK(opened[3].forced.at(0) == std::vector<Event>{kPollNothing, receive(2), receive(2)});
}

TEST_CASE("explore: a schedule's run opens only receives past its forced outcomes, and no more changes than allowed",
          "[explore]") {
  Schedule parent;
  parent.forced[0] = {receive(1)};
  parent.changes = {{0, 0, 2, 1}};
  // The forced receive names rank 2 as its alternative now: not opened again.
  const std::vector<Recording> run = {recording_of({receive(1), receive(2)}, {{0, {2}}, {1, {1}}})};
  std::size_t beyond = 0;
  const std::vector<Schedule> opened = children(parent, run, 2, beyond);
  REQUIRE(opened.size() == 1);
  CHECK(opened[0].changes == std::vector<Change>{{0, 0, 2, 1}, {0, 1, 2, 1}});
  CHECK(opened[0].forced.at(0) == std::vector<Event>{receive(1), receive(1)});
  CHECK(key(opened[0]) != key(parent));

  const std::vector<Schedule> bounded = children(parent, run, 1, beyond);
  CHECK(bounded.empty());
  CHECK(beyond == 1);
}

TEST_CASE("explore: a nonblocking probe from MPI_ANY_SOURCE opens a schedule per other sender, a find or none",
          "[explore][probes]") {
  const Event found_two{Kind::Poll, 2, {}};
  // Event 0: a row of Iprobes that found nothing, its first with rank 2's and
  // rank 1's later messages; event 3: the find of rank 2's, rank 1's there too.
  Recording polls = recording_of({kPollNothing, kPollNothing, kPollNothing, found_two}, {{0, {2, 1}}, {3, {1}}});
  std::size_t beyond = 0;
  const std::vector<Schedule> opened = children({}, {polls}, 2, beyond);
  REQUIRE(opened.size() == 3);
  CHECK(opened[0].changes == std::vector<Change>{{0, 0, kNothing, 2, Kind::Poll}});
  CHECK(opened[0].forced.at(0) == std::vector<Event>{found_two});
  CHECK(opened[1].changes == std::vector<Change>{{0, 0, kNothing, 1, Kind::Poll}});
  CHECK(opened[2].changes == std::vector<Change>{{0, 3, 2, 1, Kind::Poll}});
  CHECK(opened[2].forced.at(0) ==
        std::vector<Event>{kPollNothing, kPollNothing, kPollNothing, {Kind::Poll, 1, {}}});
  CHECK(describe(opened[2].changes[0]) ==
        "rank 0's nonblocking probe from MPI_ANY_SOURCE at event 3 finds rank 1's message, not rank 2's");
  CHECK(describe(opened[0].changes[0]) ==
        "rank 0's nonblocking probe from MPI_ANY_SOURCE at event 0 finds rank 2's message, where it found none");
  CHECK(describe({0, 4, 2, 1, Kind::Probe}) ==
        "rank 0's probe from MPI_ANY_SOURCE at event 4 takes rank 1's message, not rank 2's");
  // A receive that never completed (the run ended in it) is varied too.
  const std::vector<Schedule> cut = children({}, {recording_of({receive(kUnknown)}, {{0, {1}}}, Ending::Cut)}, 2, beyond);
  REQUIRE(cut.size() == 1);
  CHECK(describe(cut[0].changes[0]) ==
        "rank 0's receive from MPI_ANY_SOURCE at event 0 takes rank 1's message, where it took none (it never "
        "completed)");
}

TEST_CASE("explore: a schedule file forces its rank's outcomes and frees the rest", "[explore]") {
  const Header header{1, 3, "./app x"};
  const std::vector<Event> forced = {kPollNothing, kPollNothing, receive(2)};
  CHECK(schedule_text(header, &forced) == Writer::header_text(header) + "I - *2\nR 2\nfree\n");
  CHECK(schedule_text(header, nullptr) == Writer::header_text(header) + "free\n");
  CHECK(parse(schedule_text(header, &forced)).events() == forced);
}

TEST_CASE("explore: a hang before a forced outcome came is the schedule's, after it or a crash the program's",
          "[explore]") {
  Schedule schedule;
  schedule.forced[0] = {kPollNothing, receive(2)};
  schedule.changes = {{0, 1, 1, 2}};

  RunFacts hang;
  hang.exit_status = 1;
  hang.job_report = kHardReport;
  // Rank 0 waits in its forced receive: posted ("R ?"), never completed.
  hang.recordings = {recording_of({kPollNothing, receive(kUnknown)}, {}, Ending::Cut), recording_of({})};
  const Outcome stuck = classify(hang, schedule, 0);
  CHECK(stuck.verdict == Verdict::Infeasible);
  CHECK(stuck.what.find("it hung before rank 0's forced outcome 1 (R 2) came (GLOBAL:DEADLOCK:HARD: a cycle)") !=
        std::string::npos);

  RunFacts killed = hang;
  killed.job_report.reset();
  killed.killed = true;
  CHECK(classify(killed, schedule, 0).verdict == Verdict::Infeasible);

  // The forced receive took its message; the hang came later.
  hang.recordings[0] = recording_of({kPollNothing, receive(2), receive(kUnknown)}, {}, Ending::Cut);
  const Outcome later = classify(hang, schedule, 0);
  CHECK(later.verdict == Verdict::Failed);
  CHECK(later.what == "GLOBAL:DEADLOCK:HARD: a cycle");

  // A crash is the program's, wherever the schedule was.
  RunFacts crash;
  crash.exit_status = 139;
  crash.rank_reports[2] = R"({"check":"LOCAL:EXIT:SIGNAL","severity":"error","rule":"","signal":"SIGSEGV"})";
  crash.recordings = {recording_of({kPollNothing}, {}, Ending::Cut), recording_of({})};
  const Outcome crashed = classify(crash, schedule, 0);
  CHECK(crashed.verdict == Verdict::Failed);
  CHECK(crashed.what == "rank 2: LOCAL:EXIT:SIGNAL (SIGSEGV)");
}

TEST_CASE("explore: a replay that diverged is the schedule's, another exit status, a warning or none is judged",
          "[explore]") {
  Schedule schedule;
  schedule.forced[1] = {receive(0)};
  RunFacts run;
  run.exit_status = 1;
  run.recordings = {recording_of({}), recording_of({}, {}, Ending::Diverged)};
  const Outcome diverged = classify(run, schedule, 0);
  CHECK(diverged.verdict == Verdict::Infeasible);
  CHECK(diverged.what == "rank 1 called otherwise than its schedule (its replay diverged)");

  run.recordings = {recording_of({}), recording_of({receive(0)})};
  CHECK(classify(run, schedule, 0).what == "exit status 1 (the first run: 0)");
  CHECK(classify(run, schedule, 1).verdict == Verdict::Passed);
  run.exit_status = 0;
  run.job_report = R"({"check":"GLOBAL:DEADLOCK:NO_PROGRESS","severity":"warning"})";
  CHECK(classify(run, schedule, 0).verdict == Verdict::Passed);
  run.job_report = R"({"check":"GLOBAL:DEADLOCK:HA)";
  CHECK(classify(run, schedule, 0).what == "a report that is not JSON (cut while it was written?)");
}

TEST_CASE("explore: a failing run is replayed with the exploration's options but its own", "[explore]") {
  const Arguments args = parse_arguments(std::vector<std::string>{
      "--explore", "--check-all", "--deadlock-timeout", "2s", "--explore-changes", "3", "-n", "3", "./app", "x"});
  REQUIRE(args.errors.empty());
  const std::vector<std::string> words = replay_arguments(args);
  CHECK(words == std::vector<std::string>{"--check", "GLOBAL:COLLECTIVE:** ON", "--check", "GLOBAL:MSG:** ON",
                                          "--check", "GLOBAL:RMA:** ON", "--check", "LOCAL:** ON", "--check", "GLOBAL:MSG:RACE OFF",
                                          "--deadlock-timeout", "2s", "-n", "3", "./app", "x"});
  const Arguments line = parse_arguments(std::vector<std::string>{"--explore", "7", "--", "srun", "./app"});
  CHECK(replay_arguments(line) == std::vector<std::string>{"--", "srun", "./app"});
  CHECK(line.settings.front().value == "7");
  CHECK(args.settings.front().value == "50");  // --explore alone (flags.def says so too)
}
