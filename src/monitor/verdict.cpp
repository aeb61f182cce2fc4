#include "monitor/verdict.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "api/functions.hpp"
#include "monitor/wait_graph.hpp"

namespace mpisentry::monitor {
namespace {

bool all_stuck(const std::vector<RankSnapshot>& ranks, double timeout) {
  return !ranks.empty() && std::all_of(ranks.begin(), ranks.end(),
                                       [timeout](const RankSnapshot& rank) { return waitgraph::is_stuck(rank, timeout); });
}

double least_seconds(const std::vector<RankSnapshot>& ranks) {
  double least = ranks.empty() ? 0 : ranks.front().seconds;
  for (const RankSnapshot& rank : ranks) least = std::min(least, rank.seconds);
  return least;
}

std::vector<int> every_rank(const std::vector<RankSnapshot>& ranks) {
  std::vector<int> all;
  for (const RankSnapshot& rank : ranks) all.push_back(rank.rank);
  return all;
}

std::string collective_text(const CollectiveCall& call) {
  std::string text = call.function;
  if (call.root >= 0) text += fmt::format(" with root {}", call.root);
  if (!call.op.empty()) text += " with operation " + call.op;
  return text;
}

// The function a collective is matched as: a large-count twin (MPI_Bcast_c)
// as its base, which MPI matches with it.
std::string_view matched_as(std::string_view function) {
  if (function.ends_with("_c")) function.remove_suffix(2);
  return function;
}

struct Seen {
  int rank;
  const CollectiveCall* call;
  std::string text;  // "MPI_Bcast with root 0", "MPI_Wait on MPI_Ibarrier"
};

// A member that entered a collective, as the function it called ("MPI_Bcast_c").
struct EnteredBy {
  std::size_t position;  // in the ranks' list: the order members are named in
  int rank;
  std::string_view function;
};

// For each collective (comm_id, sequence) that `calls` are in, and each
// function it was entered as (as matched), its first two members (in the
// ranks' order) that entered it so, from the functions of their last
// collectives: enough to name, for any call, the first other member that
// entered its collective as another function. Built in one pass over the
// ranks, not one per call: P ranks in one collective would cost P^2.
using EnteredAs =
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::map<std::string_view, std::vector<EnteredBy>>>;

EnteredAs entered_as(const std::vector<RankSnapshot>& ranks, const std::vector<Seen>& calls) {
  EnteredAs entered;
  for (const Seen& call : calls) entered.try_emplace({call.call->comm_id, call.call->sequence});
  for (std::size_t position = 0; position < ranks.size(); ++position) {
    for (const CollectiveCount& count : ranks[position].collectives) {
      const std::uint64_t oldest =
          count.entered > CollectiveCount::kRecentKept ? count.entered - CollectiveCount::kRecentKept + 1 : 1;
      for (std::uint64_t sequence = oldest; sequence <= count.entered; ++sequence) {
        const auto key = entered.find({count.comm_id, sequence});
        const std::uint16_t id = count.function_of(sequence);
        if (key == entered.end() || id == 0) continue;
        const std::string_view function = function_info(static_cast<FunctionId>(id)).name;
        std::vector<EnteredBy>& first = key->second[matched_as(function)];
        if (first.size() < 2) first.push_back({position, ranks[position].rank, function});
      }
    }
  }
  return entered;
}

// A member that called collective #k of `call`'s communicator as another
// function than `call`, even if it has left it (a root whose MPI_Bcast
// returned at once) or started it and waits elsewhere: the text naming both,
// else empty. Blocking, nonblocking and persistent forms are other
// functions: MPI never matches them (MPI 4.0, 6.12 and 6.13).
std::string called_as_other(const EnteredAs& entered, const Seen& call) {
  const EnteredBy* other = nullptr;
  for (const auto& [function, members] : entered.at({call.call->comm_id, call.call->sequence})) {
    if (function == matched_as(call.call->function)) continue;
    for (const EnteredBy& member : members) {
      if (member.rank == call.rank) continue;
      if (other == nullptr || member.position < other->position) other = &member;
      break;
    }
  }
  if (other == nullptr) return {};
  return fmt::format("rank {} is in {} and rank {} called {} as collective #{} of the same communicator", call.rank,
                     call.text, other->rank, other->function, call.call->sequence);
}

// Two members in the same collective of a communicator (by its sequence
// number) that called different things: the text naming both, else empty.
// A blocking collective and a nonblocking one never match (MPI 4.0, 6.12).
std::string collective_mismatch(const std::vector<RankSnapshot>& ranks) {
  std::vector<Seen> calls;
  for (const RankSnapshot& rank : ranks) {
    for (const ThreadSnapshot& thread : rank.threads) {
      if (thread.state != RankState::Blocked) continue;
      if (thread.collective.comm_id != 0)
        calls.push_back({rank.rank, &thread.collective, collective_text(thread.collective)});
      for (const StartedCollective& started : thread.started_collectives)
        calls.push_back({rank.rank, &started.call, thread.function + " on " + collective_text(started.call)});
    }
  }
  std::map<std::pair<std::uint64_t, std::uint64_t>, const Seen*> first_seen;
  for (const Seen& call : calls) {
    const auto [seen, inserted] = first_seen.try_emplace({call.call->comm_id, call.call->sequence}, &call);
    if (inserted) continue;
    const Seen& other = *seen->second;
    if (std::tie(other.call->root, other.call->op) != std::tie(call.call->root, call.call->op) ||
        matched_as(other.call->function) != matched_as(call.call->function))
      return fmt::format("rank {} is in {} and rank {} in {}, as collective #{} of the same communicator", other.rank,
                         other.text, call.rank, call.text, call.call->sequence);
  }
  const EnteredAs entered = entered_as(ranks, calls);
  for (const Seen& call : calls)
    if (std::string other = called_as_other(entered, call); !other.empty()) return other;
  return {};
}

// The first possible wait on the cycle: which call waits for which rank only
// where MPI synchronizes.
std::string possible_wait_on(const std::vector<RankSnapshot>& ranks, const DeadlockCore& core) {
  for (int rank : core.core) {
    for (const ThreadSnapshot& thread : ranks[static_cast<std::size_t>(rank)].threads) {
      if (const std::optional<int> target = thread.possibly_waits_for.first_in(core.core))
        return fmt::format("rank {}'s {} waits for rank {} only where {} synchronizes", rank, thread.function,
                           *target, thread.function);
    }
  }
  return "a wait that holds only where MPI synchronizes";
}

// Why every rank may still be fine: what the calls that hold them are.
std::string in_flight(const std::vector<RankSnapshot>& ranks) {
  bool collective = false, unreadable = false, transfer = false;
  for (const RankSnapshot& rank : ranks) {
    for (const ThreadSnapshot& thread : rank.threads) {
      if (thread.state != RankState::Blocked) continue;
      if (thread.collective.comm_id != 0 || !thread.started_collectives.empty())
        collective = true;
      else if (thread.wait_mode == WaitMode::None)
        unreadable = true;
      else
        transfer = true;
    }
  }
  std::vector<std::string> parts;
  if (collective) parts.emplace_back("collectives that every member has joined with matching arguments");
  if (transfer) parts.emplace_back("transfers whose send and receive are both posted");
  if (unreadable) parts.emplace_back("waits mpisentry cannot read (such as generalized requests)");
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<int> involved_in(const DeadlockCore& core) {
  std::vector<int> involved = core.core;
  involved.insert(involved.end(), core.blocked_behind.begin(), core.blocked_behind.end());
  std::sort(involved.begin(), involved.end());
  return involved;
}

}  // namespace

Verdict judge(const std::vector<RankSnapshot>& ranks, const JudgeSettings& settings) {
  Verdict verdict;
  const bool everyone = all_stuck(ranks, settings.proven_seconds);
  verdict.partial = !everyone;
  const waitgraph::Options definite{settings.proven_seconds, false};
  const waitgraph::Options possible{settings.timeout_seconds, true};

  if (DeadlockCore core = waitgraph::find_deadlock(ranks, definite); !core.empty()) {
    verdict.kind = Verdict::Kind::Hard;
    verdict.rule = fmt::format(
        "each rank of {} waits in a call that cannot return before the next rank acts, in every MPI "
        "implementation (definite waits; requests confirmed incomplete; no message in flight that one of them "
        "could take)",
        core.cycles.size() > 1 ? "each cycle" : "the cycle");
    verdict.involved = involved_in(core);
    verdict.core = std::move(core);
    return verdict;
  }
  if (everyone) {
    verdict.involved = every_rank(ranks);
    if (const std::string mismatch = collective_mismatch(ranks); !mismatch.empty()) {
      verdict.kind = Verdict::Kind::Hard;
      verdict.rule = "every rank is blocked and their calls cannot match: " + mismatch;
      return verdict;
    }
    if (DeadlockCore core = waitgraph::find_deadlock(ranks, possible); !core.empty()) {
      verdict.kind = Verdict::Kind::Hard;
      verdict.with_possible_waits = true;
      verdict.rule = "every rank is blocked and no call can complete: " + possible_wait_on(ranks, core) +
                     ", and that rank is held by another call";
      verdict.core = std::move(core);
      return verdict;
    }
    if (least_seconds(ranks) >= settings.warning_seconds) {
      verdict.kind = Verdict::Kind::Slow;
      verdict.rule = "every rank is blocked, in calls that may still complete together: " + in_flight(ranks);
    }
    return verdict;
  }
  if (DeadlockCore core = waitgraph::find_deadlock(ranks, possible); !core.empty()) {
    verdict.kind = Verdict::Kind::Unsafe;
    verdict.with_possible_waits = true;
    verdict.rule = "a cycle that needs a wait only some MPI implementations make: " + possible_wait_on(ranks, core) +
                   "; the program is unsafe by the MPI standard, and goes on";
    verdict.involved = involved_in(core);
    verdict.core = std::move(core);
  }
  return verdict;
}

bool confirms(const Verdict& first, const std::vector<RankSnapshot>& first_look, const Verdict& second,
              const std::vector<RankSnapshot>& second_look) {
  if (first.kind == Verdict::Kind::None || first.kind != second.kind || first.core != second.core ||
      first.involved != second.involved || first_look.size() != second_look.size())
    return false;
  return std::all_of(second.involved.begin(), second.involved.end(), [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    return r < first_look.size() && first_look[r].activity == second_look[r].activity;
  });
}

}  // namespace mpisentry::monitor
