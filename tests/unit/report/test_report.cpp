// The report module: rank lists, rank classes, snapshot wire form, and the
// text, JSON and DOT reports.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "report/quote.hpp"
#include "report/report.hpp"

using namespace mpisentry;
using namespace mpisentry::report;

namespace {

const std::string kProgram = "/src/tests/programs/recv_recv.c";

std::vector<Frame> exchange_stack() {
  return {{"exchange", kProgram, 14, "recv_recv"}, {"main", kProgram, 25, "recv_recv"}};
}

ThreadSnapshot recv_thread(int id, int source, double seconds, std::vector<Frame> stack = exchange_stack()) {
  ThreadSnapshot thread;
  thread.id = id;
  thread.state = RankState::Blocked;
  thread.seconds = seconds;
  thread.function = "MPI_Recv";
  thread.call = fmt::format("MPI_Recv(..., source={}, ...)", source);
  thread.wait_mode = WaitMode::All;
  thread.waits_for = {source};
  thread.wait_reason = fmt::format("MPI_Recv from rank {}", source);
  thread.stack = std::move(stack);
  return thread;
}

// A rank of one thread, blocked in a receive from `source`.
RankSnapshot recv_from(int rank, int source, double seconds, std::vector<Frame> stack = exchange_stack()) {
  RankSnapshot snapshot;
  snapshot.rank = rank;
  snapshot.host = "node1";
  snapshot.pid = 1000 + rank;
  snapshot.state = RankState::Blocked;
  snapshot.seconds = seconds;
  snapshot.threads = {recv_thread(0, source, seconds, std::move(stack))};
  return snapshot;
}

RankSnapshot running(int rank) {
  RankSnapshot snapshot;
  snapshot.rank = rank;
  snapshot.host = "node2";
  snapshot.pid = 2000 + rank;
  ThreadSnapshot thread;
  thread.stack = {{"compute", "/src/x.c", 40, "x"}, {"main", "/src/x.c", 9, "x"}};
  snapshot.threads = {thread};
  return snapshot;
}

// The thread of one rank's only thread.
ThreadSnapshot& only(RankSnapshot& rank) {
  REQUIRE(rank.threads.size() == 1);
  return rank.threads.front();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  const auto lines = lines_of(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// Parses as JSON.
bool json_well_formed(const std::string& text) { return nlohmann::json::accept(text); }

// ITC's example: 0 and 1 wait for each other, 2 and 3 wait behind them.
Report recv_recv_report() {
  const std::vector<Frame> behind = {{"wait_behind", kProgram, 18, "recv_recv"}, {"main", kProgram, 27, "recv_recv"}};
  Report report;
  report.threshold_seconds = 5;
  report.ranks = {recv_from(0, 1, 5.2), recv_from(1, 0, 5.2, {{"main", kProgram, 30, "recv_recv"}}),
                  recv_from(2, 0, 5.1, behind), recv_from(3, 1, 5.14, behind)};
  report.rule = "every rank of the cycle waits in a call that cannot return before the next rank acts";
  only(report.ranks[0]).call =
      "MPI_Recv(buf=0x7ffd5b2c, count=1, datatype=MPI_INT, source=1, tag=0, comm=MPI_COMM_WORLD, status=0x7ffd5b30)";
  report.core = {{0, 1}, {{{0, 1}, {0, 1, 0}}}, {2, 3}};
  report.arcs = {{{0, 0}, 1}, {{1, 0}, 0}, {{2, 0}, 0}, {{3, 0}, 1}};
  return report;
}

const std::string kThreads = "/src/tests/programs/threads.c";

// A cycle that holds only if MPI_Bcast synchronizes: rank 0, the root, may
// wait for rank 1 to enter the broadcast, while rank 1's thread 1 waits to
// receive from rank 0. Rank 1's thread 0 waits in a barrier for rank 2,
// which runs.
Report unsafe_report() {
  Report report;
  report.check = Check::Unsafe;
  report.threshold_seconds = 5;
  report.partial = true;
  report.rule = "the cycle holds only if MPI_Bcast synchronizes; no progress in 2 looks 0.3 s apart";

  RankSnapshot root;
  root.rank = 0;
  root.host = "node1";
  root.pid = 1000;
  root.state = RankState::Blocked;
  root.seconds = 5;
  root.activity = 41;
  root.collectives = {{7, 1}};
  ThreadSnapshot bcast;
  bcast.state = RankState::Blocked;
  bcast.seconds = 5;
  bcast.function = "MPI_Bcast";
  bcast.call = "MPI_Bcast(root=0, comm=MPI_COMM_WORLD)";
  bcast.possibly_waits_for = {1};
  bcast.wait_reason = "MPI_Bcast root, rank 1 not in it yet";
  bcast.collective = {7, 1, "MPI_Bcast", 0, ""};
  bcast.stack = {{"broadcast", kThreads, 20, "threads"}, {"main", kThreads, 30, "threads"}};
  root.threads = {bcast};

  RankSnapshot two_threads = recv_from(1, 0, 5);
  two_threads.activity = 18446744073709551615ull;
  ThreadSnapshot barrier = only(two_threads);
  barrier.function = "MPI_Barrier";
  barrier.call = "MPI_Barrier(comm=workers)";
  barrier.waits_for = {2};
  barrier.wait_reason = "MPI_Barrier, rank 2 missing";
  barrier.collective = {18446744073709551615ull, 4, "MPI_Barrier", -1, ""};
  barrier.stack = {{"sync_workers", kThreads, 12, "threads"}};
  ThreadSnapshot receive = recv_thread(1, 0, 5, {{"listen", kThreads, 8, "threads"}});
  receive.messages = {{false, 0, 3, 1}};
  two_threads.threads = {barrier, receive};

  report.ranks = {root, two_threads, running(2)};
  report.core = {{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}};
  report.arcs = {{{0, 0}, 1, WaitMode::All, true}, {{1, 0}, 2}, {{1, 1}, 0}};
  return report;
}

}  // namespace

TEST_CASE("compress_ranks writes runs as ranges", "[report]") {
  CHECK(compress_ranks({0, 1, 2, 3, 5, 7, 8}) == "0-3,5,7-8");
  CHECK(compress_ranks({}) == "");
  CHECK(compress_ranks({7}) == "7");
  CHECK(compress_ranks({0, 2}) == "0,2");
  CHECK(compress_ranks({5, 3, 4, 3, 9}) == "3-5,9");
}

TEST_CASE("merge_stacks groups ranks by state and each thread's state, function and stack", "[report]") {
  const DeadlockCore no_core;

  SECTION("equal stacks merge and calls may differ") {
    const std::vector<RankSnapshot> ranks = {recv_from(1, 0, 5), recv_from(0, 1, 5)};
    const auto classes = merge_stacks(ranks, no_core);
    REQUIRE(classes.size() == 1);
    CHECK(classes[0].ranks == std::vector<int>{0, 1});
    CHECK(classes[0].representative == &ranks[1]);
    REQUIRE(classes[0].members.size() == 2);
    CHECK(classes[0].members[1] == &ranks[0]);
  }

  SECTION("a different frame, function or state splits") {
    std::vector<RankSnapshot> ranks = {recv_from(0, 1, 5), recv_from(1, 0, 5), recv_from(2, 0, 5),
                                       recv_from(3, 0, 5), recv_from(4, 0, 5)};
    only(ranks[1]).stack[1].line = 26;
    only(ranks[2]).function = "MPI_Ssend";
    ranks[3].state = RankState::Finalizing;
    only(ranks[4]).state = RankState::Finalizing;
    CHECK(merge_stacks(ranks, no_core).size() == 5);
  }

  SECTION("neighbours that differ only in the rank's state or exit status split") {
    std::vector<RankSnapshot> ranks = {recv_from(0, 1, 5), recv_from(1, 0, 5), recv_from(2, 0, 5)};
    ranks[1].state = RankState::Finalizing;
    ranks[2].exit_status = 3;
    CHECK(merge_stacks(ranks, no_core).size() == 3);
  }

  SECTION("ranks of several threads merge when every thread matches") {
    std::vector<RankSnapshot> ranks;
    for (int rank = 0; rank < 5; ++rank) {
      ranks.push_back(recv_from(rank, 0, 5));
      ranks.back().threads.push_back(recv_thread(1, rank, 5, {{"worker", "/src/w.c", 3, "w"}}));
    }
    ranks[2].threads[1].stack[0].line = 4;    // the second thread elsewhere
    ranks[3].threads[1].id = 2;               // another thread
    ranks[4].threads.pop_back();              // one thread fewer
    const auto classes = merge_stacks(ranks, no_core);
    REQUIRE(classes.size() == 4);
    CHECK(classes[0].ranks == std::vector<int>{0, 1});
  }

  SECTION("classes holding core ranks come first, each group by lowest rank") {
    std::vector<RankSnapshot> ranks;
    for (int rank = 0; rank < 6; ++rank) ranks.push_back(recv_from(rank, 0, 5, {{"f", "/a.c", rank % 3, ""}}));
    const auto classes = merge_stacks(ranks, DeadlockCore{{5}, {}, {}});
    REQUIRE(classes.size() == 3);
    CHECK(classes[0].ranks == std::vector<int>{2, 5});
    CHECK(classes[1].ranks == std::vector<int>{0, 3});
    CHECK(classes[2].ranks == std::vector<int>{1, 4});
  }

  SECTION("1024 ranks in two places give two classes") {
    std::vector<RankSnapshot> ranks;
    for (int rank = 0; rank < 1024; ++rank) ranks.push_back(recv_from(rank, 0, 5));
    only(ranks[512]).stack[0].line = 99;
    const auto classes = merge_stacks(ranks, DeadlockCore{{512}, {}, {}});
    REQUIRE(classes.size() == 2);
    CHECK(classes[0].ranks == std::vector<int>{512});
    CHECK(classes[1].ranks.size() == 1023);
    CHECK(classes[1].representative->rank == 0);
  }
}

TEST_CASE("find_rank and find_thread look up by number, not position", "[report]") {
  const Report report = unsafe_report();
  REQUIRE(find_rank(report.ranks, 1) == &report.ranks[1]);
  CHECK(find_rank(report.ranks, 3) == nullptr);
  std::vector<RankSnapshot> out_of_order(2);
  out_of_order[0].rank = 1;
  out_of_order[1].rank = 0;
  CHECK(find_rank(out_of_order, 0) == &out_of_order[1]);
  CHECK(find_rank(out_of_order, 1) == &out_of_order[0]);
  CHECK(find_thread(report.ranks[1], 1) == &report.ranks[1].threads[1]);
  CHECK(find_thread(report.ranks[1], 2) == nullptr);
  RankSnapshot gap = report.ranks[1];
  gap.threads[1].id = 4;
  CHECK(find_thread(gap, 4) == &gap.threads[1]);
}

TEST_CASE("a snapshot survives serialization exactly", "[report]") {
  RankSnapshot snapshot = recv_from(7, 3, 1.0 / 3);
  snapshot.host = std::string("odd\0host\n;12:\xff\xfe", 15);
  snapshot.state = RankState::Polling;
  snapshot.activity = 0xFFFFFFFFFFFFFFFFull;
  snapshot.collectives = {{0xFFFFFFFFFFFFFFFFull, 3}, {1, 0}};
  snapshot.locked_windows = {0xFFFFFFFFFFFFFFFFull, 5};
  ThreadSnapshot& first = only(snapshot);
  first.call = "MPI_Waitany(count=3, ...)\n";
  first.state = RankState::Polling;
  first.wait_mode = WaitMode::Any;
  first.waits_for = {3, -1, 2147483647};
  first.possibly_waits_for = {-2147483647 - 1, 4};
  first.lock_window = 0xFFFFFFFFFFFFFFFEull;
  first.collective = {0xFFFFFFFFFFFFFFFFull, 18446744073709551615ull, "MPI_Bcast", 2, "a \"quoted\" op"};
  first.converted_send = true;
  first.messages = {{true, 3, 7, 0xFFFFFFFFFFFFFFFFull, true},
                    {false, PendingMessage::kAny, PendingMessage::kAny, 1}};
  first.stack.push_back({"", "", 0, ""});
  snapshot.held_tasks = 4294967295u;
  snapshot.pending = {{false, 2147483647, -1, 0xFFFFFFFFFFFFFFFFull}};
  snapshot.pending_unlisted = true;
  ThreadSnapshot second = recv_thread(5, 1, 2.5e-300, {});
  second.state = RankState::Finalizing;
  second.wait_reason = std::string("a\0;:b", 5);
  snapshot.threads.push_back(second);
  snapshot.threads.push_back(ThreadSnapshot{});
  CHECK(deserialize(serialize(snapshot)) == snapshot);

  const RankSnapshot empty;
  CHECK(deserialize(serialize(empty)) == empty);
}

TEST_CASE("deserialize rejects damaged input with a message", "[report]") {
  RankSnapshot snapshot = recv_from(1, 0, 2.5);
  snapshot.threads.push_back(recv_thread(1, 0, 2.5));
  snapshot.threads[1].possibly_waits_for = {2};
  snapshot.threads[1].collective = {9, 1, "MPI_Bcast", 0, ""};
  snapshot.threads[1].messages = {{true, 0, 1, 9}};
  snapshot.collectives = {{9, 1}};
  snapshot.held_tasks = 2;
  snapshot.pending = {{true, 0, 5, 9}, {false, PendingMessage::kAny, 3, 9}};
  const std::string bytes = serialize(snapshot);

  SECTION("every truncation is caught") {
    for (std::size_t length = 0; length < bytes.size(); ++length) {
      CAPTURE(length);
      CHECK_THROWS_AS(deserialize(std::string_view(bytes).substr(0, length)), std::invalid_argument);
    }
    CHECK_THROWS_WITH(deserialize(bytes.substr(0, bytes.size() - 2)), Catch::Contains("truncated") &&
                                                                         Catch::Contains("tallies_unlisted"));
  }
  SECTION("garbage, a bad field and trailing bytes") {
    CHECK_THROWS_WITH(deserialize("hello"), Catch::Contains("does not start with"));
    CHECK_THROWS_WITH(deserialize("mpisentry-snapshot/6;0;0:0;0;0;"), Catch::Contains("does not start with"));
    std::string bad_state = bytes;
    const std::string state_field = "node11001;1;";  // host, pid, state
    REQUIRE(bad_state.find(state_field) != std::string::npos);
    bad_state.replace(bad_state.find(state_field), state_field.size(), "node11001;9;");
    CHECK_THROWS_WITH(deserialize(bad_state), Catch::Contains("\"state\"") && Catch::Contains("no value 9"));
    std::string bad_mode = bytes;
    const std::string mode_field = "MPI_Recv(..., source=0, ...)1;";  // a thread's call, wait_mode
    REQUIRE(bad_mode.find(mode_field) != std::string::npos);
    bad_mode.replace(bad_mode.find(mode_field), mode_field.size(), "MPI_Recv(..., source=0, ...)3;");
    CHECK_THROWS_WITH(deserialize(bad_mode), Catch::Contains("\"threads.wait_mode\"") &&
                                                 Catch::Contains("no value 3"));
    CHECK_THROWS_WITH(deserialize(bytes + "x"), Catch::Contains("1 unexpected bytes"));
    // rank, host, pid, state, seconds, activity, then a count no input can hold
    CHECK_THROWS_WITH(deserialize("mpisentry-snapshot/10;0;0:0;0;0;0;-1;999999999999;"),
                      Catch::Contains("\"threads\""));
    // ... one thread: id, state, seconds, function, call, wait_mode, waits_for, then possibly_waits_for
    CHECK_THROWS_WITH(deserialize("mpisentry-snapshot/10;0;0:0;0;0;0;-1;1;0;1;0;0:0:1;0;x;"),
                      Catch::Contains("\"threads.possibly_waits_for\"") && Catch::Contains("not a number"));
    // ... waits_for as runs that do not ascend apart: one form per set
    for (const char* runs : {"1;5;3;", "2;0;3;4;5;", "2;4;5;0;1;"})
      CHECK_THROWS_WITH(deserialize(fmt::format("mpisentry-snapshot/10;0;0:0;0;0;0;-1;1;0;1;0;0:0:1;{}0;", runs)),
                        Catch::Contains("\"threads.waits_for\"") && Catch::Contains("out of order"));
  }
}

TEST_CASE("state and wait mode names", "[report]") {
  CHECK(std::string(to_string(RankState::Finalizing)) == "finalizing");
  CHECK(std::string(to_string(RankState::Polling)) == "polling");
  CHECK(std::string(to_string(WaitMode::Any)) == "any");
  CHECK(std::string(check_name(Check::NoProgress)) == "GLOBAL:DEADLOCK:NO_PROGRESS");
  CHECK(std::string(check_name(Check::Unsafe)) == "GLOBAL:DEADLOCK:UNSAFE");
}

TEST_CASE("HARD and POTENTIAL are fatal, the others warnings", "[report]") {
  CHECK(aborts_job(Check::DeadlockHard));
  CHECK(aborts_job(Check::DeadlockPotential));
  CHECK_FALSE(aborts_job(Check::NoProgress));
  CHECK_FALSE(aborts_job(Check::Unsafe));
  CHECK_FALSE(aborts_job(Check::ExitSignal));
  CHECK_FALSE(aborts_job(Check::ExitBeforeFinalize));
  CHECK(severity(Check::ExitBeforeFinalize) == Severity::Fatal);
  CHECK(severity(Check::OutsideMpi) == Severity::Warning);
  CHECK(severity(Check::Dump) == Severity::Info);
}

TEST_CASE("format_text prints ITC's hard deadlock report", "[report]") {
  const std::string expected =
      "[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error\n"
      "[0] ERROR:    Application aborted because no progress was observed for over 0:05 minutes (DEADLOCK-TIMEOUT 5s):\n"
      "[0] ERROR:    every rank is blocked in an MPI call, waiting for another rank.\n"
      "[0] ERROR:    rule: every rank of the cycle waits in a call that cannot return before the next rank acts\n"
      "[0] ERROR:    deadlock: rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv from rank 1; rank 1: MPI_Recv from rank 0)\n"
      "[0] ERROR:    blocked behind the deadlock: ranks 2-3\n"
      "[0] ERROR:    [0] blocked for 5.2 s in MPI call:\n"
      "[0] ERROR:       where: host node1: rank 0 (pid 1000)\n"
      "[0] ERROR:       MPI_Recv(buf=0x7ffd5b2c, count=1, datatype=MPI_INT, source=1, tag=0, comm=MPI_COMM_WORLD, "
      "status=0x7ffd5b30)\n"
      "[0] ERROR:       waits for: rank 1\n"
      "[0] ERROR:       exchange (/src/tests/programs/recv_recv.c:14)\n"
      "[0] ERROR:       main (/src/tests/programs/recv_recv.c:25)\n"
      "[0] ERROR:    [1] blocked for 5.2 s in MPI call:\n"
      "[0] ERROR:       where: host node1: rank 1 (pid 1001)\n"
      "[0] ERROR:       MPI_Recv(..., source=0, ...)\n"
      "[0] ERROR:       waits for: rank 0\n"
      "[0] ERROR:       main (/src/tests/programs/recv_recv.c:30)\n"
      "[0] ERROR:    [ranks 2-3 (2 ranks)] blocked for 5.1 s in MPI call:\n"
      "[0] ERROR:       where: host node1: ranks 2-3 (pids 1002-1003)\n"
      "[0] ERROR:       [2] MPI_Recv(..., source=0, ...)\n"
      "[0] ERROR:       [3] MPI_Recv(..., source=1, ...)\n"
      "[0] ERROR:       waits for: [2] rank 0; [3] rank 1\n"
      "[0] ERROR:       wait_behind (/src/tests/programs/recv_recv.c:18)\n"
      "[0] ERROR:       main (/src/tests/programs/recv_recv.c:27)\n"
      "[0] INFO: GLOBAL:DEADLOCK:HARD: found 1 time (1 error + 0 warnings), 0 reports were suppressed\n";
  CHECK(format_text(recv_recv_report()) == expected);
}

TEST_CASE("format_text of two ranks in the same place prints one class", "[report]") {
  Report report;
  report.threshold_seconds = 90;
  report.ranks = {recv_from(0, 1, 95.04), recv_from(1, 0, 95.3)};
  report.core = {{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}};
  const std::string text = format_text(report);
  CHECK(has_line(text, "[0] ERROR:    Application aborted because no progress was observed for over 1:30 minutes "
                       "(DEADLOCK-TIMEOUT 90s):"));
  CHECK(has_line(text, "[0] ERROR:    [ranks 0-1 (2 ranks)] blocked for 95.0-95.3 s in MPI call:"));
  CHECK(has_line(text, "[0] ERROR:       waits for: [0] rank 1; [1] rank 0"));
  CHECK(text.find("blocked behind") == std::string::npos);
}

TEST_CASE("format_text of a partial deadlock shows the running rank", "[report]") {
  Report report;
  report.threshold_seconds = 10;
  report.partial = true;
  report.ranks = {recv_from(0, 2, 11), recv_from(1, 0, 11), recv_from(2, 1, 11), running(3)};
  report.core = {{0, 1, 2}, {{{0, 1, 2}, {0, 2, 1, 0}}}, {}};
  const auto lines = lines_of(format_text(report));
  CHECK(has_line(format_text(report), "[0] ERROR:    ranks 0-2 are blocked in MPI calls that only each other can "
                                      "complete; the other ranks still run."));
  const auto header = std::find(lines.begin(), lines.end(), "[0] ERROR:    [3] running outside MPI, now at:");
  REQUIRE(header != lines.end());
  REQUIRE(header + 1 != lines.end());
  REQUIRE(header + 2 != lines.end());
  CHECK(header[1] == "[0] ERROR:       where: host node2: rank 3 (pid 2003)");
  CHECK(header[2] == "[0] ERROR:       compute (/src/x.c:40)");
  CHECK(lines[3] == "[0] ERROR:    deadlock: rank 0 -> rank 2 -> rank 1 -> rank 0 (rank 0: MPI_Recv from rank 2; "
                    "rank 2: MPI_Recv from rank 1; rank 1: MPI_Recv from rank 0)");
  CHECK(lines[4] == "[0] ERROR:    [ranks 0-2 (3 ranks)] blocked for 11.0 s in MPI call:");
}

TEST_CASE("format_text of a potential deadlock lists the converted sends", "[report]") {
  Report report;
  report.check = Check::DeadlockPotential;
  report.threshold_seconds = 5;
  for (int rank = 0; rank < 2; ++rank) {
    RankSnapshot send = recv_from(rank, 1 - rank, 5.5);
    only(send).function = "MPI_Send";
    only(send).call = fmt::format("MPI_Send(dest={})", 1 - rank);
    only(send).converted_send = true;
    report.ranks.push_back(send);
  }
  report.ranks.push_back(recv_from(2, 0, 5.5));
  report.core = {{0, 1}, {{{0, 1}, {0, 1, 0}}}, {2}};
  const std::string text = format_text(report);
  CHECK(lines_of(text)[0] == "[0] ERROR: GLOBAL:DEADLOCK:POTENTIAL: fatal error");
  CHECK(has_line(text, "[0] ERROR:    Application aborted because no progress was observed for over 0:05 minutes "
                       "(DEADLOCK-TIMEOUT 5s) with standard sends made synchronous "
                       "(CHECK GLOBAL:DEADLOCK:POTENTIAL ON):"));
  CHECK(has_line(text, "[0] ERROR:    the program depends on MPI buffering to proceed: these sends complete only "
                       "when MPI buffers them:"));
  CHECK(lines_of(text)[3] == "[0] ERROR:       [0] MPI_Send(dest=1)");
  CHECK(lines_of(text)[4] == "[0] ERROR:       [1] MPI_Send(dest=0)");
  CHECK(has_line(text, "[0] ERROR:    blocked behind the deadlock: rank 2"));
}

TEST_CASE("format_text of no progress is a warning about polling ranks", "[report]") {
  Report report;
  report.check = Check::NoProgress;
  report.threshold_seconds = 300;
  report.threshold_key = "DEADLOCK-WARNING";
  for (int rank = 0; rank < 3; ++rank) {
    RankSnapshot polling = recv_from(rank, 0, 12);
    polling.state = RankState::Polling;
    only(polling).state = RankState::Polling;
    only(polling).function = "MPI_Test";
    only(polling).call = "MPI_Test(request=0x1, flag=0x2, status=0x3)";
    report.ranks.push_back(polling);
  }
  const std::string text = format_text(report);
  const auto lines = lines_of(text);
  CHECK(lines[0] == "[0] WARNING: GLOBAL:DEADLOCK:NO_PROGRESS: warning");
  CHECK(lines[1] == "[0] WARNING:    no progress was observed for over 5:00 minutes on average (DEADLOCK-WARNING "
                    "300s); the program goes on.");
  CHECK(lines[2] == "[0] WARNING:    [ranks 0-2 (3 ranks)] no progress for 12.0 s, polling with MPI call:");
  CHECK(lines[3] == "[0] WARNING:       where: host node1: ranks 0-2 (pids 1000-1002)");
  CHECK(lines[4] == "[0] WARNING:       MPI_Test(request=0x1, flag=0x2, status=0x3)");
  CHECK(text.find("waits for") == std::string::npos);
  CHECK(lines.back() ==
        "[0] INFO: GLOBAL:DEADLOCK:NO_PROGRESS: found 1 time (0 errors + 1 warning), 0 reports were suppressed");
}

TEST_CASE("format_text of 1024 ranks in a barrier stays short", "[report]") {
  Report report;
  report.threshold_seconds = 5;
  for (int rank = 0; rank < 1024; ++rank) {
    RankSnapshot barrier = recv_from(rank, 512, 5.0 + (rank % 4) * 0.1);
    only(barrier).function = "MPI_Barrier";
    only(barrier).call = "MPI_Barrier(comm=MPI_COMM_WORLD)";
    only(barrier).wait_reason = "MPI_Barrier, rank 512 missing";
    report.ranks.push_back(barrier);
  }
  report.ranks[512] = recv_from(512, 0, 5.3, {{"main", "/src/b.c", 7, "b"}});
  report.core = {{0, 512}, {{{0, 512}, {0, 512, 0}}}, {}};
  for (int rank = 1; rank < 1024; ++rank) {
    if (rank != 512) report.core.blocked_behind.push_back(rank);
  }
  const std::string text = format_text(report);
  CHECK(lines_of(text).size() < 60);
  CHECK(has_line(text, "[0] ERROR:    blocked behind the deadlock: ranks 1-511,513-1023"));
  CHECK(has_line(text, "[0] ERROR:    [ranks 0-511,513-1023 (1023 ranks)] blocked for 5.0-5.3 s in MPI call:"));
  CHECK(has_line(text, "[0] ERROR:       MPI_Barrier(comm=MPI_COMM_WORLD)"));
  CHECK(has_line(text, "[0] ERROR:       waits for: rank 512"));
  CHECK(has_line(text, "[0] ERROR:    [512] blocked for 5.3 s in MPI call:"));
}

TEST_CASE("format_text bounds long lists", "[report]") {
  Report report;
  report.threshold_seconds = 5;
  for (int rank = 0; rank < 20; ++rank) report.ranks.push_back(recv_from(rank, (rank + 1) % 20, 6));
  DeadlockCycle ring;
  for (int rank = 0; rank < 20; ++rank) ring.cycle.push_back(rank);
  ring.ranks = ring.cycle;
  ring.cycle.push_back(0);
  report.core = {ring.ranks, {ring}, {}};
  only(report.ranks[0]).stack.resize(40, Frame{"deep", "", 0, "libdeep.so"});
  for (int rank = 1; rank < 20; ++rank) only(report.ranks[rank]).stack.clear();
  const std::string text = format_text(report);
  CHECK(has_line(text, "[0] ERROR:    deadlock: rank 0 -> rank 1 -> rank 2 -> rank 3 -> rank 4 -> rank 5 -> rank 6 "
                       "-> rank 7 -> ... (12 more ranks) -> rank 0 (rank 0: MPI_Recv from rank 1; rank 1: MPI_Recv "
                       "from rank 2; rank 2: MPI_Recv from rank 3; rank 3: MPI_Recv from rank 4; rank 4: MPI_Recv "
                       "from rank 5; rank 5: MPI_Recv from rank 6; rank 6: MPI_Recv from rank 7; rank 7: MPI_Recv "
                       "from rank 8; ...)"));
  CHECK(has_line(text, "[0] ERROR:       deep (libdeep.so)"));
  CHECK(has_line(text, "[0] ERROR:       ... 8 more frames"));
  CHECK(has_line(text, "[0] ERROR:    [ranks 1-19 (19 ranks)] blocked for 6.0 s in MPI call:"));
  CHECK(has_line(text, "[0] ERROR:       [8] MPI_Recv(..., source=9, ...)"));
  CHECK(!has_line(text, "[0] ERROR:       [9] MPI_Recv(..., source=10, ...)"));
  CHECK(has_line(text, "[0] ERROR:       ... (11 more ranks)"));
  CHECK(has_line(text, "[0] ERROR:       waits for: [1] rank 2; [2] rank 3; [3] rank 4; [4] rank 5; [5] rank 6; "
                       "[6] rank 7; [7] rank 8; [8] rank 9; ... (11 more ranks)"));
  CHECK(has_line(text, "[0] ERROR:       (no stack: the rank did not answer)"));
}

TEST_CASE("format_text names every deadlock on a line of its own, at most 8, and who is blocked behind them",
          "[report]") {
  Report report;
  report.threshold_seconds = 5;
  for (int rank = 0; rank < 24; ++rank) report.ranks.push_back(recv_from(rank, rank < 20 ? rank ^ 1 : 0, 6));
  for (int pair = 0; pair < 10; ++pair) {
    report.core.core.insert(report.core.core.end(), {2 * pair, 2 * pair + 1});
    report.core.cycles.push_back({{2 * pair, 2 * pair + 1}, {2 * pair, 2 * pair + 1, 2 * pair}});
  }
  report.core.blocked_behind = {20, 21, 22, 23};
  const std::string text = format_text(report);
  CHECK(has_line(text, "[0] ERROR:    deadlock: rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv from rank 1; rank 1: "
                       "MPI_Recv from rank 0)"));
  CHECK(has_line(text, "[0] ERROR:    deadlock: rank 14 -> rank 15 -> rank 14 (rank 14: MPI_Recv from rank 15; rank 15: "
                       "MPI_Recv from rank 14)"));
  CHECK_FALSE(has_line(text, "[0] ERROR:    deadlock: rank 16 -> rank 17 -> rank 16 (rank 16: MPI_Recv from rank 17; "
                             "rank 17: MPI_Recv from rank 16)"));
  CHECK(has_line(text, "[0] ERROR:    deadlock: ... (2 more deadlocks, among ranks 16-19)"));
  CHECK(has_line(text, "[0] ERROR:    blocked behind the deadlocks: ranks 20-23"));
}

TEST_CASE("format_text describes AND and OR waits", "[report]") {
  Report report;
  report.threshold_seconds = 5;
  RankSnapshot waitall = recv_from(0, 1, 5);
  only(waitall).waits_for = {3, 1, 2};
  RankSnapshot any = recv_from(1, 0, 5, {{"other", "", 0, ""}});
  only(any).wait_mode = WaitMode::Any;
  only(any).waits_for = {0, 2, 3};
  report.ranks = {waitall, any};
  report.core = {{0, 1, 2}, {{{0, 1, 2}, {0, 1, 0}}}, {}};
  const std::string text = format_text(report);
  // A knot of three ranks named by its shortest cycle, and the rank off it.
  CHECK(has_line(text, "[0] ERROR:    deadlock: rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv from rank 1; rank 1: "
                       "MPI_Recv from rank 0); rank 2 waits in it too, on other cycles among ranks 0-2"));
  CHECK(has_line(text, "[0] ERROR:       waits for: ranks 1-3 (all of them)"));
  CHECK(has_line(text, "[0] ERROR:       waits for: any of ranks 0,2-3"));
  CHECK(has_line(text, "[0] ERROR:       other"));
}

TEST_CASE("format_signal_dump tells what the rank was doing", "[report]") {
  RankSnapshot rank = recv_from(3, 1, 2.1, {{"main", "/src/x.c", 10, "x"}});
  rank.host = "node1";
  rank.pid = 1234;
  only(rank).call = "MPI_Recv(...)";
  only(rank).waits_for = {};
  CHECK(format_signal_dump(rank, SIGTERM) ==
        "[3] ERROR: LOCAL:EXIT:SIGNAL: fatal error\n"
        "[3] ERROR:    rank 3 (host node1, pid 1234) received SIGTERM while blocked for 2.1 s in MPI call:\n"
        "[3] ERROR:       MPI_Recv(...)\n"
        "[3] ERROR:       main (/src/x.c:10)\n");
  CHECK(lines_of(format_signal_dump(running(4), SIGINT))[1] ==
        "[4] ERROR:    rank 4 (host node2, pid 2004) received SIGINT while running outside MPI, now at:");
  rank.state = RankState::Polling;
  only(rank).state = RankState::Polling;
  CHECK(lines_of(format_signal_dump(rank, SIGTERM))[1] ==
        "[3] ERROR:    rank 3 (host node1, pid 1234) received SIGTERM while polling with MPI call, without progress "
        "for 2.1 s:");
}

TEST_CASE("format_text of an unsafe cycle is a warning that names the possible wait", "[report]") {
  const std::string expected =
      "[0] WARNING: GLOBAL:DEADLOCK:UNSAFE: warning\n"
      "[0] WARNING:    no progress was observed for over 0:05 minutes (DEADLOCK-TIMEOUT 5s); the program goes on.\n"
      "[0] WARNING:    the ranks wait in a cycle that needs a wait only some MPI implementations make: rank 0 in "
      "MPI_Bcast waits for rank 1 (if MPI_Bcast synchronizes)\n"
      "[0] WARNING:    rule: the cycle holds only if MPI_Bcast synchronizes; no progress in 2 looks 0.3 s apart\n"
      "[0] WARNING:    deadlock: rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Bcast root, rank 1 not in it yet; "
      "rank 1 thread 1: MPI_Recv from rank 0)\n"
      "[0] WARNING:    [0] blocked for 5.0 s in MPI call:\n"
      "[0] WARNING:       where: host node1: rank 0 (pid 1000)\n"
      "[0] WARNING:       MPI_Bcast(root=0, comm=MPI_COMM_WORLD)\n"
      "[0] WARNING:       may also wait for: rank 1 (if MPI_Bcast synchronizes)\n"
      "[0] WARNING:       broadcast (/src/tests/programs/threads.c:20)\n"
      "[0] WARNING:       main (/src/tests/programs/threads.c:30)\n"
      "[0] WARNING:    [1] blocked for 5.0 s in MPI calls of 2 threads:\n"
      "[0] WARNING:       where: host node1: rank 1 (pid 1001)\n"
      "[0] WARNING:       thread 0: MPI_Barrier(comm=workers)\n"
      "[0] WARNING:          waits for: rank 2\n"
      "[0] WARNING:          sync_workers (/src/tests/programs/threads.c:12)\n"
      "[0] WARNING:       thread 1: MPI_Recv(..., source=0, ...)\n"
      "[0] WARNING:          waits for: rank 0\n"
      "[0] WARNING:          listen (/src/tests/programs/threads.c:8)\n"
      "[0] WARNING:    [2] running outside MPI, now at:\n"
      "[0] WARNING:       where: host node2: rank 2 (pid 2002)\n"
      "[0] WARNING:       compute (/src/x.c:40)\n"
      "[0] WARNING:       main (/src/x.c:9)\n"
      "[0] INFO: GLOBAL:DEADLOCK:UNSAFE: found 1 time (0 errors + 1 warning), 0 reports were suppressed\n";
  CHECK(format_text(unsafe_report()) == expected);
}

TEST_CASE("format_text without a possible arc in the core says the analysis named none", "[report]") {
  Report report = unsafe_report();
  report.arcs[0].possible = false;
  CHECK(has_line(format_text(report), "[0] WARNING:    the ranks wait in a cycle that needs a wait only some MPI "
                                      "implementations make: (the analysis named none)"));
}

TEST_CASE("format_text merges ranks of several threads and lists calls that differ", "[report]") {
  Report report;
  report.threshold_seconds = 5;
  for (int rank = 0; rank < 3; ++rank) {
    RankSnapshot snapshot = recv_from(rank, (rank + 1) % 3, 6);
    ThreadSnapshot worker = recv_thread(1, (rank + 2) % 3, 6, {{"worker", kThreads, 40, "threads"}});
    worker.possibly_waits_for = {rank == 2 ? 0 : 2};
    worker.collective.function = "MPI_Allreduce";
    snapshot.threads.push_back(worker);
    report.ranks.push_back(snapshot);
  }
  const std::string text = format_text(report);
  CHECK(has_line(text, "[0] ERROR:    [ranks 0-2 (3 ranks)] blocked for 6.0 s in MPI calls of 2 threads:"));
  CHECK(has_line(text, "[0] ERROR:       thread 0:"));
  CHECK(has_line(text, "[0] ERROR:          [0] MPI_Recv(..., source=1, ...)"));
  CHECK(has_line(text, "[0] ERROR:          [1] MPI_Recv(..., source=2, ...)"));
  CHECK(has_line(text, "[0] ERROR:          [2] MPI_Recv(..., source=0, ...)"));
  CHECK(has_line(text, "[0] ERROR:          waits for: [0] rank 1; [1] rank 2; [2] rank 0"));
  CHECK(has_line(text, "[0] ERROR:       thread 1:"));
  CHECK(has_line(text, "[0] ERROR:          may also wait for: [0] rank 2 (if MPI_Allreduce synchronizes); "
                       "[1] rank 2 (if MPI_Allreduce synchronizes); [2] rank 0 (if MPI_Allreduce synchronizes)"));
  CHECK(has_line(text, "[0] ERROR:          worker (/src/tests/programs/threads.c:40)"));
}

TEST_CASE("format_signal_dump writes every thread of the rank", "[report]") {
  CHECK(format_signal_dump(unsafe_report().ranks[1], SIGTERM) ==
        "[1] ERROR: LOCAL:EXIT:SIGNAL: fatal error\n"
        "[1] ERROR:    rank 1 (host node1, pid 1001) received SIGTERM while blocked for 5.0 s in MPI calls of 2 "
        "threads:\n"
        "[1] ERROR:       thread 0: MPI_Barrier(comm=workers)\n"
        "[1] ERROR:          waits for: rank 2\n"
        "[1] ERROR:          sync_workers (/src/tests/programs/threads.c:12)\n"
        "[1] ERROR:       thread 1: MPI_Recv(..., source=0, ...)\n"
        "[1] ERROR:          waits for: rank 0\n"
        "[1] ERROR:          listen (/src/tests/programs/threads.c:8)\n");
}

TEST_CASE("format_json writes the documented schema", "[report]") {
  Report report = recv_recv_report();
  report.ranks[1].host = "bad\"host\xff";
  const std::string json = format_json(report);
  CHECK(json_well_formed(json));
  CHECK(json.starts_with(R"({"schema":"mpisentry-report/5","check":"GLOBAL:DEADLOCK:HARD","severity":"error",)"
                         R"("aborts_job":true,)"
                         R"("rule":"every rank of the cycle waits in a call that cannot return before the next rank )"
                         R"(acts","threshold_seconds":5.0,"threshold_key":"DEADLOCK-TIMEOUT","proven_at_once":false,"partial":false,)"
                         R"("core":{"ranks":[0,1],"cycle":[0,1,0],"blocked_behind":[2,3],"cycles":[{"ranks":[0,1],"cycle":[0,1,0]}]},)"
                         R"("waiting":[],"culprits":[],"signal":null,)"
                         "\n"
                         R"("arcs":[{"from":{"rank":0,"thread":0},"to":1,"mode":"all","possible":false},)"));
  CHECK(json.find(R"({"rank":0,"host":"node1","pid":1000,"state":"blocked","seconds":5.2,"activity":0,)"
                  R"("exit_status":null,"threads":[{"id":0,"state":"blocked","seconds":5.2,"function":"MPI_Recv",)") != std::string::npos);
  CHECK(json.find(R"("wait_mode":"all","waits_for":[[1,1]],"possibly_waits_for":[],"wait_reason":"MPI_Recv from rank 1",)"
                  R"("collective":null,"started_collectives":[],"converted_send":false,"messages":[],)"
                  R"("stack":[{"function":"exchange","file":"/src/tests/programs/recv_recv.c","line":14,)"
                  R"("module":"recv_recv"},)") != std::string::npos);
  CHECK(json.find("\"host\":\"bad\\\"host\xef\xbf\xbd\"") != std::string::npos);
  CHECK(json.find(R"("classes":[{"ranks":"0","rank_list":[0],"representative":0,)"
                  R"("hosts":[{"host":"node1","ranks":"0"}]},)"
                  "{\"ranks\":\"1\",\"rank_list\":[1],\"representative\":1,\"hosts\":[{\"host\":\"bad\\\"host\xef\xbf\xbd\",\"ranks\":\"1\"}]},"
                  R"({"ranks":"2-3","rank_list":[2,3],"representative":2,"hosts":[{"host":"node1","ranks":"2-3"}]}]})") !=
        std::string::npos);

