#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

#include "monitor/wait_graph.hpp"

using mpisentry::CollectiveCount;
using mpisentry::DeadlockCore;
using mpisentry::DeadlockCycle;
using mpisentry::PendingMessage;
using mpisentry::RankSet;
using mpisentry::RankSnapshot;
using mpisentry::RankState;
using mpisentry::ThreadRef;
using mpisentry::ThreadSnapshot;
using mpisentry::WaitArc;
using mpisentry::WaitMode;
using mpisentry::waitgraph::collectives_entered;
using mpisentry::waitgraph::effective_arcs;
using mpisentry::waitgraph::find_deadlock;
using mpisentry::waitgraph::Options;

namespace {

constexpr double min_stuck = 1.0;
constexpr double long_stuck = 5.0;
const Options definite_only{min_stuck, false};
const Options with_possible{min_stuck, true};

ThreadSnapshot thread_in(RankState state, WaitMode mode, std::vector<int> waits_for, int id = 0,
                         double seconds = long_stuck) {
  ThreadSnapshot thread;
  thread.id = id;
  thread.state = state;
  thread.seconds = seconds;
  thread.wait_mode = mode;
  thread.waits_for = RankSet(waits_for);
  return thread;
}
ThreadSnapshot blocked_thread(WaitMode mode, std::vector<int> waits_for, int id = 0) {
  return thread_in(RankState::Blocked, mode, std::move(waits_for), id);
}
ThreadSnapshot running_thread(int id) { return thread_in(RankState::Running, WaitMode::None, {}, id, 0); }

// A rank of `threads`, its state as the monitor derives it: Finalizing when a
// thread is, Blocked when every thread waits, else Polling or Running.
RankSnapshot rank_of(std::vector<ThreadSnapshot> threads) {
  RankSnapshot rank;
  const auto any = [&](RankState state) {
    return std::any_of(threads.begin(), threads.end(), [state](const ThreadSnapshot& t) { return t.state == state; });
  };
  const bool all_waiting = std::all_of(threads.begin(), threads.end(), [](const ThreadSnapshot& t) {
    return t.state == RankState::Blocked || t.state == RankState::Finalizing;
  });
  rank.state = any(RankState::Finalizing) ? RankState::Finalizing
               : all_waiting              ? RankState::Blocked
               : any(RankState::Polling)  ? RankState::Polling
                                          : RankState::Running;
  if (rank.state == RankState::Blocked || rank.state == RankState::Finalizing) {
    rank.seconds = threads.front().seconds;
    for (const ThreadSnapshot& t : threads) rank.seconds = std::min(rank.seconds, t.seconds);
  }
  rank.threads = std::move(threads);
  return rank;
}

RankSnapshot blocked(WaitMode mode, std::vector<int> waits_for, double seconds = long_stuck) {
  return rank_of({thread_in(RankState::Blocked, mode, std::move(waits_for), 0, seconds)});
}
RankSnapshot waits_for_all(std::vector<int> targets) { return blocked(WaitMode::All, std::move(targets)); }
RankSnapshot waits_for_any(std::vector<int> targets) { return blocked(WaitMode::Any, std::move(targets)); }

// In the `sequence`-th collective on communicator `comm_id`, waiting for its members.
RankSnapshot in_collective(std::uint64_t comm_id, std::vector<int> members, std::uint64_t sequence = 1) {
  RankSnapshot rank = waits_for_all(std::move(members));
  rank.threads.front().collective = {comm_id, sequence, "MPI_Barrier", -1, ""};
  rank.collectives = {{comm_id, sequence}};
  return rank;
}

RankSnapshot with_state(RankState state) {
  return rank_of({thread_in(state, WaitMode::None, {}, 0, long_stuck)});
}
RankSnapshot running() { return rank_of({running_thread(0)}); }
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

// One deadlock: `core` is its ranks.
DeadlockCore deadlock(std::vector<int> core, std::vector<int> cycle, std::vector<int> blocked_behind = {}) {
  return {core, {{core, std::move(cycle)}}, std::move(blocked_behind)};
}

const DeadlockCore no_deadlock{};

WaitArc arc(int rank, int thread, int to, WaitMode mode = WaitMode::All, bool possible = false) {
  return {ThreadRef{rank, thread}, to, mode, possible};
}

}  // namespace

TEST_CASE("an empty job has no arcs and no deadlock") {
  CHECK(find_deadlock({}, definite_only) == no_deadlock);
  CHECK(effective_arcs({}, definite_only).arcs.empty());
}

TEST_CASE("two ranks receiving from each other form an AND cycle") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}));
}

TEST_CASE("a ring of synchronous sends 0->1->2->0 is one cycle in wait order") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({2}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1, 2}, {0, 1, 2, 0}));
}

