#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "monitor/wait_graph.hpp"

using mpisentry::DeadlockCore;
using mpisentry::RankSnapshot;
using mpisentry::RankState;
using mpisentry::WaitMode;
using mpisentry::waitgraph::effective_arcs;
using mpisentry::waitgraph::find_deadlock;

namespace {

constexpr double min_stuck = 1.0;
constexpr double long_stuck = 5.0;

RankSnapshot blocked(WaitMode mode, std::vector<int> waits_for, double seconds = long_stuck) {
  RankSnapshot rank;
  rank.state = RankState::Blocked;
  rank.seconds = seconds;
  rank.wait_mode = mode;
  rank.waits_for = std::move(waits_for);
  return rank;
}

RankSnapshot waits_for_all(std::vector<int> targets) { return blocked(WaitMode::All, std::move(targets)); }
RankSnapshot waits_for_any(std::vector<int> targets) { return blocked(WaitMode::Any, std::move(targets)); }

RankSnapshot in_collective(std::uint64_t key, std::vector<int> members) {
  RankSnapshot rank = waits_for_all(std::move(members));
  rank.collective_key = key;
  return rank;
}

RankSnapshot with_state(RankState state) {
  RankSnapshot rank;
  rank.state = state;
  rank.seconds = long_stuck;
  return rank;
}
RankSnapshot running() { return with_state(RankState::Running); }
RankSnapshot finalizing() { return with_state(RankState::Finalizing); }

// Numbers the snapshots by their position, as the monitor gathers them.
std::vector<RankSnapshot> job(std::vector<RankSnapshot> ranks) {
  for (std::size_t index = 0; index < ranks.size(); ++index) ranks[index].rank = static_cast<int>(index);
  return ranks;
}

std::vector<int> ranks_from(int first, int last) {
  std::vector<int> ranks(last - first + 1);
  std::iota(ranks.begin(), ranks.end(), first);
  return ranks;
}

DeadlockCore deadlock(std::vector<int> core, std::vector<int> cycle, std::vector<int> blocked_behind = {}) {
  return {std::move(core), std::move(cycle), std::move(blocked_behind)};
}

const DeadlockCore no_deadlock{};

}  // namespace

TEST_CASE("an empty job has no arcs and no deadlock") {
  CHECK(find_deadlock({}, min_stuck) == no_deadlock);
  CHECK(effective_arcs({}).empty());
}

TEST_CASE("two ranks receiving from each other form an AND cycle") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1}, {0, 1, 0}));
}

TEST_CASE("a ring of synchronous sends 0->1->2->0 is one cycle in wait order") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({2}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1, 2}, {0, 1, 2, 0}));
}

TEST_CASE("the cycle starts at the core's lowest rank and follows the arcs") {
  const auto ranks = job({running(), waits_for_all({3}), waits_for_all({1}), waits_for_all({2})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({1, 2, 3}, {1, 3, 2, 1}));
}

TEST_CASE("a rank waiting for the cycle is blocked behind it, not in the core") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({0}), running(), waits_for_all({0})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1}, {0, 1, 0}, {3}));
}

TEST_CASE("an ANY_SOURCE receive whose every option is stuck is an OR knot") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1, 2}, {0, 1, 0}));
}

TEST_CASE("an OR knot of ranks that all wait for any other still gives one cycle") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_any({2, 0}), waits_for_any({0, 1})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1, 2}, {0, 1, 0}));
}

TEST_CASE("an ANY_SOURCE receive with one running option is no deadlock") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0}), running()});
  CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
}

TEST_CASE("an OR rank released through one option is not in the core its other option is in") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0, 3}), running(), waits_for_all({1})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({1, 3}, {1, 3, 1}));
}

TEST_CASE("a partial deadlock among some ranks is found while the others run") {
  const auto ranks =
      job({waits_for_all({1}), waits_for_all({2}), waits_for_all({0}), running(), running(), running()});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1, 2}, {0, 1, 2, 0}));
}

TEST_CASE("a rank waiting for a running rank is never in the deadlock") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({0}), waits_for_all({3}), running()});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1}, {0, 1, 0}));
}

TEST_CASE("a polling rank is free") {
  RankSnapshot polling = with_state(RankState::Polling);
  polling.wait_mode = WaitMode::All;
  polling.waits_for = {0};
  const auto ranks = job({waits_for_all({1}), polling});
  CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
}