  report.arcs_left_out = 2'499'950'000;
  CHECK(format_json(report).find(R"("possible":false}],"arcs_left_out":2499950000,)") != std::string::npos);

  report.check = Check::NoProgress;
  report.ranks[0].seconds = std::numeric_limits<double>::infinity();
  const std::string warning = format_json(report);
  CHECK(json_well_formed(warning));
  CHECK(warning.find(R"("severity":"warning")") != std::string::npos);
  CHECK(warning.find(R"("seconds":null)") != std::string::npos);
}

TEST_CASE("format_json writes threads, possible waits, collectives and the arcs used", "[report]") {
  const std::string json = format_json(unsafe_report());
  CHECK(json_well_formed(json));
  CHECK(json.find(R"("check":"GLOBAL:DEADLOCK:UNSAFE","severity":"warning",)") != std::string::npos);
  CHECK(json.find(R"("rule":"the cycle holds only if MPI_Bcast synchronizes; no progress in 2 looks 0.3 s apart",)")
        != std::string::npos);
  CHECK(json.find(R"("partial":true,)") != std::string::npos);
  CHECK(json.find("\n"
                  R"("arcs":[{"from":{"rank":0,"thread":0},"to":1,"mode":"all","possible":true},)"
                  R"({"from":{"rank":1,"thread":0},"to":2,"mode":"all","possible":false},)"
                  R"({"from":{"rank":1,"thread":1},"to":0,"mode":"all","possible":false}],"arcs_left_out":0,)"
                  "\n") != std::string::npos);
  CHECK(json.find(R"("wait_mode":"none","waits_for":[],"possibly_waits_for":[[1,1]],)"
                  R"("wait_reason":"MPI_Bcast root, rank 1 not in it yet",)"
                  R"("collective":{"comm_id":"7","sequence":1,"function":"MPI_Bcast","root":0,"op":""},)")
        != std::string::npos);
  CHECK(json.find(R"("collectives":[{"comm_id":"7","entered":1}]})") != std::string::npos);
  CHECK(json.find(R"({"rank":1,"host":"node1","pid":1001,"state":"blocked","seconds":5.0,)"
                  R"("activity":18446744073709551615,"exit_status":null,"threads":[{"id":0,"state":"blocked",)") != std::string::npos);
  CHECK(json.find(R"("collective":{"comm_id":"18446744073709551615","sequence":4,"function":"MPI_Barrier",)"
                  R"("root":-1,"op":""},)") != std::string::npos);
  CHECK(json.find(R"({"id":1,"state":"blocked","seconds":5.0,"function":"MPI_Recv",)") != std::string::npos);
  CHECK(json.find(R"("messages":[{"send":false,"peer":0,"tag":3,"comm_id":"1"}],)"
                  R"("stack":[{"function":"listen","file":"/src/tests/programs/threads.c","line":8,)"
                  R"("module":"threads"}]}],"collectives":[]},)") != std::string::npos);
  CHECK(json.find(R"("classes":[{"ranks":"0","rank_list":[0],"representative":0,)"
                  R"("hosts":[{"host":"node1","ranks":"0"}]},)"
                  R"({"ranks":"1","rank_list":[1],"representative":1,"hosts":[{"host":"node1","ranks":"1"}]},)"
                  R"({"ranks":"2","rank_list":[2],"representative":2,"hosts":[{"host":"node2","ranks":"2"}]}]})") !=
        std::string::npos);
}

