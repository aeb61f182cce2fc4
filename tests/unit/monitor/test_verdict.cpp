// Which rule fires on the ranks' snapshots (judge), and whether a second
// look confirms it (confirms).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api/functions.hpp"
#include "monitor/verdict.hpp"

using namespace mpisentry;
using namespace mpisentry::monitor;
using Catch::Matchers::Contains;

namespace {

constexpr double timeout = 3;
constexpr double warning = 10;
const JudgeSettings settings{timeout, timeout, warning};
constexpr double stuck = 5;  // past DEADLOCK-TIMEOUT, not yet DEADLOCK-WARNING
constexpr std::uint64_t world_id = 1;

// A rank whose only thread is blocked for `seconds` in `function`.
RankSnapshot blocked(const char* function, WaitMode mode, std::vector<int> waits_for, double seconds = stuck) {
  ThreadSnapshot thread;
  thread.state = RankState::Blocked;
  thread.seconds = seconds;
  thread.function = function;
  thread.wait_mode = mode;
  thread.waits_for = RankSet(waits_for);
  RankSnapshot rank;
  rank.state = RankState::Blocked;
  rank.seconds = seconds;
  rank.threads = {thread};
  return rank;
}
RankSnapshot receiving(int from, double seconds = stuck) {
  return blocked("MPI_Recv", WaitMode::All, {from}, seconds);
}

RankSnapshot running() {
  RankSnapshot rank;
  rank.threads = {ThreadSnapshot{}};
  return rank;
}

// In the `sequence`-th collective on MPI_COMM_WORLD, with the waits derive_waits gives it.
RankSnapshot in_collective(const char* function, std::vector<int> definite, std::vector<int> possible,
                           std::uint64_t sequence = 1, int root = -1, double seconds = stuck) {
  const WaitMode mode = definite.empty() ? WaitMode::None : WaitMode::All;  // before definite is moved from
  RankSnapshot rank = blocked(function, mode, std::move(definite), seconds);
  rank.threads.front().possibly_waits_for = RankSet(possible);
  rank.threads.front().collective = {world_id, sequence, function, root, ""};
  rank.collectives = {{world_id, sequence}};
  return rank;
}
// A Bcast from `root` on ranks 0..2, as `me` calls it.
RankSnapshot in_bcast(int me, int root, std::uint64_t sequence = 1) {
  std::vector<int> others;
  for (int rank = 0; rank < 3; ++rank)
    if (rank != me && rank != root) others.push_back(rank);
  if (me == root) return in_collective("MPI_Bcast", {}, others, sequence, root);
  return in_collective("MPI_Bcast", {root}, others, sequence, root);
}

std::vector<RankSnapshot> job(std::vector<RankSnapshot> ranks) {
  for (std::size_t index = 0; index < ranks.size(); ++index) {
    ranks[index].rank = static_cast<int>(index);
    ranks[index].activity = 100 + index;
  }
  return ranks;
}

}  // namespace

TEST_CASE("a cycle of definite waits is HARD", "[verdict]") {
  SECTION("every rank in it") {
    const Verdict verdict = judge(job({receiving(1), receiving(0)}), settings);
    CHECK(verdict.kind == Verdict::Kind::Hard);
    CHECK(verdict.core == DeadlockCore{{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}});
    CHECK(verdict.involved == std::vector<int>{0, 1});
    CHECK_FALSE(verdict.partial);
    CHECK_FALSE(verdict.with_possible_waits);
    CHECK_THAT(verdict.rule, Contains("every MPI implementation"));
  }
  SECTION("while other ranks run, with a rank blocked behind it") {
    const Verdict verdict = judge(job({receiving(1), receiving(0), running(), receiving(0)}), settings);
    CHECK(verdict.kind == Verdict::Kind::Hard);
    CHECK(verdict.core == DeadlockCore{{0, 1}, {{{0, 1}, {0, 1, 0}}}, {3}});
    CHECK(verdict.involved == std::vector<int>{0, 1, 3});
    CHECK(verdict.partial);
  }
}

TEST_CASE("ranks blocked for less than DEADLOCK-TIMEOUT are not judged stuck", "[verdict]") {
  SECTION("a rank that waits for the cycle is not behind it yet") {
    const Verdict verdict = judge(job({receiving(1), receiving(0), receiving(0, timeout / 2)}), settings);
    CHECK(verdict.kind == Verdict::Kind::Hard);
    CHECK(verdict.core == DeadlockCore{{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}});
    CHECK(verdict.involved == std::vector<int>{0, 1});
    CHECK(verdict.partial);
  }
  SECTION("a rank of the cycle: no verdict") {
    const Verdict verdict = judge(job({receiving(1), receiving(0, timeout / 2)}), settings);
    CHECK(verdict.kind == Verdict::Kind::None);
    CHECK(verdict.core.empty());
  }
}