TEST_CASE("the cycle starts at the core's lowest rank and follows the arcs") {
  const auto ranks = job({running(), waits_for_all({3}), waits_for_all({1}), waits_for_all({2})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({1, 2, 3}, {1, 3, 2, 1}));
}

TEST_CASE("separate cycles are separate deadlocks, each with its own cycle, by lowest rank") {
  // Ranks 3-4 and 0-2 deadlock apart; rank 5 waits for rank 3, rank 6 for ranks 0 and 4.
  const auto ranks = job({waits_for_all({1}), waits_for_all({2}), waits_for_all({0}), waits_for_all({4}),
                          waits_for_all({3}), waits_for_all({3}), waits_for_all({0, 4})});
  const DeadlockCore found = find_deadlock(ranks, definite_only);
  CHECK(found.core == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(found.cycles == std::vector<DeadlockCycle>{{{0, 1, 2}, {0, 1, 2, 0}}, {{3, 4}, {3, 4, 3}}});
  CHECK(found.blocked_behind == std::vector<int>{5, 6});
}

TEST_CASE("a cycle that waits for another is a deadlock of its own too") {
  // Rank 1 waits for rank 0 and for rank 2: both cycles hold.
  const auto ranks = job({waits_for_all({1}), waits_for_all({0, 2}), waits_for_all({3}), waits_for_all({2})});
  CHECK(find_deadlock(ranks, definite_only).cycles ==
        std::vector<DeadlockCycle>{{{0, 1}, {0, 1, 0}}, {{2, 3}, {2, 3, 2}}});
}

TEST_CASE("50,000 two-rank cycles are 50,000 deadlocks, found in linear time") {
  constexpr int kPairs = 50'000;
  std::vector<RankSnapshot> ranks;
  for (int rank = 0; rank < 2 * kPairs; ++rank) ranks.push_back(waits_for_all({rank ^ 1}));
  const DeadlockCore found = find_deadlock(job(std::move(ranks)), definite_only);
  REQUIRE(found.cycles.size() == kPairs);
  CHECK(found.cycles.back() == DeadlockCycle{{2 * kPairs - 2, 2 * kPairs - 1}, {2 * kPairs - 2, 2 * kPairs - 1, 2 * kPairs - 2}});
}

TEST_CASE("a rank waiting for the cycle is blocked behind it, not in the core") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({0}), running(), waits_for_all({0})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}, {3}));
}

TEST_CASE("an ANY_SOURCE receive whose every option is stuck is an OR knot") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1, 2}, {0, 1, 0}));
}

TEST_CASE("an OR knot of ranks that all wait for any other still gives one cycle") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_any({2, 0}), waits_for_any({0, 1})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1, 2}, {0, 1, 0}));
}

TEST_CASE("an ANY_SOURCE receive with one running option is no deadlock") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0}), running()});
  CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
}

TEST_CASE("an OR rank released through one option is not in the core its other option is in") {
  const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0, 3}), running(), waits_for_all({1})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({1, 3}, {1, 3, 1}));
}

TEST_CASE("a partial deadlock among some ranks is found while the others run") {
  const auto ranks =
      job({waits_for_all({1}), waits_for_all({2}), waits_for_all({0}), running(), running(), running()});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1, 2}, {0, 1, 2, 0}));
}

TEST_CASE("a rank waiting for a running rank is never in the deadlock") {
  const auto ranks = job({waits_for_all({1}), waits_for_all({0}), waits_for_all({3}), running()});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}));
}

TEST_CASE("a polling rank is free") {
  const auto ranks = job({waits_for_all({1}), rank_of({thread_in(RankState::Polling, WaitMode::All, {0})})});
  CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
}