TEST_CASE("ranks stuck for less than the minimum count as free") {
  SECTION("in the cycle") {
    const auto ranks = job({waits_for_all({1}), blocked(WaitMode::All, {0}, min_stuck / 2)});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
  SECTION("exactly the minimum counts as stuck") {
    const auto ranks = job({waits_for_all({1}), blocked(WaitMode::All, {0}, min_stuck)});
    CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("a Finalizing rank") {
    RankSnapshot new_in_finalize = finalizing();
    new_in_finalize.seconds = 0;
    const auto ranks = job({new_in_finalize, waits_for_all({0})});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
}

TEST_CASE("a barrier with one rank missing") {
  const std::vector<int> members = ranks_from(0, 3);
  SECTION("the missing rank is running: no deadlock") {
    const auto ranks =
        job({in_collective(7, members), in_collective(7, members), in_collective(7, members), running()});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
  SECTION("the missing rank receives from a rank in the barrier: they form the core") {
    const auto ranks = job({in_collective(7, members), in_collective(7, members), in_collective(7, members),
                            waits_for_all({0})});
    CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 3}, {0, 3, 0}, {1, 2}));
  }
  SECTION("the missing rank is in another collective on the same members") {
    const auto ranks = job({in_collective(7, members), in_collective(7, members), in_collective(7, members),
                            in_collective(8, members)});
    CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1, 2, 3}, {0, 3, 0}));
  }
}

TEST_CASE("all ranks in the same barrier are no deadlock") {
  const std::vector<int> members = ranks_from(0, 2);
  const auto ranks = job({in_collective(7, members), in_collective(7, members), in_collective(7, members)});
  CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
}

TEST_CASE("Finalize waits for every rank not in Finalize") {
  SECTION("a rank receiving from a Finalizing rank") {
    const auto ranks = job({finalizing(), waits_for_all({0})});
    CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("several Finalizing ranks and one receiving from the last") {
    const auto ranks = job({finalizing(), finalizing(), finalizing(), waits_for_all({2})});
    CHECK(find_deadlock(ranks, min_stuck) == deadlock({2, 3}, {2, 3, 2}, {0, 1}));
  }
  SECTION("every rank in Finalize") {
    const auto ranks = job({finalizing(), finalizing()});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
  SECTION("a rank still running") {
    const auto ranks = job({finalizing(), running()});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
}

TEST_CASE("Waitall needs every request, Waitany one of them") {
  SECTION("Waitall with one target running still deadlocks on the other") {
    const auto ranks = job({waits_for_all({1, 2}), waits_for_all({0}), running()});
    CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("Waitany with one target running is released") {
    const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0}), running()});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
}

TEST_CASE("a blocking send to oneself is a self-arc cycle") {
  const auto ranks = job({waits_for_all({0}), running()});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0}, {0, 0}));
}