TEST_CASE("DEADLOCK-TIMEOUT auto: a proof waits for no timeout, a possible wait does", "[verdict]") {
  const JudgeSettings automatic{0.4, 60, warning};
  SECTION("a cycle of definite waits after half a second is HARD") {
    CHECK(judge(job({receiving(1, 0.5), receiving(0, 0.5)}), automatic).kind == Verdict::Kind::Hard);
  }
  SECTION("not before the ranks have been blocked for proven_seconds") {
    CHECK(judge(job({receiving(1, 0.5), receiving(0, 0.3)}), automatic).kind == Verdict::Kind::None);
  }
  SECTION("a cycle through a possible wait waits for the timeout") {
    CHECK(judge(job({in_bcast(0, 2), receiving(0, 5), running()}), automatic).kind == Verdict::Kind::None);
    RankSnapshot leaf = in_bcast(0, 2);
    leaf.seconds = leaf.threads.front().seconds = 61;
    CHECK(judge(job({leaf, receiving(0, 61), running()}), automatic).kind == Verdict::Kind::Unsafe);
  }
}

TEST_CASE("a cycle through a Bcast leaf's wait for another leaf, with the root running, is Unsafe", "[verdict]") {
  // Rank 0 is a leaf of a Bcast from rank 2, which still runs; rank 1 receives
  // from rank 0 before it joins the Bcast.
  RankSnapshot leaf = in_bcast(0, 2);
  const Verdict verdict = judge(job({leaf, receiving(0), running()}), settings);
  CHECK(verdict.kind == Verdict::Kind::Unsafe);
  CHECK(verdict.with_possible_waits);
  CHECK(verdict.partial);
  CHECK(verdict.core == DeadlockCore{{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}});
  CHECK(verdict.involved == std::vector<int>{0, 1});
  CHECK_THAT(verdict.rule, Contains("rank 0's MPI_Bcast waits for rank 1 only where MPI_Bcast synchronizes"));
}

TEST_CASE("every rank in the same collective with matching arguments is Slow, after DEADLOCK-WARNING only",
          "[verdict]") {
  const auto all_in_barrier = [](double seconds) {
    return job({in_collective("MPI_Barrier", {1, 2}, {}, 4, -1, seconds),
                in_collective("MPI_Barrier", {0, 2}, {}, 4, -1, seconds),
                in_collective("MPI_Barrier", {0, 1}, {}, 4, -1, seconds)});
  };
  SECTION("before DEADLOCK-WARNING: no verdict") {
    const Verdict verdict = judge(all_in_barrier(warning - 1), settings);
    CHECK(verdict.kind == Verdict::Kind::None);
    CHECK_FALSE(verdict.partial);
  }
  SECTION("after it: a warning that the run is slow, never HARD") {
    const Verdict verdict = judge(all_in_barrier(warning + 1), settings);
    CHECK(verdict.kind == Verdict::Kind::Slow);
    CHECK(verdict.core.empty());
    CHECK(verdict.involved == std::vector<int>{0, 1, 2});
    CHECK_THAT(verdict.rule, Contains("collectives that every member has joined with matching arguments"));
  }
  SECTION("the same for a Bcast every rank has joined") {
    CHECK(judge(job({in_bcast(0, 0), in_bcast(1, 0), in_bcast(2, 0)}), settings).kind == Verdict::Kind::None);
    auto slow = job({in_bcast(0, 0), in_bcast(1, 0), in_bcast(2, 0)});
    for (RankSnapshot& rank : slow) rank.seconds = rank.threads.front().seconds = warning;
    CHECK(judge(slow, settings).kind == Verdict::Kind::Slow);
  }
}

