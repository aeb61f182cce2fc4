#include "monitor/describe.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "monitor/handshake.hpp"
#include "records/message_tallies.hpp"
#include "records/persistent_collectives.hpp"
#include "records/partitioned_requests.hpp"
#include "records/windows.hpp"

namespace mpisentry::monitor {
namespace {

std::string name_of(const CallRecord& call) { return function_info(call.function).name; }

std::string rank_list(const std::vector<int>& ranks) { return fmt::format("{}", fmt::join(ranks, ",")); }

std::string ranks_phrase(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_list(ranks);
}

// Whom a receive from MPI_ANY_SOURCE may hear from: every rank that can send
// to it on the communicator, itself included (another of its threads may send).
// None when a process outside the job may send (a communicator made by
// MPI_Comm_accept, connect or spawn): it may complete the receive.
std::optional<std::vector<int>> any_sender(const comms::Info& info) {
  std::vector<int> senders = info.peers();
  if (std::any_of(senders.begin(), senders.end(), [](int rank) { return rank < 0; })) return std::nullopt;
  std::sort(senders.begin(), senders.end());
  return senders;
}

// What one point-to-point operation waits for, when it has not completed.
struct PointToPoint {
  WaitMode mode = WaitMode::None;
  std::vector<int> ranks;
  std::string reason;
};

PointToPoint point_to_point_wait(const CallRecord& op, const CommunicatorLookup& communicator) {
  PointToPoint wait;
  const std::optional<comms::Info> info = communicator(op);
  if (!info) return wait;
  const std::string name = name_of(op);
  const auto from = [&](int peer) -> std::optional<std::vector<int>> {
    if (peer == MPI_PROC_NULL) return std::vector<int>{};
    if (peer == MPI_ANY_SOURCE) return any_sender(*info);
    if (const std::optional<int> world = info->world_rank(peer)) return std::vector<int>{*world};
    return std::nullopt;
  };
  switch (op.shape) {
    case CallShape::Send: {
      // A buffered send never waits for its receiver.
      if (function_info(op.function).mode == SendMode::Buffered) return wait;
      const std::optional<int> dest = info->world_rank(op.peer);
      if (!dest) return wait;
      wait = {WaitMode::All, {*dest}, fmt::format("{} waits for its receiver, rank {}", name, *dest)};
      return wait;
    }
    case CallShape::Receive:
    case CallShape::Probe: {
      const auto sources = from(op.peer);
      if (!sources || sources->empty()) return wait;
      if (op.peer == MPI_ANY_SOURCE)
        return {WaitMode::Any, *sources, fmt::format("{} from MPI_ANY_SOURCE waits for any rank of {}", name, info->name)};
      return {WaitMode::All, *sources, fmt::format("{} waits for its source, rank {}", name, sources->front())};
    }
    case CallShape::SendReceive: {
      const auto dest = from(op.peer);
      const auto sources = from(op.source);
      if (!dest || !sources) return wait;
      const std::string source_text = op.source == MPI_ANY_SOURCE ? std::string("MPI_ANY_SOURCE")
                                      : sources->empty()          ? std::string("MPI_PROC_NULL")
                                                                  : std::to_string(sources->front());
      const std::string dest_text = dest->empty() ? std::string("MPI_PROC_NULL") : std::to_string(dest->front());
      switch (op.halves) {
        case Halves::SendPending:
          if (dest->empty()) return wait;
          return {WaitMode::All, *dest,
                  fmt::format("{} waits for its receiver, rank {}: its receive from {} is done", name, dest_text,
                              source_text)};
        case Halves::ReceivePending:
          if (sources->empty()) return wait;
          if (op.source == MPI_ANY_SOURCE)
            return {WaitMode::Any, *sources,
                    fmt::format("{} waits for its receive from MPI_ANY_SOURCE, from any rank of {}", name, info->name)};
          return {WaitMode::All, *sources,
                  fmt::format("{} waits for its receive from its source, rank {}", name, source_text)};
        case Halves::Either: break;
      }
      // One half or both are not done, and which is unknown: either peer may
      // be the one it waits for.
      std::set<int> either(sources->begin(), sources->end());
      either.insert(dest->begin(), dest->end());
      if (either.empty()) return wait;
      wait.ranks.assign(either.begin(), either.end());
      wait.mode = wait.ranks.size() == 1 ? WaitMode::All : WaitMode::Any;
      wait.reason = fmt::format("{} waits for its send to {} or its receive from {}: one of them is not done", name,
                                dest_text, source_text);
      return wait;
    }
    default: return wait;
  }
}

// The point-to-point parts of `op`; `alone`: its completion may be all the
// call needs (PendingMessage::may_end_call).
void add_messages(const CallRecord& op, const CommunicatorLookup& communicator, std::vector<PendingMessage>& out,
                  bool alone) {
  const std::optional<comms::Info> info = communicator(op);
  if (!info || info->id == 0) return;
  const auto add_one = [&](bool send, int peer, int tag, bool may_end_call) {
    if (peer == MPI_PROC_NULL) return;
    int world = PendingMessage::kAny;
    if (peer != MPI_ANY_SOURCE) {
      const std::optional<int> found = info->world_rank(peer);
      if (!found) return;
      world = *found;
    }
    out.push_back({send, world, tag == MPI_ANY_TAG ? PendingMessage::kAny : tag, info->id, may_end_call});
  };
  switch (op.shape) {
    case CallShape::Send: add_one(true, op.peer, op.tag, alone); break;
    case CallShape::Receive:
    case CallShape::Probe: add_one(false, op.peer, op.tag, alone); break;
    // The halves that may be incomplete: with the receive pending, the send
    // may be under way or done, so the receive may be all it needs; with the
    // halves unknown, either may be, whatever else the call waits on.
    case CallShape::SendReceive:
      add_one(true, op.peer, op.tag, op.halves == Halves::Either || (alone && op.halves == Halves::SendPending));
      if (op.halves != Halves::SendPending) add_one(false, op.source, op.recv_tag, op.halves == Halves::Either || alone);
      break;
    default: break;
  }
}

// Which collective waits are definite: those that hold in every conforming
// MPI implementation because the call cannot complete without data, or a
// synchronization, from those members. Each function's WaitRule is in the
// spec (src/api/mpi_api.json); a _c twin has its base's.
enum class CollectiveRule {
  EveryMember,      // Barrier; a reduction or exchange with data from every member
  Root,             // a Bcast/Scatter leaf needs the root's data
  RootNeedsAll,     // a Gather/Reduce root needs every member's data
  EarlierMembers,   // Scan/Exscan: rank i needs ranks 0..i-1
  MayWait,          // counts not known, or no data dependency: possible waits only
};

CollectiveRule rule_of(const CallRecord& call, bool is_root) {
  const bool has_data = call.count > 0;
  switch (function_info(call.function).waits) {
    case WaitRule::EveryMember: return CollectiveRule::EveryMember;
    case WaitRule::EveryMemberWithData: return has_data ? CollectiveRule::EveryMember : CollectiveRule::MayWait;
    case WaitRule::Root: return has_data && !is_root ? CollectiveRule::Root : CollectiveRule::MayWait;
    case WaitRule::RootNeedsAll: return has_data && is_root ? CollectiveRule::RootNeedsAll : CollectiveRule::MayWait;
    case WaitRule::EarlierMembers: return has_data ? CollectiveRule::EarlierMembers : CollectiveRule::MayWait;
    case WaitRule::MayWait: return CollectiveRule::MayWait;
  }
  return CollectiveRule::MayWait;
}

Waits collective_waits(const CallRecord& call, int world_rank, const CommunicatorLookup& communicator) {
  Waits w;
  const std::string name = name_of(call);
  const std::optional<comms::Info> info = communicator(call);
  if (!info || call.comm_id == 0) {
    w.reason = name + " on a communicator mpisentry does not track: whom it waits for is unknown";
    return w;
  }
  // On an inter-communicator data flows between the groups: a rank needs the
  // remote group, and its own group's other ranks only where MPI synchronizes.
  const auto sorted_without_self = [world_rank](std::vector<int> ranks) {
    std::erase(ranks, world_rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
  };
  std::vector<int> others = sorted_without_self(info->peers());
  const std::vector<int> own_group = info->inter ? sorted_without_self(info->local) : std::vector<int>{};

  w.collective.comm_id = call.comm_id;
  w.collective.sequence = call.sequence;
  w.collective.function = name;
  w.collective.op = predefined_op_name(call.op);
  bool is_root = false;
  if (call.shape == CallShape::Rooted) {
    if (call.peer == MPI_PROC_NULL) {  // an inter-communicator's other non-root ranks: not part of it
      w.reason = name + " with root MPI_PROC_NULL takes no part";
      return w;
    }
    is_root = call.peer == MPI_ROOT || (!info->inter && info->world_rank(call.peer) == world_rank);
    const std::optional<int> root = call.peer == MPI_ROOT ? world_rank : info->world_rank(call.peer);
    w.collective.root = root.value_or(-1);
  }
  const std::string where = fmt::format("on {} (its collective #{} there)", info->name, call.sequence);
  switch (rule_of(call, is_root)) {
    case CollectiveRule::EveryMember:
      w.mode = WaitMode::All;
      w.definite = others;
      w.reason = fmt::format("{} {} cannot complete before every member has joined it", name, where);
      break;
    case CollectiveRule::Root:
      if (w.collective.root < 0) break;
      w.mode = WaitMode::All;
      w.definite = {w.collective.root};
      std::erase(others, w.collective.root);
      w.possible = others;
      w.reason = fmt::format("{} {}: a non-root rank needs the data of its root, rank {}", name, where,
                             w.collective.root);
      break;
    case CollectiveRule::RootNeedsAll:
      w.mode = WaitMode::All;
      w.definite = others;
      w.reason = fmt::format("{} {}: the root needs the data of every member", name, where);
      break;
    case CollectiveRule::EarlierMembers: {
      const auto self = std::find(info->local.begin(), info->local.end(), world_rank);
      w.definite.assign(info->local.begin(), self);
      w.possible.assign(self == info->local.end() ? self : self + 1, info->local.end());
      w.mode = w.definite.empty() ? WaitMode::None : WaitMode::All;
      w.reason = fmt::format("{} {}: a rank needs the data of the ranks before it", name, where);
      break;
    }
    case CollectiveRule::MayWait:
      w.possible = others;
      w.reason = fmt::format("{} {} waits for other members only where MPI makes it synchronize", name, where);
      break;
  }
  w.possible.insert(w.possible.end(), own_group.begin(), own_group.end());
  std::sort(w.definite.begin(), w.definite.end());
  std::sort(w.possible.begin(), w.possible.end());
  return w;
}

// Accept, connect, spawn and join wait for processes outside the job: no
// wait on a rank of it, so that they never take part in a cycle. Over a
// communicator they are still its collective, for the mismatch rule.
Waits connection_waits(const CallRecord& call, const CommunicatorLookup& communicator) {
  Waits w;
  const std::string name = name_of(call);
  w.reason = name + " waits for processes outside the job, which mpisentry cannot see";
  if (call.comm_id == 0) return w;
  w.collective.comm_id = call.comm_id;
  w.collective.sequence = call.sequence;
  w.collective.function = name;
  if (const std::optional<comms::Info> info = communicator(call))
    w.collective.root = info->world_rank(call.peer).value_or(-1);
  return w;
}

// A Wait on several requests waits for the peers of those still incomplete,
// and for what the blocking twins of its nonblocking collectives wait for
// (the wait-for graph leaves out the members that have started them).
// Waitall (AND) may leave out what it cannot read: it waits at least for the
// rest. Waitany/Waitsome (OR) cannot: an unreadable request may complete it,
// and so may a collective that waits for no member definitely.
Waits request_waits(const CallRecord& call, const std::vector<RequestView>& requests, int world_rank,
                    const CommunicatorLookup& communicator) {
  Waits w;
  const std::string name = name_of(call);
  const Completes completes = function_info(call.function).completes;
  const bool wait_for_all = completes == Completes::One || completes == Completes::All;
  std::set<int> all_of;
  std::vector<PointToPoint> any_of;
  std::vector<std::string> collective_reasons, partition_reasons;
  int incomplete = 0;
  bool unreadable = call.request_count > kCopiedRequests;
  for (const RequestView& request : requests) {
    if (request.handle == MPI_REQUEST_NULL || request.state == RequestState::Complete) continue;
    if (request.state == RequestState::Unknown || !request.known) {
      unreadable = true;
      continue;
    }
    if (is_nonblocking_collective(request.started)) {
      Waits twin = collective_waits(request.started, world_rank, communicator);
      if (is_persistent_collective(request.started)) {
        // Its start, matched across the members by the persistent collective's own count.
        twin.collective.comm_id = request.started.persistent.id;
        twin.collective.sequence = request.started.persistent.start;
        twin.reason += fmt::format(" (a persistent collective, in its start #{})", request.started.persistent.start);
      }
      if (twin.collective.comm_id == 0 || (!wait_for_all && twin.definite.empty())) {
        unreadable = true;
        continue;
      }
      ++incomplete;
      collective_reasons.push_back(std::move(twin.reason));
      w.started_collectives.push_back(
          {std::move(twin.collective), RankSet(twin.definite), RankSet(twin.possible)});
      continue;
    }
    if (!is_point_to_point(request.started)) {
      unreadable = true;
      continue;
    }
    ++incomplete;
    if (request.unreadied_partitions > 0) {
      // No message yet: only its own rank readies the rest.
      all_of.insert(world_rank);
      partition_reasons.push_back(fmt::format("its partitioned send has {} partition{} not readied (MPI_Pready), "
                                              "which only rank {} itself can ready",
                                              request.unreadied_partitions,
                                              request.unreadied_partitions == 1 ? "" : "s", world_rank));
      continue;
    }
    w.converted_send = w.converted_send || request.started.converted_send;
    add_messages(request.started, communicator, w.messages, /*alone=*/!wait_for_all);
    PointToPoint part = point_to_point_wait(request.started, communicator);
    if (part.mode == WaitMode::None) {
      unreadable = true;
    } else if (part.mode == WaitMode::All) {
      all_of.insert(part.ranks.begin(), part.ranks.end());
    } else {
      any_of.push_back(std::move(part));
    }
  }
  const std::string counted = fmt::format("{} of its {} requests still incomplete", incomplete, call.request_count);
  if (wait_for_all) {
    if (!all_of.empty() || !w.started_collectives.empty()) {
      w.mode = WaitMode::All;
      w.definite.assign(all_of.begin(), all_of.end());
    } else if (!any_of.empty()) {
      w.mode = WaitMode::Any;
      w.definite = any_of.front().ranks;
    }
  } else if (!unreadable) {
    std::set<int> either;
    for (const PointToPoint& part : any_of) either.insert(part.ranks.begin(), part.ranks.end());
    either.insert(all_of.begin(), all_of.end());
    if (!either.empty() || !w.started_collectives.empty()) {
      w.mode = WaitMode::Any;
      w.definite.assign(either.begin(), either.end());
    }
  }
  if (w.mode == WaitMode::None) {
    w.reason = unreadable ? fmt::format("{} waits on a request mpisentry cannot read ({})", name, counted)
                          : fmt::format("{}: {}", name, counted);
    w.definite.clear();
    w.started_collectives.clear();
    return w;
  }
  const std::string ranks = fmt::format("{}{}", w.mode == WaitMode::Any ? "any of " : "", ranks_phrase(w.definite));
  w.reason = fmt::format("{} waits {}{} ({})", name, w.definite.empty() ? "on nonblocking collectives" : "for " + ranks,
                         w.definite.empty() || collective_reasons.empty() ? ""
                         : w.mode == WaitMode::Any                       ? " or on nonblocking collectives"
                                                                         : " and on nonblocking collectives",
                         counted);
  for (const std::string& reason : partition_reasons) w.reason += ": " + reason;
  for (const std::string& reason : collective_reasons) w.reason += ": " + reason;
  return w;
}

// RMA synchronization (MPI 4.0, 12.5). Only MPI_Win_wait (and MPI_Win_test)
// waits in every implementation: for MPI_Win_complete of every origin of its
// exposure epoch. MPI_Win_fence is collective over the window's group but
// need not synchronize; MPI_Win_start and MPI_Win_complete may wait for the
// targets' MPI_Win_post; lock, unlock and flush may wait for the target
// while it runs outside MPI (inside any MPI call it makes progress), or for
// a member that holds a lock on the window (each rank says where it holds
// locks; the wait-for graph keeps only those): possible waits. The end of an access epoch is a notice to each
// target on the window (origins' start and complete send it, the targets'
// wait and test receive it), so that an origin and a target both inside the
// handshake are seen as a transfer under way, not as waiting for each other.
Waits window_waits(const CallRecord& call, int world_rank, const CommunicatorLookup& communicator) {
  Waits w;
  const std::string name = name_of(call);
  const std::optional<comms::Info> info = call.window.id == 0 ? std::nullopt : communicator(call);
  if (!info) {
    w.reason = name + " on a window mpisentry does not track: whom it waits for is unknown";
    return w;
  }
  std::vector<int> others = info->local;
  std::erase(others, world_rank);
  std::sort(others.begin(), others.end());
  std::set<int> members;
  for (int i = 0; i < std::min(call.window.group_size, kCopiedRequests); ++i)
    if (const std::optional<int> world = info->world_rank(call.window.group[i])) members.insert(*world);
  const std::vector<int> group(members.begin(), members.end());
  const std::string window = "on its window of " + info->name;
  const std::string group_text =
      group.empty() ? std::string("none") : ranks_phrase(group) + (call.window.group_size > kCopiedRequests ? fmt::format(" (the first of {})", call.window.group_size) : "");
  const auto notices = [&](bool send) {
    for (int rank : group) w.messages.push_back({send, rank, 0, call.window.id});
  };
  switch (function_info(call.function).synchronizes) {
    case WindowSync::Members:
      w.possible = others;
      w.collective.comm_id = call.window.id;
      w.collective.sequence = call.sequence;
      w.collective.function = name;
      w.reason = fmt::format("{} {} (the window's collective #{}) waits for other members only where MPI makes it "
                             "synchronize",
                             name, window, call.sequence);
      break;
    case WindowSync::Origins:
      if (!group.empty()) w.mode = WaitMode::All;
      w.definite = group;
      notices(false);
      w.reason = fmt::format("{} {} waits for MPI_Win_complete of every origin of its exposure epoch: {}", name,
                             window, group_text);
      break;
    case WindowSync::Targets:
      w.possible = group;
      notices(true);
      w.reason = fmt::format("{} {} may wait for MPI_Win_post of its targets: {}", name, window, group_text);
      break;
    case WindowSync::Target: {
      const std::optional<int> target = info->world_rank(call.peer);
      if (!target) {
        w.reason = fmt::format("{} {} names no member as target", name, window);
        break;
      }
      w.possible = others;
      w.lock_window = call.window.id;
      w.reason = fmt::format("{} {} may wait for its target, rank {}, while it runs outside MPI, or for a member "
                             "that holds a lock on the window",
                             name, window, *target);
      break;
    }
    case WindowSync::AllTargets:
      w.possible = others;
      w.lock_window = call.window.id;
      w.reason = fmt::format("{} {} may wait for any member running outside MPI, or holding a lock on the window",
                             name, window);
      break;
    case WindowSync::None: w.reason = fmt::format("{} {} waits for no other rank", name, window); break;
  }
  return w;
}

}  // namespace

Waits derive_waits(const CallRecord& call, const std::vector<RequestView>& requests, int world_rank,
                   const CommunicatorLookup& communicator) {
  switch (call.shape) {
    case CallShape::Send:
    case CallShape::Receive:
    case CallShape::Probe:
    case CallShape::SendReceive: {
      Waits w;
      PointToPoint wait = point_to_point_wait(call, communicator);
      w.mode = wait.mode;
      w.definite = std::move(wait.ranks);
      w.reason = wait.mode == WaitMode::None ? name_of(call) + ": whom it waits for is unknown" : wait.reason;
      w.converted_send = call.converted_send;
      add_messages(call, communicator, w.messages, /*alone=*/true);
      return w;
    }
    case CallShape::Collective:
    case CallShape::Rooted:
    case CallShape::FileCollective: return collective_waits(call, world_rank, communicator);
    case CallShape::FileAccess: {
      Waits w;
      w.reason = name_of(call) + ": independent file access waits for no other rank";
      return w;
    }
    case CallShape::Connection: return connection_waits(call, communicator);
    case CallShape::Requests: return request_waits(call, requests, world_rank, communicator);
    case CallShape::Window: return window_waits(call, world_rank, communicator);
    case CallShape::Finalize: {
      Waits w;
      w.mode = WaitMode::All;  // the analysis fills in the ranks not yet there
      w.reason = "MPI_Finalize waits for the ranks not yet in it";
      return w;
    }
    case CallShape::Neighborhood:
    case CallShape::MatchedReceive:
    case CallShape::Opaque:
    case CallShape::None: break;
  }
  Waits w;
  w.reason = name_of(call) + ": whom it waits for is not recorded";
  return w;
}

Describer::Describer(int world_rank)
    : world_rank_(world_rank), host_(handshake::host_name()), pid_(static_cast<int>(getpid())) {}

std::vector<RequestView> view_requests(const CallRecord& call, std::optional<std::uint32_t> incomplete) {
  std::vector<RequestView> views;
  if (call.shape != CallShape::Requests) return views;
  for (int i = 0; i < std::min(call.request_count, kCopiedRequests); ++i) {
    RequestView view;
    view.handle = call.requests[i];
    if (view.handle != MPI_REQUEST_NULL) view.known = requests().find(view.handle, view.started);
    if (view.known) view.unreadied_partitions = partitioned_requests::unreadied(view.handle);
    if (incomplete && view.known && state_readable(view.started))
      view.state = (*incomplete >> i) & 1 ? RequestState::Incomplete : RequestState::Complete;
    views.push_back(view);
  }
  return views;
}

namespace {

// The threads blocked in a Wait that tests its requests are asked all at
// once, then awaited together: each answer, when it comes in time, says
// which of the call's requests are incomplete.
std::vector<std::optional<std::uint32_t>> ask_waiting_threads(const std::vector<Describer::ThreadView>& threads) {
  std::vector<std::uint64_t> asks(threads.size(), 0);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const Describer::ThreadView& thread = threads[i];
    if (thread.thread_state && thread.state != RankState::Running && thread.sample.call.tests_requests)
      asks[i] = thread.thread_state->ask();
  }
  std::vector<std::optional<std::uint32_t>> answers(threads.size());
  const auto deadline = std::chrono::steady_clock::now() + kAnswerWait;
  while (true) {
    bool waiting = false;
    for (std::size_t i = 0; i < threads.size(); ++i) {
      if (asks[i] == 0 || answers[i]) continue;
      answers[i] = threads[i].thread_state->answer_to(asks[i], threads[i].sample);
      waiting = waiting || !answers[i];
    }
    if (!waiting || std::chrono::steady_clock::now() >= deadline) return answers;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

namespace {

// Every point-to-point operation of the rank that is started and not yet
// completed, whatever its threads do (RequestTable::for_each_active). A
// matched receive (MPI_Imrecv) names neither peer nor communicator: with
// one active, any send to this rank may be under way. A partitioned send
// with partitions not readied is no message yet: only an MPI_Pready of this
// rank sends it, and a thread that might call it keeps the rank out of any
// deadlock.
void add_active_operations(RankSnapshot& snapshot) {
  const CommunicatorLookup lookup = communicator_of;
  std::vector<PendingMessage>& pending = snapshot.pending;
  requests().for_each_active([&](MPI_Request handle, const CallRecord& started) {
    if (started.shape == CallShape::MatchedReceive) snapshot.pending_unlisted = true;
    if (handle != MPI_REQUEST_NULL && partitioned_requests::unreadied(handle) > 0) return;
    add_messages(started, lookup, pending, /*alone=*/false);
  });
  std::sort(pending.begin(), pending.end(), [](const PendingMessage& a, const PendingMessage& b) {
    return std::tie(a.comm_id, a.peer, a.send, a.tag) < std::tie(b.comm_id, b.peer, b.send, b.tag);
  });
  pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
  if (pending.size() > RankSnapshot::kListedPending) {
    pending.resize(RankSnapshot::kListedPending);
    snapshot.pending_unlisted = true;
  }
  snapshot.pending_unlisted = snapshot.pending_unlisted || requests().lost_active();
}

}  // namespace

RankSnapshot Describer::describe(RankState rank_state, double rank_seconds, std::uint64_t activity,
                                 const std::vector<ThreadView>& threads, bool ask_threads) const {
  RankSnapshot snapshot;
  snapshot.rank = world_rank_;
  snapshot.host = host_;
  snapshot.pid = pid_;
  snapshot.state = rank_state;
  snapshot.seconds = rank_seconds;
  snapshot.activity = activity;
  snapshot.collectives = comms::collective_counts();
  const std::vector<CollectiveCount> fences = windows::collective_counts();
  snapshot.collectives.insert(snapshot.collectives.end(), fences.begin(), fences.end());
  const std::vector<CollectiveCount> starts = persistent_collectives::collective_counts();
  snapshot.collectives.insert(snapshot.collectives.end(), starts.begin(), starts.end());
  std::sort(snapshot.collectives.begin(), snapshot.collectives.end(),
            [](const CollectiveCount& a, const CollectiveCount& b) { return a.comm_id < b.comm_id; });
  snapshot.locked_windows = windows::locked();
  add_active_operations(snapshot);
  const std::vector<std::optional<std::uint32_t>> answers =
      ask_threads ? ask_waiting_threads(threads) : std::vector<std::optional<std::uint32_t>>(threads.size());
  // After the answers: a waiting thread counts the receives MPI completed
  // inside its wait as it answers.
  snapshot.tallies = tallies::collect(snapshot.tallies_unlisted);
  if (snapshot.tallies.size() > RankSnapshot::kListedTallies) {
    snapshot.tallies.resize(RankSnapshot::kListedTallies);
    snapshot.tallies_unlisted = true;
  }
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const ThreadView& thread = threads[i];
    ThreadSnapshot out;
    out.id = thread.sample.id;
    out.state = thread.state;
    out.seconds = thread.seconds;
    if (thread.state != RankState::Running) {
      const CallRecord& call = thread.sample.call;
      const std::vector<RequestView> views = view_requests(call, answers[i]);
      out.function = function_info(call.function).name;
      out.call = call_text_.format(call, views);
      Waits w = derive_waits(call, views, world_rank_, communicator_of);
      out.wait_mode = w.mode;
      out.waits_for = RankSet(w.definite);
      out.possibly_waits_for = RankSet(w.possible);
      out.lock_window = w.lock_window;
      out.wait_reason = std::move(w.reason);
      out.collective = std::move(w.collective);
      out.started_collectives = std::move(w.started_collectives);
      out.converted_send = w.converted_send;
      out.messages = std::move(w.messages);
    }
    snapshot.threads.push_back(std::move(out));
  }
  return snapshot;
}

}  // namespace mpisentry::monitor