TEST_CASE("ranks stuck for less than the minimum count as free") {
  SECTION("in the cycle") {
    const auto ranks = job({waits_for_all({1}), blocked(WaitMode::All, {0}, min_stuck / 2)});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("exactly the minimum counts as stuck") {
    const auto ranks = job({waits_for_all({1}), blocked(WaitMode::All, {0}, min_stuck)});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("a Finalizing rank") {
    RankSnapshot new_in_finalize = finalizing();
    new_in_finalize.seconds = 0;
    const auto ranks = job({new_in_finalize, waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
}

TEST_CASE("a barrier with one rank missing") {
  const std::vector<int> members = ranks_from(0, 3);
  SECTION("the missing rank is running: no deadlock") {
    const auto ranks =
        job({in_collective(7, members), in_collective(7, members), in_collective(7, members), running()});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("the missing rank receives from a rank in the barrier: they form the core") {
    const auto ranks = job({in_collective(7, members), in_collective(7, members), in_collective(7, members),
                            waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 3}, {0, 3, 0}, {1, 2}));
  }
  SECTION("the missing rank is in a collective on another communicator of the same members") {
    const auto ranks = job({in_collective(7, members), in_collective(7, members), in_collective(7, members),
                            in_collective(8, members)});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1, 2, 3}, {0, 3, 0}));
  }
}

TEST_CASE("all ranks in the same barrier are no deadlock") {
  const std::vector<int> members = ranks_from(0, 2);
  const auto ranks = job({in_collective(7, members), in_collective(7, members), in_collective(7, members)});
  CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  CHECK(effective_arcs(ranks, with_possible).arcs.empty());
}

TEST_CASE("collective members count as arrived by sequence number, per communicator") {
  // Rank 1 is in collective #3 on communicator 7 (members 0..3); rank 0 is in
  // it too. Rank 2 has entered 4 collectives on it, rank 3 only 2 (and 9 on
  // another communicator).
  constexpr std::uint64_t comm = 7;
  const std::vector<int> members = ranks_from(0, 3);
  RankSnapshot rank2 = waits_for_all({3});
  rank2.collectives = {{comm, 4}};
  RankSnapshot rank3 = waits_for_all({1});
  rank3.collectives = {{comm, 2}, {comm + 1, 9}};
  const auto ranks = job({in_collective(comm, members, 3), in_collective(comm, members, 3), rank2, rank3});
  CHECK(collectives_entered(ranks[3], comm) == 2);
  CHECK(collectives_entered(ranks[3], comm + 1) == 9);
  CHECK(collectives_entered(ranks[3], comm + 2) == 0);
  const std::vector<WaitArc> arcs = effective_arcs(ranks, definite_only).arcs;
  CHECK(arcs == std::vector<WaitArc>{arc(0, 0, 3), arc(1, 0, 3), arc(2, 0, 3), arc(3, 0, 1)});
  // Rank 3 waits for rank 1, which waits for rank 3 only: rank 2 is not held up by rank 1's collective.
  CHECK(find_deadlock(ranks, definite_only) == deadlock({1, 3}, {1, 3, 1}, {0, 2}));

  SECTION("once rank 3 has entered collective #3 too, nobody waits for it") {
    auto arrived = ranks;
    arrived[3].collectives = {{comm, 3}, {comm + 1, 9}};
    CHECK(effective_arcs(arrived, definite_only).arcs == std::vector<WaitArc>{arc(2, 0, 3), arc(3, 0, 1)});
    CHECK(find_deadlock(arrived, definite_only) == no_deadlock);
  }
}

TEST_CASE("Finalize waits for every rank not in Finalize") {
  SECTION("a rank receiving from a Finalizing rank") {
    const auto ranks = job({finalizing(), waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("several Finalizing ranks and one receiving from the last") {
    const auto ranks = job({finalizing(), finalizing(), finalizing(), waits_for_all({2})});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({2, 3}, {2, 3, 2}, {0, 1}));
  }
  SECTION("every rank in Finalize") {
    const auto ranks = job({finalizing(), finalizing()});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("a rank still running") {
    const auto ranks = job({finalizing(), running()});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
}

TEST_CASE("Waitall needs every request, Waitany one of them") {
  SECTION("Waitall with one target running still deadlocks on the other") {
    const auto ranks = job({waits_for_all({1, 2}), waits_for_all({0}), running()});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("Waitany with one target running is released") {
    const auto ranks = job({waits_for_any({1, 2}), waits_for_all({0}), running()});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
}

TEST_CASE("a blocking send to oneself is a self-arc cycle") {
  const auto ranks = job({waits_for_all({0}), running()});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0}, {0, 0}));
}

TEST_CASE("a rank with a self-arc and a longer cycle gives the self-arc") {
  const auto ranks = job({waits_for_all({1, 0}), waits_for_all({0})});
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 0}));
}

TEST_CASE("a stuck rank that waits for nothing known is released") {
  SECTION("mode None") {
    const auto ranks = job({blocked(WaitMode::None, {}), waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("only out-of-range targets") {
    const auto ranks = job({waits_for_any({-1, 2}), waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
}

TEST_CASE("a rank can act while one of its threads can") {
  SECTION("one thread blocked in a cycle, another running: no deadlock") {
    const auto ranks =
        job({rank_of({blocked_thread(WaitMode::All, {1}, 0), running_thread(1)}), waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("one thread blocked in a cycle, another polling: no deadlock") {
    const auto ranks = job({rank_of({blocked_thread(WaitMode::All, {1}, 0),
                                     thread_in(RankState::Polling, WaitMode::All, {1}, 1)}),
                            waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("every thread blocked on the cycle: deadlock") {
    const auto ranks = job({rank_of({blocked_thread(WaitMode::All, {1}, 0), blocked_thread(WaitMode::All, {1}, 1)}),
                            waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("every thread blocked, one of them waiting for a running rank: released through it") {
    const auto ranks = job({rank_of({blocked_thread(WaitMode::All, {1}, 0), blocked_thread(WaitMode::All, {2}, 1)}),
                            waits_for_all({0}), running()});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("a thread receiving from its own rank while another thread runs: released") {
    const auto ranks = job({rank_of({blocked_thread(WaitMode::All, {0}, 0), running_thread(1)}), waits_for_all({0})});
    CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  }
  SECTION("a thread receiving from its own rank while the other waits for it too: a self-cycle") {
    const auto ranks = job({rank_of({blocked_thread(WaitMode::All, {0}, 0), blocked_thread(WaitMode::All, {0}, 1)}),
                            running()});
    CHECK(find_deadlock(ranks, definite_only) == deadlock({0}, {0, 0}));
  }
}

namespace {

constexpr std::uint64_t world_id = 1;

// Blocked in a send or a receive: its one part is all the call needs.
RankSnapshot sending(int to, int tag) {
  RankSnapshot rank = waits_for_all({to});
  rank.threads.front().messages = {{true, to, tag, world_id, true}};
  return rank;
}

RankSnapshot receiving(int from, int tag) {
  RankSnapshot rank = waits_for_all({from});
  rank.threads.front().messages = {{false, from, tag, world_id, true}};
  return rank;
}

}  // namespace

TEST_CASE("a send and the receive that matches it are a transfer under way, not a deadlock") {
  CHECK(find_deadlock(job({sending(1, 5), receiving(0, 5)}), definite_only) == no_deadlock);
  RankSnapshot any_source = receiving(0, 5);
  any_source.threads.front().messages.front().peer = PendingMessage::kAny;
  any_source.threads.front().messages.front().tag = PendingMessage::kAny;
  CHECK(find_deadlock(job({sending(1, 5), any_source}), definite_only) == no_deadlock);
  CHECK(effective_arcs(job({sending(1, 5), receiving(0, 5)}), definite_only).arcs.empty());
}

TEST_CASE("a transfer under way between two threads of one rank is no self-deadlock") {
  RankSnapshot both = rank_of({blocked_thread(WaitMode::All, {0}, 0), blocked_thread(WaitMode::All, {0}, 1)});
  both.threads[0].messages = {{true, 0, 5, world_id}};
  both.threads[1].messages = {{false, 0, 5, world_id}};
  CHECK(find_deadlock(job({both, running()}), definite_only) == no_deadlock);
  CHECK(effective_arcs(job({both, running()}), definite_only).arcs.empty());
  SECTION("with different tags they still wait for each other") {
    both.threads[1].messages.front().tag = 6;
    CHECK(find_deadlock(job({both, running()}), definite_only) == deadlock({0}, {0, 0}));
  }
}

TEST_CASE("a send and a receive that do not match still deadlock") {
  SECTION("tags differ") {
    CHECK(find_deadlock(job({sending(1, 5), receiving(0, 6)}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("communicators differ") {
    RankSnapshot other_comm = receiving(0, 5);
    other_comm.threads.front().messages.front().comm_id = world_id + 1;
    CHECK(find_deadlock(job({sending(1, 5), other_comm}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("two sends head to head") {
    CHECK(find_deadlock(job({sending(1, 5), sending(0, 5)}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
}

TEST_CASE("a call with several parts waits for a peer until each of its parts with that peer can match") {
  // Rank 0's MPI_Waitall, on requests confirmed incomplete, sends tag 1 to
  // rank 1 and receives tag 2 from it; rank 1's sends tag 2 to rank 0 and
  // receives tag 3. Rank 1's send is taken by rank 0's receive, but nothing
  // of rank 1 takes rank 0's send, and nothing of rank 0 sends what rank 1
  // receives.
  RankSnapshot first = waits_for_all({1});
  first.threads.front().messages = {{true, 1, 1, world_id}, {false, 1, 2, world_id}};
  RankSnapshot second = waits_for_all({0});
  second.threads.front().messages = {{true, 0, 2, world_id}, {false, 0, 3, world_id}};
  CHECK(find_deadlock(job({first, second}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  SECTION("when every part can match, both are transfers under way") {
    second.threads.front().messages.back().tag = 1;
    CHECK(find_deadlock(job({first, second}), definite_only) == no_deadlock);
  }
  SECTION("a receive from any rank that this peer does not match ties the wait to no peer") {
    second.threads.front().messages.back() = {false, PendingMessage::kAny, 3, world_id};
    CHECK(find_deadlock(job({first, second}), definite_only) == no_deadlock);
  }
}

TEST_CASE("a send-receive with one half under way may need nothing more: its other half may be done") {
  // MPI_Isendrecv's or MPI_Sendrecv_replace's halves: whether the other half
  // is done is not known, so the half that a posted operation matches may be
  // all it needs.
  RankSnapshot first = waits_for_all({1});
  first.threads.front().messages = {{true, 1, 1, world_id, true}, {false, 1, 2, world_id, true}};
  RankSnapshot second = waits_for_all({0});
  second.threads.front().messages = {{true, 0, 2, world_id, true}, {false, 0, 3, world_id, true}};
  CHECK(find_deadlock(job({first, second}), definite_only) == no_deadlock);
  SECTION("no half matched: both wait") {
    second.threads.front().messages.front().tag = 4;
    CHECK(find_deadlock(job({first, second}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
}

TEST_CASE("a peer's active request that matches is a transfer under way, whatever the peer's call") {
  // Rank 1 posted an MPI_Isend of tag 5 to rank 0 and waits in a barrier
  // that rank 0 joins after its MPI_Recv: the barrier progresses the send.
  RankSnapshot in_barrier = in_collective(7, {0});
  RankSnapshot receiver = receiving(1, 5);
  CHECK(find_deadlock(job({receiver, in_barrier}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  in_barrier.pending = {{true, 0, 5, world_id}};
  CHECK(find_deadlock(job({receiver, in_barrier}), definite_only) == no_deadlock);
  CHECK(effective_arcs(job({receiver, in_barrier}), definite_only).arcs.size() == 1);  // only the barrier's
  SECTION("another tag or communicator is no match") {
    in_barrier.pending = {{true, 0, 6, world_id}, {true, 0, 5, world_id + 1}, {true, 2, 5, world_id}};
    CHECK(find_deadlock(job({receiver, in_barrier}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("an active receive, from the sender or from any rank, takes a send") {
    RankSnapshot sender = sending(1, 5);
    CHECK(find_deadlock(job({sender, in_barrier}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
    in_barrier.pending = {{false, 0, 5, world_id}};
    CHECK(find_deadlock(job({sender, in_barrier}), definite_only) == no_deadlock);
    in_barrier.pending = {{false, PendingMessage::kAny, PendingMessage::kAny, world_id}};
    CHECK(find_deadlock(job({sender, in_barrier}), definite_only) == no_deadlock);
  }
  SECTION("a rank whose active requests are not all listed may have posted anything") {
    in_barrier.pending_unlisted = true;
    CHECK(find_deadlock(job({receiver, in_barrier}), definite_only) == no_deadlock);
  }
  SECTION("a receive from any rank is taken by any rank's active send") {
    RankSnapshot any_source = receiving(1, 5);
    any_source.threads.front().messages.front().peer = PendingMessage::kAny;
    any_source.threads.front().wait_mode = WaitMode::Any;
    any_source.threads.front().waits_for = RankSet(std::vector<int>{1, 2});
    RankSnapshot waits_for_0 = receiving(0, 9);
    in_barrier.pending.clear();
    CHECK(find_deadlock(job({any_source, in_barrier, waits_for_0}), definite_only) ==
          deadlock({0, 1, 2}, {0, 1, 0}));
    // Rank 1's send to rank 0 can end rank 0's OR wait: rank 0 waits for
    // nobody, not for rank 2 alone.
    in_barrier.pending = {{true, 0, 5, world_id}};
    CHECK(find_deadlock(job({any_source, in_barrier, waits_for_0}), definite_only) == no_deadlock);
  }
}

TEST_CASE("a message in flight that a receive may take is a transfer under way, whatever the sender's call") {
  // Rank 1 sent to rank 0 (an eager send that completed, or one whose
  // request it freed) and waits in a barrier that rank 0 joins after its
  // MPI_Recv: the counts say a message is in flight, and its tag.
  using mpisentry::MessageTally;
  using mpisentry::TagTally;
  const auto tally = [](std::vector<int> tags) {
    TagTally t;
    for (int tag : tags) {
      ++t.count;
      t.sum += static_cast<std::uint64_t>(tag);
      t.squares += static_cast<std::uint64_t>(tag) * static_cast<std::uint64_t>(tag);
    }
    return t;
  };
  RankSnapshot in_barrier = in_collective(7, {0});
  RankSnapshot receiver = receiving(1, 5);
  const auto sent = [&](std::vector<int> tags, std::uint64_t comm = world_id) {
    in_barrier.tallies = {{comm, 0, tally(std::move(tags)), {}}};
  };
  const auto matched = [&](std::vector<int> tags) { receiver.tallies = {{world_id, 1, {}, tally(std::move(tags))}}; };
  const auto stuck = [&] { return find_deadlock(job({receiver, in_barrier}), definite_only) == deadlock({0, 1}, {0, 1, 0}); };
  CHECK(stuck());
  SECTION("one message of the tag") {
    sent({5});
    CHECK_FALSE(stuck());
  }
  SECTION("every message sent was matched") {
    sent({5, 5, 9});
    matched({5, 5, 9});
    CHECK(stuck());
  }
  SECTION("one or two in flight of other tags") {
    sent({3});
    CHECK(stuck());
    sent({3, 7});
    CHECK(stuck());
    sent({4, 6});  // the same sum as 5 and 5
    CHECK(stuck());
    sent({5, 5});
    CHECK_FALSE(stuck());
    sent({2, 5, 8});
    matched({8});
    CHECK_FALSE(stuck());
    sent({2, 4, 8});
    matched({8});
    CHECK(stuck());
  }
  SECTION("more than two in flight: any tag may be among them") {
    sent({1, 2, 3});
    CHECK_FALSE(stuck());
  }
  SECTION("a receive of any tag takes any message") {
    sent({3});
    receiver.threads.front().messages.front().tag = PendingMessage::kAny;
    CHECK_FALSE(stuck());
  }
  SECTION("a message on another communicator is not for this receive") {
    sent({5}, world_id + 1);
    CHECK(stuck());
  }
  SECTION("counts read while the ranks counted: more matched than sent hides anything") {
    sent({5});
    matched({3, 5});
    CHECK_FALSE(stuck());
  }
  SECTION("a sender whose counts are not all listed may have sent anything") {
    in_barrier.tallies_unlisted = true;
    CHECK_FALSE(stuck());
  }
  SECTION("a send is never released by a message in flight") {
    RankSnapshot sender = sending(1, 5);
    in_barrier.tallies = {{world_id, 0, {}, tally({5})}};
    sender.tallies = {{world_id, 1, tally({5, 5}), {}}};
    CHECK(find_deadlock(job({sender, in_barrier}), definite_only) == deadlock({0, 1}, {0, 1, 0}));
  }
}

TEST_CASE("possible waits count only with with_possible_waits") {
  // Rank 0 is a Bcast leaf: definitely waits for its running root, rank 2,
  // possibly for the other leaf, rank 1, which receives from rank 0.
  RankSnapshot leaf = waits_for_all({2});
  leaf.threads.front().possibly_waits_for = {1};
  const auto ranks = job({leaf, waits_for_all({0}), running()});
  CHECK(find_deadlock(ranks, definite_only) == no_deadlock);
  CHECK(find_deadlock(ranks, with_possible) == deadlock({0, 1}, {0, 1, 0}));
  CHECK(effective_arcs(ranks, definite_only).arcs == std::vector<WaitArc>{arc(0, 0, 2), arc(1, 0, 0)});
  CHECK(effective_arcs(ranks, with_possible).arcs ==
        std::vector<WaitArc>{arc(0, 0, 2), arc(0, 0, 1, WaitMode::All, true), arc(1, 0, 0)});

  SECTION("a thread with possible waits only (a Bcast root) waits AND for them") {
    RankSnapshot root = blocked(WaitMode::None, {});
    root.threads.front().possibly_waits_for = {1};
    const auto only_possible = job({root, waits_for_all({0})});
    CHECK(find_deadlock(only_possible, definite_only) == no_deadlock);
    CHECK(find_deadlock(only_possible, with_possible) == deadlock({0, 1}, {0, 1, 0}));
  }
  SECTION("an OR wait is not made AND by possible waits") {
    RankSnapshot any = waits_for_any({1, 2});
    any.threads.front().possibly_waits_for = {1};
    const auto ors = job({any, waits_for_all({0}), running()});
    CHECK(find_deadlock(ors, with_possible) == no_deadlock);
  }
  SECTION("possible waits on members that arrived drop out") {
    RankSnapshot in_bcast = in_collective(7, {2});
    in_bcast.threads.front().possibly_waits_for = {1};
    RankSnapshot other_leaf = waits_for_all({0});
    other_leaf.collectives = {{7, 1}};
    const auto arrived = job({in_bcast, other_leaf, running()});
    CHECK(effective_arcs(arrived, with_possible).arcs == std::vector<WaitArc>{arc(0, 0, 2), arc(1, 0, 0)});
    CHECK(find_deadlock(arrived, with_possible) == no_deadlock);
  }
}

TEST_CASE("effective arcs name the thread, mode and kind of each wait") {
  const std::vector<int> members = ranks_from(0, 2);
  SECTION("collective members drop the members that arrived") {
    CHECK(effective_arcs(job({in_collective(7, members), in_collective(7, members), running()}), definite_only).arcs ==
          std::vector<WaitArc>{arc(0, 0, 2), arc(1, 0, 2)});
  }
  SECTION("a rank outside the collective keeps its arcs to the members") {
    CHECK(effective_arcs(job({in_collective(7, members), waits_for_all({0}), in_collective(7, members)}),
                         definite_only).arcs == std::vector<WaitArc>{arc(0, 0, 1), arc(1, 0, 0), arc(2, 0, 1)});
  }
  SECTION("Finalizing ranks wait for every rank not Finalizing") {
    CHECK(effective_arcs(job({finalizing(), waits_for_any({0, 3}), finalizing(), running()}), definite_only).arcs ==
          std::vector<WaitArc>{arc(0, 0, 1), arc(0, 0, 3), arc(1, 0, 0, WaitMode::Any), arc(1, 0, 3, WaitMode::Any),
                               arc(2, 0, 1), arc(2, 0, 3)});
  }
  SECTION("threads other than the first are named by their id") {
    const auto ranks = job({rank_of({running_thread(0), blocked_thread(WaitMode::Any, {1}, 4)}), running()});
    CHECK(effective_arcs(ranks, definite_only).arcs == std::vector<WaitArc>{arc(0, 4, 1, WaitMode::Any)});
  }
  SECTION("running and polling threads, and waits for nothing known, have no arcs") {
    const auto ranks = job({blocked(WaitMode::None, {}), rank_of({thread_in(RankState::Polling, WaitMode::All, {0})}),
                            running()});
    CHECK(effective_arcs(ranks, definite_only).arcs.empty());
  }
  SECTION("out-of-range targets are ignored") {
    CHECK(effective_arcs(job({waits_for_all({-2, 1, 5}), running()}), definite_only).arcs ==
          std::vector<WaitArc>{arc(0, 0, 1)});
  }
}

TEST_CASE("a 1024-rank barrier with the last rank receiving from rank 0") {
  constexpr int size = 1024;
  const std::vector<int> members = ranks_from(0, size - 1);
  std::vector<RankSnapshot> ranks(size - 1, in_collective(42, members));
  ranks.push_back(waits_for_all({0}));
  CHECK(find_deadlock(job(std::move(ranks)), definite_only) ==
        deadlock({0, size - 1}, {0, size - 1, 0}, ranks_from(1, size - 2)));
}

TEST_CASE("in a collective of many members, each counts as arrived by its own count, as in a small one") {
  // 100 members of communicator 7; ranks 0-89 are in its collective #3.
  // Ranks 90-94 have entered only 2 collectives there, ranks 95-99 already
  // 4; each of them receives from rank 0.
  constexpr std::uint64_t comm = 7;
  std::vector<RankSnapshot> ranks(90, in_collective(comm, ranks_from(0, 99), 3));
  for (int rank = 90; rank < 100; ++rank) {
    RankSnapshot receiver = waits_for_all({0});
    receiver.collectives = {{comm, rank < 95 ? 2u : 4u}};
    ranks.push_back(receiver);
  }
  ranks = job(std::move(ranks));
  std::vector<WaitArc> expected;
  for (int rank = 0; rank < 90; ++rank)
    for (int late = 90; late < 95; ++late) expected.push_back(arc(rank, 0, late));
  for (int rank = 90; rank < 100; ++rank) expected.push_back(arc(rank, 0, 0));
  CHECK(effective_arcs(ranks, definite_only).arcs == expected);
  std::vector<int> behind = ranks_from(1, 89);
  for (int rank = 95; rank < 100; ++rank) behind.push_back(rank);
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 90, 91, 92, 93, 94}, {0, 90, 0}, behind));
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
  CHECK(find_deadlock(job(std::move(ranks)), definite_only) ==
        deadlock(ranks_from(0, ring - 1), cycle, ranks_from(ring, ring + chain - 1)));
}

TEST_CASE("a collective of 100000 ranks that one rank never joins: each member waits for two runs, not 99999 ranks") {
  // Ranks 1-99999 in collective #1 of communicator 7, each waiting for every
  // other rank; rank 0 receives from rank 1 instead. As lists of ranks this
  // would be 10^10 look-ups.
  constexpr int size = 100000;
  constexpr std::uint64_t comm = 7;
  std::vector<RankSnapshot> ranks{waits_for_all({1})};
  for (int rank = 1; rank < size; ++rank) {
    RankSnapshot member = in_collective(comm, {});
    member.threads.front().waits_for = RankSet{0};
    if (rank > 1) member.threads.front().waits_for.add({1, rank - 1});
    if (rank < size - 1) member.threads.front().waits_for.add({rank + 1, size - 1});
    ranks.push_back(std::move(member));
  }
  ranks = job(std::move(ranks));
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 1}, {0, 1, 0}, ranks_from(2, size - 1)));
  const std::vector<WaitArc> arcs = effective_arcs(ranks, definite_only).arcs;
  CHECK(arcs.size() == size);
  CHECK(arcs.back() == arc(size - 1, 0, 0));
}

// Ranks 0 to joined - 1 in collective #1 of MPI_COMM_WORLD (id 1) on `size`
// ranks, each waiting for every other rank as two runs; the others follow.
std::vector<RankSnapshot> half_joined(int size, int joined, const std::function<RankSnapshot(int)>& other) {
  std::vector<RankSnapshot> ranks;
  for (int rank = 0; rank < joined; ++rank) {
    RankSnapshot member = in_collective(1, {});
    if (rank > 0) member.threads.front().waits_for.add({0, rank - 1});
    member.threads.front().waits_for.add({rank + 1, size - 1});
    ranks.push_back(std::move(member));
  }
  for (int rank = joined; rank < size; ++rank) ranks.push_back(other(rank));
  return job(std::move(ranks));
}

TEST_CASE("members of a large collective wait for every straggler: one that runs does not release them") {
  // Ranks 0-97 in the collective; rank 98 computes, rank 99 receives from rank 0.
  constexpr int size = 100;
  const auto ranks = half_joined(size, 98, [](int rank) { return rank == 98 ? running() : waits_for_all({0}); });
  CHECK(find_deadlock(ranks, definite_only) == deadlock({0, 99}, {0, 99, 0}, ranks_from(1, 97)));
}

TEST_CASE("half of 100000 ranks in a collective, the other half deadlocked elsewhere: one shared wait, not 2.5e9") {
  // Ranks 50000 and 50001 receive from each other; the others from 50000.
  constexpr int size = 100000;
  constexpr int joined = size / 2;
  const auto ranks = half_joined(size, joined, [](int rank) {
    return waits_for_all({rank == joined ? joined + 1 : joined});
  });
  std::vector<int> behind = ranks_from(0, joined - 1);
  for (int rank = joined + 2; rank < size; ++rank) behind.push_back(rank);
  CHECK(find_deadlock(ranks, definite_only) == deadlock({joined, joined + 1}, {joined, joined + 1, joined}, behind));
}

TEST_CASE("half of 100000 ranks in a collective, the other half outside MPI: all of them culprits, in linear time") {
  using mpisentry::waitgraph::find_outside_mpi;
  constexpr int size = 100000;
  constexpr int joined = size / 2;
  const auto ranks = half_joined(size, joined, [](int) { return running(); });
  CHECK(find_deadlock(ranks, definite_only).empty());
  const auto found = find_outside_mpi(ranks, min_stuck);
  CHECK(found.waiting == ranks_from(0, joined - 1));
  CHECK(found.culprits == ranks_from(joined, size - 1));
  // A report lists at most a bound of those 2.5e9 arcs, whole threads, and counts the rest.
  const auto listed = effective_arcs(ranks, definite_only, 120000);
  CHECK(listed.arcs.size() == 100000);
  CHECK(listed.arcs.front() == arc(0, 0, joined));
  CHECK(listed.arcs.back() == arc(1, 0, size - 1));
  CHECK(listed.left_out == std::size_t{joined - 2} * joined);
}

TEST_CASE("a report's arcs stop at a bound, each thread's whole or counted as left out") {
  // Ranks 0 and 2 in MPI_Finalize wait for ranks 1 and 3; rank 1 for 0 and 2; rank 3 for 0.
  const auto ranks = job({finalizing(), waits_for_all({0, 2}), finalizing(), waits_for_all({0})});
  CHECK(effective_arcs(ranks, definite_only, 3).arcs == std::vector<WaitArc>{arc(0, 0, 1), arc(0, 0, 3), arc(3, 0, 0)});
  CHECK(effective_arcs(ranks, definite_only, 3).left_out == 4);
  CHECK(effective_arcs(ranks, definite_only, 0).left_out == 7);
  CHECK(effective_arcs(ranks, definite_only).left_out == 0);
}

TEST_CASE("half the ranks of a large job in Finalize, one receiving from rank 0, the rest running") {
  // With one arc per Finalizing and other rank this would be 2.5e9 arcs.
  constexpr int size = 100000;
  constexpr int receiver = size / 2;
  std::vector<RankSnapshot> ranks(receiver, finalizing());
  ranks.push_back(waits_for_all({0}));
  for (int rank = receiver + 1; rank < size; ++rank) ranks.push_back(running());
  CHECK(find_deadlock(job(std::move(ranks)), definite_only) ==
        deadlock({0, receiver}, {0, receiver, 0}, ranks_from(1, receiver - 1)));
}

TEST_CASE("ranks outside MPI are the culprits of whoever waits for them long enough, directly or through others") {
  using mpisentry::waitgraph::find_outside_mpi;
  // 1 waits for 0 (running); 2 waits for 1; 3 waits for 4 (polling); 5 waits briefly for 0.
  const auto ranks = job({running(), waits_for_all({0}), waits_for_all({1}), waits_for_all({4}),
                          with_state(RankState::Polling), blocked(WaitMode::All, {0}, 0.5)});
  const auto found = find_outside_mpi(ranks, min_stuck);
  CHECK(found.culprits == std::vector<int>{0});
  CHECK(found.waiting == std::vector<int>{1, 2});
  CHECK(find_outside_mpi(ranks, 0).waiting == std::vector<int>{1, 2, 5});
  CHECK(find_outside_mpi(ranks, 10).empty());  // below the threshold: nothing
  // A deadlock among blocked ranks names no culprit.
  CHECK(find_outside_mpi(job({waits_for_all({1}), waits_for_all({0}), running()}), min_stuck).empty());
  // Any-of waits count each rank outside MPI they may wait for.
  const auto any = find_outside_mpi(job({running(), running(), waits_for_any({0, 1})}), min_stuck);
  CHECK(any.culprits == std::vector<int>{0, 1});
  // So do the possible waits of an any-of wait, which the AND/OR analysis leaves out.
  RankSnapshot any_or_maybe = waits_for_any({1});
  any_or_maybe.threads.front().possibly_waits_for = {2};
  const auto maybe = find_outside_mpi(job({any_or_maybe, waits_for_all({0}), running()}), min_stuck);
  CHECK(maybe.waiting == std::vector<int>{0, 1});
  CHECK(maybe.culprits == std::vector<int>{2});
  // A rank with one thread outside MPI is a culprit, though another thread waits.
  const auto mixed = job({rank_of({blocked_thread(WaitMode::All, {1}, 0), running_thread(1)}), waits_for_all({0})});
  CHECK(find_outside_mpi(mixed, min_stuck).culprits == std::vector<int>{0});
}