TEST_CASE("every rank in collective #k of a communicator, with different roots, is HARD naming both",
          "[verdict]") {
  // Ranks 0 and 2 call MPI_Bcast from root 0, rank 1 from root 1, as their second collective.
  const Verdict verdict = judge(job({in_bcast(0, 0, 2), in_bcast(1, 1, 2), in_bcast(2, 0, 2)}), settings);
  CHECK(verdict.kind == Verdict::Kind::Hard);
  CHECK_FALSE(verdict.with_possible_waits);
  CHECK(verdict.involved == std::vector<int>{0, 1, 2});
  CHECK_THAT(verdict.rule, Contains("MPI_Bcast with root 0") && Contains("MPI_Bcast with root 1") &&
                               Contains("collective #2"));
  SECTION("or different functions") {
    RankSnapshot reduce = in_bcast(1, 1, 2);
    reduce.threads.front().collective.function = "MPI_Reduce";
    reduce.threads.front().collective.root = 0;
    const Verdict other = judge(job({in_bcast(0, 0, 2), reduce, in_bcast(2, 0, 2)}), settings);
    CHECK(other.kind == Verdict::Kind::Hard);
    CHECK_THAT(other.rule, Contains("MPI_Reduce"));
  }
  SECTION("not while a rank runs: it may still be fine") {
    CHECK(judge(job({in_bcast(0, 0, 2), in_bcast(1, 1, 2), running()}), settings).kind != Verdict::Kind::Hard);
  }
}

// In MPI_Wait on a nonblocking collective, the `sequence`-th on MPI_COMM_WORLD,
// started on this rank, waiting for the other members `definite`.
RankSnapshot waiting_on(const char* function, std::vector<int> definite, std::uint64_t sequence) {
  RankSnapshot rank = blocked("MPI_Wait", WaitMode::All, {});
  rank.threads.front().started_collectives = {{{world_id, sequence, function, -1, ""}, RankSet(definite), {}}};
  rank.collectives = {{world_id, sequence}};
  return rank;
}

TEST_CASE("a nonblocking collective one member has not started: its waiters wait for that member", "[verdict]") {
  // Ranks 0 and 1 wait on their MPI_Ibarrier (collective #2); rank 2 has
  // entered only one collective and receives from rank 0.
  RankSnapshot late = receiving(0);
  late.collectives = {{world_id, 1}};
  const Verdict verdict =
      judge(job({waiting_on("MPI_Ibarrier", {1, 2}, 2), waiting_on("MPI_Ibarrier", {0, 2}, 2), late}), settings);
  CHECK(verdict.kind == Verdict::Kind::Hard);
  CHECK_FALSE(verdict.with_possible_waits);
  CHECK(verdict.core == DeadlockCore{{0, 2}, {{{0, 2}, {0, 2, 0}}}, {1}});
  SECTION("not when that member computes: it may still start it") {
    RankSnapshot computing = running();
    computing.collectives = {{world_id, 1}};
    CHECK(judge(job({waiting_on("MPI_Ibarrier", {1, 2}, 2), waiting_on("MPI_Ibarrier", {0, 2}, 2), computing}),
                settings)
              .kind == Verdict::Kind::None);
  }
  SECTION("not when every member has started it: it is under way") {
    late.collectives = {{world_id, 2}};
    CHECK(judge(job({waiting_on("MPI_Ibarrier", {1, 2}, 2), waiting_on("MPI_Ibarrier", {0, 2}, 2), late}), settings)
              .kind != Verdict::Kind::Hard);
  }
}

TEST_CASE("every rank blocked, collective #k blocking on one member and nonblocking on another, is HARD",
          "[verdict]") {
  const Verdict verdict =
      judge(job({in_collective("MPI_Allgather", {1}, {}, 3), waiting_on("MPI_Iallgather", {0}, 3)}), settings);
  CHECK(verdict.kind == Verdict::Kind::Hard);
  CHECK_THAT(verdict.rule, Contains("rank 0 is in MPI_Allgather and rank 1 in MPI_Wait on MPI_Iallgather") &&
                               Contains("collective #3"));
  SECTION("or a member called collective #k as another function and left it") {
    // Rank 0's MPI_Bcast root returned at once and it waits in the next
    // collective; rank 1 waits on its MPI_Ibcast, collective #3.
    const auto id = [](FunctionId function) { return static_cast<std::uint16_t>(function); };
    RankSnapshot root = in_collective("MPI_Barrier", {}, {}, 4);
    root.collectives = {
        {world_id, 4, CollectiveCount::add_recent(id(FunctionId::Bcast_c), id(FunctionId::Barrier))}};
    RankSnapshot leaf = waiting_on("MPI_Ibcast", {}, 3);
    const Verdict left = judge(job({root, leaf}), settings);
    CHECK(left.kind == Verdict::Kind::Hard);
    CHECK_THAT(left.rule, Contains("rank 1 is in MPI_Wait on MPI_Ibcast and rank 0 called MPI_Bcast_c as collective #3 "
                                   "of the same communicator"));
    root.collectives.front().recent = CollectiveCount::add_recent(id(FunctionId::Ibcast), id(FunctionId::Barrier));
    CHECK(judge(job({root, leaf}), settings).kind != Verdict::Kind::Hard);
    SECTION("collectives further back than the few kept are not compared") {
      root.collectives.front().recent = CollectiveCount::add_recent(id(FunctionId::Bcast), id(FunctionId::Barrier));
      root.collectives.front().entered = 3 + CollectiveCount::kRecentKept;
      CHECK(CollectiveCount{world_id, 3 + CollectiveCount::kRecentKept, 1}.function_of(3) == 0);
      CHECK(judge(job({root, leaf}), settings).kind != Verdict::Kind::Hard);
    }
  }
  SECTION("a large-count twin matches its base") {
    const Verdict twins =
        judge(job({in_collective("MPI_Allgather", {1}, {}, 3), in_collective("MPI_Allgather_c", {0}, {}, 3)}), settings);
    CHECK(twins.kind == Verdict::Kind::None);
  }
  SECTION("the same nonblocking collective on both: no mismatch") {
    CHECK(judge(job({waiting_on("MPI_Iallgather", {1}, 3), waiting_on("MPI_Iallgather", {0}, 3)}), settings).kind ==
          Verdict::Kind::None);
  }
}