TEST_CASE("a rank with a self-arc and a longer cycle gives the self-arc") {
  const auto ranks = job({waits_for_all({1, 0}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, min_stuck) == deadlock({0, 1}, {0, 0}));
}

TEST_CASE("a stuck rank that waits for nothing known is released") {
  SECTION("mode None") {
    const auto ranks = job({blocked(WaitMode::None, {}), waits_for_all({0})});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
  SECTION("only out-of-range targets") {
    const auto ranks = job({waits_for_any({-1, 2}), waits_for_all({0})});
    CHECK(find_deadlock(ranks, min_stuck) == no_deadlock);
  }
}

TEST_CASE("effective arcs apply the collective and Finalize rules") {
  const std::vector<int> members = ranks_from(0, 2);
  SECTION("collective members drop the members that arrived") {
    const auto arcs = effective_arcs(job({in_collective(7, members), in_collective(7, members), running()}));
    REQUIRE(arcs.size() == 3);
    CHECK(arcs[0].mode == WaitMode::All);
    CHECK(arcs[0].targets == std::vector<int>{2});
    CHECK(arcs[1].targets == std::vector<int>{2});
    CHECK(arcs[2].mode == WaitMode::None);
    CHECK(arcs[2].targets.empty());
  }
  SECTION("a collective every member reached waits for nothing") {
    const auto arcs = effective_arcs(job({in_collective(7, {0, 1}), in_collective(7, {0, 1})}));
    CHECK(arcs[0].mode == WaitMode::None);
    CHECK(arcs[0].targets.empty());
  }
  SECTION("a rank outside the collective keeps its arcs to the members") {
    const auto arcs =
        effective_arcs(job({in_collective(7, members), waits_for_all({0}), in_collective(7, members)}));
    CHECK(arcs[1].mode == WaitMode::All);
    CHECK(arcs[1].targets == std::vector<int>{0});
  }
  SECTION("Finalizing ranks wait for every rank not Finalizing") {
    const auto arcs = effective_arcs(job({finalizing(), waits_for_any({0, 3}), finalizing(), running()}));
    CHECK(arcs[0].mode == WaitMode::All);
    CHECK(arcs[0].targets == std::vector<int>{1, 3});
    CHECK(arcs[2].targets == std::vector<int>{1, 3});
    CHECK(arcs[1].mode == WaitMode::Any);
    CHECK(arcs[1].targets == std::vector<int>{0, 3});
  }
  SECTION("a rank waiting for nothing known has no targets") {
    const auto arcs = effective_arcs(job({blocked(WaitMode::None, {1}), running()}));
    CHECK(arcs[0].mode == WaitMode::None);
    CHECK(arcs[0].targets.empty());
  }
  SECTION("out-of-range targets are ignored") {
    const auto arcs = effective_arcs(job({waits_for_all({-2, 1, 5}), running()}));
    CHECK(arcs[0].mode == WaitMode::All);
    CHECK(arcs[0].targets == std::vector<int>{1});
  }
}

TEST_CASE("a 1024-rank barrier with the last rank receiving from rank 0") {
  constexpr int size = 1024;
  const std::vector<int> members = ranks_from(0, size - 1);
  std::vector<RankSnapshot> ranks(size - 1, in_collective(42, members));
  ranks.push_back(waits_for_all({0}));
  CHECK(find_deadlock(job(std::move(ranks)), min_stuck) ==
        deadlock({0, size - 1}, {0, size - 1, 0}, ranks_from(1, size - 2)));
}

TEST_CASE("a ring of 100000 ranks with a long chain behind it needs no recursion") {
  constexpr int ring = 100000;
  constexpr int chain = 100000;
  std::vector<RankSnapshot> ranks;
  for (int rank = 0; rank < ring; ++rank) ranks.push_back(waits_for_all({(rank + 1) % ring}));
  // Each chain rank waits for the one before it; the first waits for the ring.
  for (int rank = ring; rank < ring + chain; ++rank) ranks.push_back(waits_for_all({rank - 1}));
  std::vector<int> cycle = ranks_from(0, ring - 1);
  cycle.push_back(0);
  CHECK(find_deadlock(job(std::move(ranks)), min_stuck) ==
        deadlock(ranks_from(0, ring - 1), cycle, ranks_from(ring, ring + chain - 1)));
}

TEST_CASE("half the ranks of a large job in Finalize, one receiving from rank 0, the rest running") {
  // With one arc per Finalizing and other rank this would be 2.5e9 arcs.
  constexpr int size = 100000;
  constexpr int receiver = size / 2;
  std::vector<RankSnapshot> ranks(receiver, finalizing());
  ranks.push_back(waits_for_all({0}));
  for (int rank = receiver + 1; rank < size; ++rank) ranks.push_back(running());
  CHECK(find_deadlock(job(std::move(ranks)), min_stuck) ==
        deadlock({0, receiver}, {0, receiver, 0}, ranks_from(1, receiver - 1)));
}

namespace {

using mpisentry::PendingMessage;
constexpr std::uint64_t world_key = 77;

RankSnapshot sending(int to, int tag) {
  RankSnapshot rank = waits_for_all({to});
  rank.messages = {{true, to, tag, world_key}};
  return rank;
}

RankSnapshot receiving(int from, int tag) {
  RankSnapshot rank = waits_for_all({from});
  rank.messages = {{false, from, tag, world_key}};
  return rank;
}

}  // namespace

TEST_CASE("a send and the receive that matches it are a transfer under way, not a deadlock") {
  CHECK(find_deadlock(job({sending(1, 5), receiving(0, 5)}), min_stuck) == no_deadlock);
  RankSnapshot any_source = receiving(0, 5);
  any_source.messages.front().peer = PendingMessage::kAny;
  any_source.messages.front().tag = PendingMessage::kAny;
  CHECK(find_deadlock(job({sending(1, 5), any_source}), min_stuck) == no_deadlock);
  CHECK(effective_arcs(job({sending(1, 5), receiving(0, 5)}))[0].mode == WaitMode::None);
}

TEST_CASE("a send and a receive that do not match still deadlock") {
  SECTION("tags differ") {
    CHECK(find_deadlock(job({sending(1, 5), receiving(0, 6)}), min_stuck) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("communicators differ") {
    RankSnapshot other_comm = receiving(0, 5);
    other_comm.messages.front().comm_key = world_key + 1;
    CHECK(find_deadlock(job({sending(1, 5), other_comm}), min_stuck) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("two sends head to head") {
    CHECK(find_deadlock(job({sending(1, 5), sending(0, 5)}), min_stuck) == deadlock({0, 1}, {0, 1, 0}));
  }
}