TEST_CASE("the validity check itself rejects broken JSON", "[report]") {
  CHECK_FALSE(json_well_formed(R"({"a":[1,2})"));
  CHECK_FALSE(json_well_formed(R"({"a":"b})"));
  CHECK_FALSE(json_well_formed("{\"a\":\"b\nc\"}"));
  CHECK(json_well_formed(R"({"a":"[\"}"})"));
}

TEST_CASE("format_dot draws the arcs the analysis used", "[report]") {
  Report report = recv_recv_report();
  RankSnapshot any = recv_from(4, 0, 5);
  only(any).wait_mode = WaitMode::Any;
  only(any).waits_for = {0, 1};
  only(any).wait_reason = "MPI_Recv from any source";
  report.ranks.push_back(any);
  report.ranks.push_back(running(5));
  report.arcs.pop_back();  // rank 3 still waits for rank 1, but the analysis dropped the arc
  report.arcs.push_back({{4, 0}, 0, WaitMode::Any});
  report.arcs.push_back({{4, 0}, 1, WaitMode::Any});
  const std::string dot = format_dot(report);
  CHECK(dot.starts_with("digraph mpisentry {\n  label=\"GLOBAL:DEADLOCK:HARD\";\n"));
  CHECK(dot.ends_with("}\n"));
  CHECK(dot.find(R"(  r0 [label="rank 0\nnode1 pid 1000\nMPI_Recv\nblocked", color="red", style="bold"];)") != std::string::npos);
  CHECK(dot.find(R"(  r2 [label="rank 2\nnode1 pid 1002\nMPI_Recv\nblocked", color="orange"];)") != std::string::npos);
  CHECK(dot.find(R"(  r4 [label="rank 4\nnode1 pid 1004\nMPI_Recv\nblocked"];)") != std::string::npos);
  CHECK(dot.find("  subgraph cluster_deadlock1 {\n    label=\"deadlock 1\";\n    color=\"red\";\n    r0; r1;\n  }\n") !=
        std::string::npos);
  CHECK(dot.find(R"(  r5 [label="rank 5\nnode2 pid 2005\nrunning", color="grey", fontcolor="grey"];)") != std::string::npos);
  CHECK(dot.find(R"(  r0 -> r1 [label="MPI_Recv from rank 1", style="solid,bold", color="red"];)") !=
        std::string::npos);
  CHECK(dot.find(R"(  r2 -> r0 [label="MPI_Recv from rank 0", style="solid"];)") != std::string::npos);
  CHECK(dot.find(R"(  r4 -> r1 [label="MPI_Recv from any source", style="dashed"];)") != std::string::npos);
  CHECK(dot.find("r3 ->") == std::string::npos);
  CHECK(dot.find("left out") == std::string::npos);
  report.arcs_left_out = 12;
  CHECK(format_dot(report).ends_with("  // 12 more arcs of the analysis are left out: too many to draw\n}\n"));
  CHECK(dot_quote("a\"b\\c\x01\xff") == R"("a\"b\\c??")");
}

TEST_CASE("format_dot draws possible waits dotted and lists a rank's threads", "[report]") {
  const std::string dot = format_dot(unsafe_report());
  CHECK(dot.starts_with("digraph mpisentry {\n  label=\"GLOBAL:DEADLOCK:UNSAFE\";\n"));
  CHECK(dot.find(R"(  r1 [label="rank 1\nnode1 pid 1001\nthread 0: MPI_Barrier\nthread 1: MPI_Recv\nblocked", color="red", )"
                 R"(style="bold"];)") != std::string::npos);
  CHECK(dot.find(R"(  r0 -> r1 [label="MPI_Bcast root, rank 1 not in it yet", style="dotted,bold", color="red"];)")
        != std::string::npos);
  CHECK(dot.find(R"(  r1 -> r0 [label="thread 1: MPI_Recv from rank 0", style="solid,bold", color="red"];)") !=
        std::string::npos);
  CHECK(dot.find(R"(  r1 -> r2 [label="thread 0: MPI_Barrier, rank 2 missing", style="solid"];)") !=
        std::string::npos);
}

TEST_CASE("write_file writes, appends and names the path on failure", "[report]") {
  char directory[] = "/tmp/mpisentry-report-XXXXXX";
  REQUIRE(mkdtemp(directory) != nullptr);
  const std::string path = std::string(directory) + "/report.txt";

  CHECK(write_file(path, "first\n", false).empty());
  CHECK(write_file(path, "second\n", true).empty());
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  CHECK(content.str() == "first\nsecond\n");
  CHECK(write_file(path, "third\n", false).empty());
  std::ifstream again(path);
  content.str("");
  content << again.rdbuf();
  CHECK(content.str() == "third\n");
  // A whole file is written beside it and renamed over it: nothing else is left.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    names.push_back(entry.path().filename().string());
  CHECK(names == std::vector<std::string>{"report.txt"});
  // Not a regular file: written in place.
  CHECK(write_file("/dev/null", "x", false).empty());

  const std::string missing = std::string(directory) + "/no/such/dir/report.txt";
  CHECK(write_file(missing, "x", false) ==
        "cannot write report file \"" + missing + "\": No such file or directory");
  CHECK(write_file(directory, "x", false) ==
        "cannot write report file \"" + std::string(directory) + "\": Is a directory");

  unlink(path.c_str());
  rmdir(directory);
}

TEST_CASE("format_text of OUTSIDE_MPI names who waits, where, and the culprit's place", "[report]") {
  Report report;
  report.check = Check::OutsideMpi;
  report.threshold_seconds = 300;
  report.threshold_key = "DEADLOCK-WARNING";
  report.rule = "the rule";
  report.ranks = {running(0), recv_from(1, 0, 301), recv_from(2, 1, 302)};
  report.waiting = {1, 2};
  report.culprits = {0};
  const std::string text = format_text(report);
  const auto lines = lines_of(text);
  REQUIRE(lines.size() > 4);
  CHECK(lines[0] == "[0] WARNING: GLOBAL:DEADLOCK:OUTSIDE_MPI: warning");
  CHECK(lines[1] == "[0] WARNING:    ranks 1-2 have waited 5:01 in MPI_Recv for rank 0, which runs outside MPI at "
                    "compute (/src/x.c:40); the program goes on.");
  CHECK(lines[2] == "[0] WARNING:    rule: the rule");
  CHECK(lines[3] == "[0] WARNING:    [0] running outside MPI, now at:");  // the culprit's class first
  CHECK(lines.back() ==
        "[0] INFO: GLOBAL:DEADLOCK:OUTSIDE_MPI: found 1 time (0 errors + 1 warning), 0 reports were suppressed");
  report.culprits = {0, 3};
  report.waiting = {1};
  report.ranks.push_back(running(3));
  report.ranks.back().threads.front().stack = {{"nap", "/src/y.c", 7, "y"}, {"main", "/src/y.c", 9, "y"}};
  CHECK(lines_of(format_text(report))[1] ==
        "[0] WARNING:    rank 1 has waited 5:01 in MPI_Recv for ranks 0,3, which run outside MPI at compute "
        "(/src/x.c:40) and nap (/src/y.c:7); the program goes on.");
}

TEST_CASE("format_text of OUTSIDE_MPI names MPI_Finalize when ranks wait there", "[report]") {
  Report report;
  report.check = Check::OutsideMpi;
  report.threshold_seconds = 300;
  report.threshold_key = "DEADLOCK-WARNING";
  RankSnapshot finalizing = recv_from(1, 0, 4);
  finalizing.state = RankState::Finalizing;
  only(finalizing).state = RankState::Finalizing;
  only(finalizing).function = "MPI_Finalize";
  report.ranks = {running(0), finalizing};
  report.waiting = {1};
  report.culprits = {0};
  CHECK(lines_of(format_text(report))[1] ==
        "[0] WARNING:    rank 1 has waited 0:04 in MPI_Finalize for rank 0, which runs outside MPI at compute "
        "(/src/x.c:40); the program goes on.");
}

TEST_CASE("format_text of a dump is information, with the culprits when there are any", "[report]") {
  Report report;
  report.check = Check::Dump;
  report.signal_number = SIGUSR1;
  report.ranks = {running(0), recv_from(1, 0, 2)};
  const auto plain = lines_of(format_text(report));
  CHECK(plain[0] == "[0] INFO: DUMP: on request");
  CHECK(plain[1] == "[0] INFO:    SIGUSR1 asked every rank for its state (DUMP-SIGNAL); the program goes on.");
  CHECK(plain[2] == "[0] INFO:    [0] running outside MPI, now at:");
  CHECK(plain.back().find("found 1 time") == std::string::npos);
  report.waiting = {1};
  report.culprits = {0};
  CHECK(lines_of(format_text(report))[2] ==
        "[0] INFO:    rank 1 has waited 0:02 in MPI_Recv for rank 0, which runs outside MPI at compute (/src/x.c:40).");
  CHECK(format_json(report).find(R"("severity":"info","aborts_job":false,)") != std::string::npos);
  CHECK(format_json(report).find(R"("waiting":[1],"culprits":[0],"signal":"SIGUSR1",)") != std::string::npos);
}

TEST_CASE("format_text of an exit before MPI_Finalize says where, or that main returned", "[report]") {
  Report report;
  report.check = Check::ExitBeforeFinalize;
  report.ranks = {recv_from(0, 1, 0.5), running(1)};
  report.ranks[1].exit_status = 3;
  const auto lines = lines_of(format_text(report));
  CHECK(lines[0] == "[0] ERROR: LOCAL:EXIT:BEFORE_MPI_FINALIZE: fatal error");
  CHECK(lines[1] == "[0] ERROR:    rank 1 exited with status 3 without calling MPI_Finalize, at compute "
                    "(/src/x.c:40); MPI ends the job.");
  CHECK(lines[2] == "[0] ERROR:    [1] exited with status 3 without MPI_Finalize, at:");  // the exiting rank first
  CHECK(lines[3] == "[0] ERROR:       where: host node2: rank 1 (pid 2001)");
  CHECK(lines[4] == "[0] ERROR:       compute (/src/x.c:40)");
  CHECK(format_json(report).find(R"("exit_status":3,)") != std::string::npos);
  // Once main returned, what is left below exit() is not the program's.
  report.ranks[1].threads.front().stack = {{"_start", "", 0, "x"}};
  const auto returned = lines_of(format_text(report));
  CHECK(returned[1] == "[0] ERROR:    rank 1 exited with status 3 without calling MPI_Finalize, after main returned; "
                       "MPI ends the job.");
  CHECK(returned[2] == "[0] ERROR:    [1] exited with status 3 without MPI_Finalize, after main returned");
  CHECK(returned[3] == "[0] ERROR:       where: host node2: rank 1 (pid 2001)");
  CHECK(returned[4].starts_with("[0] ERROR:    [0] blocked"));
}

TEST_CASE("format_signal_dump of a crash gives the fault address", "[report]") {
  CHECK(lines_of(format_signal_dump(running(4), SIGSEGV, "0x0"))[1] ==
        "[4] ERROR:    rank 4 (host node2, pid 2004) received SIGSEGV (fault at address 0x0) while running outside MPI, "
        "now at:");
}

// ---- Consistency findings and the summary ----

TEST_CASE("a finding prints in ITC's shape, its parties by rank class, with the reporting rank's prefix", "[report]") {
  Finding finding;
  finding.check = Check::CollectiveOperation;
  finding.rank = 2;
  finding.summary = {"the 3rd collective on MPI_COMM_WORLD differs:"};
  finding.parties.push_back({{0, 2, 3}, "call", "MPI_Bcast(comm=MPI_COMM_WORLD)", {Frame{"main", "a.c", 7, "a"}}});
  finding.parties.push_back({{1}, "calls", "MPI_Allgather(comm=MPI_COMM_WORLD)", {}});
  CHECK(format_finding(finding) ==
        "[2] ERROR: GLOBAL:COLLECTIVE:OPERATION_MISMATCH: error\n"
        "[2] ERROR:    the 3rd collective on MPI_COMM_WORLD differs:\n"
        "[2] ERROR:    ranks 0,2-3 call:\n"
        "[2] ERROR:       MPI_Bcast(comm=MPI_COMM_WORLD)\n"
        "[2] ERROR:       main (a.c:7)\n"
        "[2] ERROR:    rank 1 calls:\n"
        "[2] ERROR:       MPI_Allgather(comm=MPI_COMM_WORLD)\n");
  finding.check = Check::RequestNotFreed;
  CHECK(format_finding(finding).starts_with("[2] WARNING: LOCAL:REQUEST:NOT_FREED: warning\n"));
  finding.check = Check::MessageRace;
  CHECK(format_finding(finding).starts_with("[2] INFO: GLOBAL:MSG:RACE: information\n"));
}

TEST_CASE("the summary counts errors and warnings per check and in all, with what was suppressed", "[report]") {
  CheckCounts counts[kCheckCount] = {};
  CHECK(format_summary(0, counts).empty());
  counts[static_cast<int>(Check::CollectiveReduction)] = {10000, 9990};
  counts[static_cast<int>(Check::RequestNotFreed)] = {1, 0};
  counts[static_cast<int>(Check::MessageRace)] = {1, 0};  // information, not a problem
  CHECK(format_summary(0, counts) ==
        "[0] INFO: GLOBAL:COLLECTIVE:REDUCTION_OPERATION_MISMATCH: found 10000 times (10000 errors + 0 warnings), "
        "9990 reports were suppressed\n"
        "[0] INFO: LOCAL:REQUEST:NOT_FREED: found 1 time (0 errors + 1 warning), 0 reports were suppressed\n"
        "[0] INFO: Found 10001 problems (10000 errors + 1 warning), 9990 reports were suppressed.\n");
}

TEST_CASE("a gathered part carries a rank's snapshot, and its stacks when asked", "[report]") {
  RankSnapshot rank = recv_from(2, 0, 3.5);
  rank.threads.push_back(recv_thread(1, 1, 2.0));
  const std::vector<std::string> frames = {"frames of thread 0", std::string("with\0a NUL;:", 12)};

  const std::string without = encode_gathered(rank, /*with_stacks=*/false, {});
  CHECK(without == std::to_string(serialize(rank).size()) + ':' + serialize(rank));
  const GatheredRank plain = decode_gathered(without, /*with_stacks=*/false);
  CHECK(plain.snapshot == rank);
  CHECK(plain.frames.empty());

  const std::string with = encode_gathered(rank, /*with_stacks=*/true, frames);
  CHECK(with == without + "2;18:frames of thread 0" + "12:" + frames[1]);
  const GatheredRank stacked = decode_gathered(with, /*with_stacks=*/true);
  CHECK(stacked.snapshot == rank);
  CHECK(stacked.frames == frames);

  const GatheredRank none = decode_gathered(encode_gathered(rank, true, {}), true);
  CHECK(none.frames.empty());
}

TEST_CASE("decode_gathered rejects damaged parts with a message", "[report]") {
  const RankSnapshot rank = recv_from(0, 1, 1.0);
  const std::string part = encode_gathered(rank, /*with_stacks=*/true, {"abc", "de"});
  CHECK_THROWS_WITH(decode_gathered("", true), Catch::Contains("no \"<length>:\""));
  CHECK_THROWS_WITH(decode_gathered("x:", false), Catch::Contains("no \"<length>:\""));
  CHECK_THROWS_WITH(decode_gathered("99999:abc", false), Catch::Contains("state is truncated"));
  CHECK_THROWS_WITH(decode_gathered(part.substr(0, part.size() - 1), true), Catch::Contains("stack is truncated"));
  CHECK_THROWS_WITH(decode_gathered(part + "x", true), Catch::Contains("1 unexpected bytes"));
  // Stacks present but not expected, or expected but absent.
  CHECK_THROWS_WITH(decode_gathered(part, false), Catch::Contains("unexpected bytes"));
  CHECK_THROWS_WITH(decode_gathered(encode_gathered(rank, false, {}), true), Catch::Contains("no \"<threads>;\""));
  CHECK_THROWS_AS(decode_gathered("5:abcde", false), std::invalid_argument);  // not a snapshot
}