TEST_CASE("every rank blocked, a collective on some and a receive on another, is HARD through possible waits",
          "[verdict]") {
  // Ranks 0 (root) and 1 are in a Bcast; rank 2 receives from rank 0 instead
  // of joining it. No definite wait closes a cycle: the leaf's root has arrived.
  const Verdict verdict = judge(job({in_bcast(0, 0), in_bcast(1, 0), receiving(0)}), settings);
  CHECK(verdict.kind == Verdict::Kind::Hard);
  CHECK(verdict.with_possible_waits);
  CHECK_FALSE(verdict.partial);
  CHECK(verdict.core == DeadlockCore{{0, 2}, {{{0, 2}, {0, 2, 0}}}, {1}});
  CHECK(verdict.involved == std::vector<int>{0, 1, 2});
  CHECK_THAT(verdict.rule, Contains("no call can complete") &&
                               Contains("rank 0's MPI_Bcast waits for rank 2 only where MPI_Bcast synchronizes"));
}

TEST_CASE("a second look confirms only the same verdict with no activity on the ranks it involves", "[verdict]") {
  const auto first_look = job({receiving(1), receiving(0), running()});
  const Verdict first = judge(first_look, settings);
  REQUIRE(first.kind == Verdict::Kind::Hard);
  SECTION("nothing changed") { CHECK(confirms(first, first_look, judge(first_look, settings), first_look)); }
  SECTION("a rank outside the verdict moved on") {
    auto second_look = first_look;
    second_look[2].activity += 1;
    CHECK(confirms(first, first_look, judge(second_look, settings), second_look));
  }
  SECTION("an involved rank entered, started or completed something") {
    auto second_look = first_look;
    second_look[1].activity += 1;
    CHECK_FALSE(confirms(first, first_look, judge(second_look, settings), second_look));
  }
  SECTION("another core of the same ranks") {
    // 0 <-> 1 with 2 behind, then 1 <-> 2 with 0 behind: the same ranks involved.
    const auto behind_first = job({receiving(1), receiving(0), receiving(0)});
    const auto behind_second = job({receiving(1), receiving(2), receiving(1)});
    const Verdict one = judge(behind_first, settings);
    const Verdict other = judge(behind_second, settings);
    REQUIRE(one.kind == Verdict::Kind::Hard);
    REQUIRE(other.kind == Verdict::Kind::Hard);
    REQUIRE(one.involved == other.involved);
    REQUIRE(one.core != other.core);
    CHECK_FALSE(confirms(one, behind_first, other, behind_second));
    CHECK(confirms(other, behind_second, other, behind_second));
  }
  SECTION("another kind") {
    const auto second_look = job({in_bcast(0, 2), receiving(0), running()});
    const Verdict second = judge(second_look, settings);
    REQUIRE(second.kind == Verdict::Kind::Unsafe);
    CHECK_FALSE(confirms(first, first_look, second, second_look));
  }
  SECTION("no verdict confirms nothing") {
    const auto calm = job({running(), running(), running()});
    CHECK_FALSE(confirms(judge(calm, settings), calm, judge(calm, settings), calm));
  }
}

namespace {

constexpr std::uint64_t window_id = 81;

// Blocked in a window call that waits possibly for `possible`, with the
// epoch's notices (see derive_waits) as messages on the window.
RankSnapshot in_window_call(const char* function, std::vector<int> definite, std::vector<int> possible,
                            std::vector<PendingMessage> notices) {
  const WaitMode mode = definite.empty() ? WaitMode::None : WaitMode::All;  // before definite is moved from
  RankSnapshot rank = blocked(function, mode, std::move(definite));
  rank.threads.front().possibly_waits_for = RankSet(possible);
  rank.threads.front().messages = std::move(notices);
  return rank;
}

}  // namespace

TEST_CASE("RMA: a target in MPI_Win_wait and its origin in MPI_Win_complete are a handshake under way",
          "[verdict][rma]") {
  const PendingMessage notice_received{false, 1, 0, window_id};
  const PendingMessage notice_sent{true, 0, 0, window_id};
  SECTION("both inside the handshake: no verdict") {
    const Verdict verdict =
        judge(job({in_window_call("MPI_Win_wait", {1}, {}, {notice_received}),
                   in_window_call("MPI_Win_complete", {}, {0}, {notice_sent})}),
              settings);
    CHECK(verdict.kind == Verdict::Kind::None);
  }
  SECTION("the origin elsewhere, waiting for the target: HARD") {
    const Verdict verdict =
        judge(job({in_window_call("MPI_Win_wait", {1}, {}, {notice_received}), receiving(0)}), settings);
    CHECK(verdict.kind == Verdict::Kind::Hard);
    CHECK_FALSE(verdict.with_possible_waits);
    CHECK(verdict.core == DeadlockCore{{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}});
  }
}

TEST_CASE("RMA: a fence counts on its window, not on the window's communicator", "[verdict][rma]") {
  // Rank 0 is in the window's second fence; rank 1 in MPI_COMM_WORLD's second collective.
  RankSnapshot fencing = in_window_call("MPI_Win_fence", {}, {1}, {});
  fencing.threads.front().collective = {window_id, 2, "MPI_Win_fence", -1, ""};
  fencing.collectives = {{world_id, 1}, {window_id, 2}};
  SECTION("the other rank in MPI_Barrier: every rank stuck, no call can complete") {
    RankSnapshot barrier = in_collective("MPI_Barrier", {0}, {}, 2);
    barrier.collectives = {{world_id, 2}, {window_id, 1}};
    const Verdict verdict = judge(job({fencing, barrier}), settings);
    CHECK(verdict.kind == Verdict::Kind::Hard);
    CHECK(verdict.with_possible_waits);
    CHECK(verdict.core == DeadlockCore{{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}});
  }
  SECTION("the other rank in the same fence: the fence may still complete") {
    RankSnapshot other = fencing;
    other.threads.front().possibly_waits_for = {0};
    const Verdict verdict = judge(job({fencing, other}), settings);
    CHECK(verdict.kind != Verdict::Kind::Hard);
  }
}

TEST_CASE("RMA: a lock waits possibly only for members that hold a lock on the window or run outside MPI",
          "[verdict][rma]") {
  // Rank 0 waits in MPI_Win_lock on rank 1's window; rank 1 waits in
  // MPI_Barrier for ranks 0 and 2; rank 2 runs.
  RankSnapshot locking = in_window_call("MPI_Win_lock", {}, {1, 2}, {});
  locking.threads.front().lock_window = window_id;
  const RankSnapshot in_barrier = in_collective("MPI_Barrier", {0, 2}, {});
  SECTION("the target, inside MPI_Barrier, makes progress on the lock: no cycle") {
    CHECK(judge(job({locking, in_barrier, running()}), settings).kind == Verdict::Kind::None);
  }
  SECTION("the target holds a lock on the window while it waits: Unsafe") {
    RankSnapshot holding = in_barrier;
    holding.locked_windows = {window_id};
    const Verdict verdict = judge(job({locking, holding, running()}), settings);
    CHECK(verdict.kind == Verdict::Kind::Unsafe);
    CHECK(verdict.core == DeadlockCore{{0, 1}, {{{0, 1}, {0, 1, 0}}}, {}});
  }
  SECTION("a lock on another window holds nothing up") {
    RankSnapshot holding = in_barrier;
    holding.locked_windows = {window_id + 1};
    CHECK(judge(job({locking, holding, running()}), settings).kind == Verdict::Kind::None);
  }
}
