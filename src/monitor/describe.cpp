#include "monitor/describe.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "wrappers/windows.hpp"

namespace mpisentry::monitor {
namespace {

template <typename Handle>
std::string handle_text(Handle handle) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &handle, std::min(sizeof(handle), sizeof(bits)));
  return fmt::format("{:#x}", bits);
}

// A predefined operation's name; user-defined operations are not told apart,
// since their handles need not agree across ranks.
std::string op_name(MPI_Op op) {
  static const std::pair<MPI_Op, const char*> kPredefined[] = {
      {MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},       {MPI_SUM, "MPI_SUM"},       {MPI_PROD, "MPI_PROD"},
      {MPI_LAND, "MPI_LAND"}, {MPI_BAND, "MPI_BAND"},     {MPI_LOR, "MPI_LOR"},       {MPI_BOR, "MPI_BOR"},
      {MPI_LXOR, "MPI_LXOR"}, {MPI_BXOR, "MPI_BXOR"},     {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"},
      {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"}};
  if (op == MPI_OP_NULL) return "";
  for (const auto& [predefined, name] : kPredefined)
    if (op == predefined) return name;
  return "a user-defined operation";
}

const char* peer_role(CallShape shape) {
  switch (shape) {
    case CallShape::Send:
    case CallShape::SendReceive: return "dest";
    case CallShape::Receive:
    case CallShape::Probe: return "source";
    case CallShape::Rooted: return "root";
    default: return "peer";
  }
}

bool is(const CallRecord& call, std::initializer_list<FunctionId> functions) {
  return std::find(functions.begin(), functions.end(), call.function) != functions.end();
}

std::string name_of(const CallRecord& call) { return function_info(call.function).name; }

std::string rank_list(const std::vector<int>& ranks) { return fmt::format("{}", fmt::join(ranks, ",")); }

std::string ranks_phrase(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_list(ranks);
}

// A peer's MPI_COMM_WORLD rank: in the remote group on an inter-communicator.
std::optional<int> world_peer(const comms::Info& info, int peer) {
  const std::vector<int>& group = info.peers();
  if (peer < 0 || static_cast<std::size_t>(peer) >= group.size()) return std::nullopt;
  return group[static_cast<std::size_t>(peer)];
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
    if (const std::optional<int> world = world_peer(*info, peer)) return std::vector<int>{*world};
    return std::nullopt;
  };
  switch (op.shape) {
    case CallShape::Send: {
      // A buffered send never waits for its receiver.
      if (is(op, {FunctionId::Bsend, FunctionId::Bsend_c, FunctionId::Ibsend, FunctionId::Ibsend_c,
                  FunctionId::Bsend_init, FunctionId::Bsend_init_c}))
        return wait;
      const std::optional<int> dest = world_peer(*info, op.peer);
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
      // One half or both are not done, and which is unknown: either peer may
      // be the one it waits for.
      const auto dest = from(op.peer);
      const auto sources = from(op.source);
      if (!dest || !sources) return wait;
      std::set<int> either(sources->begin(), sources->end());
      either.insert(dest->begin(), dest->end());
      if (either.empty()) return wait;
      wait.ranks.assign(either.begin(), either.end());
      wait.mode = wait.ranks.size() == 1 ? WaitMode::All : WaitMode::Any;
      wait.reason = fmt::format("{} waits for its send to {} or its receive from {}: one of them is not done", name,
                                dest->empty() ? "MPI_PROC_NULL" : std::to_string(dest->front()),
                                op.source == MPI_ANY_SOURCE ? std::string("MPI_ANY_SOURCE")
                                : sources->empty()          ? std::string("MPI_PROC_NULL")
                                                            : std::to_string(sources->front()));
      return wait;
    }
    default: return wait;
  }
}

void add_messages(const CallRecord& op, const CommunicatorLookup& communicator, std::vector<PendingMessage>& out) {
  const std::optional<comms::Info> info = communicator(op);
  if (!info || info->id == 0) return;
  const auto add_one = [&](bool send, int peer, int tag) {
    if (peer == MPI_PROC_NULL) return;
    int world = PendingMessage::kAny;
    if (peer != MPI_ANY_SOURCE) {
      const std::optional<int> found = world_peer(*info, peer);
      if (!found) return;
      world = *found;
    }
    out.push_back({send, world, tag == MPI_ANY_TAG ? PendingMessage::kAny : tag, info->id});
  };
  switch (op.shape) {
    case CallShape::Send: add_one(true, op.peer, op.tag); break;
    case CallShape::Receive:
    case CallShape::Probe: add_one(false, op.peer, op.tag); break;
    case CallShape::SendReceive:
      add_one(true, op.peer, op.tag);
      add_one(false, op.source, op.recv_tag);
      break;
    default: break;
  }
}

bool is_point_to_point(const CallRecord& op) {
  return op.shape == CallShape::Send || op.shape == CallShape::Receive || op.shape == CallShape::SendReceive;
}

// Which collective waits are definite: those that hold in every conforming
// MPI implementation because the call cannot complete without data, or a
// synchronization, from those members.
enum class CollectiveRule {
  EveryMember,      // Barrier; a reduction or exchange with data from every member
  Root,             // a Bcast/Scatter leaf needs the root's data
  RootNeedsAll,     // a Gather/Reduce root needs every member's data
  EarlierMembers,   // Scan/Exscan: rank i needs ranks 0..i-1
  MayWait,          // counts not known, or no data dependency: possible waits only
};

CollectiveRule rule_of(const CallRecord& call, bool is_root) {
  const bool has_data = call.count > 0;
  switch (call.function) {
    case FunctionId::Barrier:
    case FunctionId::Comm_split:
    case FunctionId::Comm_split_type:
    case FunctionId::Intercomm_merge:
    case FunctionId::Dist_graph_create: return CollectiveRule::EveryMember;
    case FunctionId::Allreduce:
    case FunctionId::Allreduce_c:
    case FunctionId::Allgather:
    case FunctionId::Allgather_c:
    case FunctionId::Alltoall:
    case FunctionId::Alltoall_c:
    case FunctionId::Reduce_scatter_block:
    case FunctionId::Reduce_scatter_block_c:
      return has_data ? CollectiveRule::EveryMember : CollectiveRule::MayWait;
    case FunctionId::Bcast:
    case FunctionId::Bcast_c:
    case FunctionId::Scatter:
    case FunctionId::Scatter_c:
    case FunctionId::Scatterv:
    case FunctionId::Scatterv_c:
      return has_data && !is_root ? CollectiveRule::Root : CollectiveRule::MayWait;
    case FunctionId::Gather:
    case FunctionId::Gather_c:
    case FunctionId::Reduce:
    case FunctionId::Reduce_c:
      return has_data && is_root ? CollectiveRule::RootNeedsAll : CollectiveRule::MayWait;
    case FunctionId::Scan:
    case FunctionId::Scan_c:
    case FunctionId::Exscan:
    case FunctionId::Exscan_c: return has_data ? CollectiveRule::EarlierMembers : CollectiveRule::MayWait;
    default: return CollectiveRule::MayWait;
  }
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
  w.collective.op = op_name(call.op);
  bool is_root = false;
  if (call.shape == CallShape::Rooted) {
    if (call.peer == MPI_PROC_NULL) {  // an inter-communicator's other non-root ranks: not part of it
      w.reason = name + " with root MPI_PROC_NULL takes no part";
      return w;
    }
    is_root = call.peer == MPI_ROOT || (!info->inter && world_peer(*info, call.peer) == world_rank);
    const std::optional<int> root = call.peer == MPI_ROOT ? world_rank : world_peer(*info, call.peer);
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
    w.collective.root = world_peer(*info, call.peer).value_or(-1);
  return w;
}

// A Wait on several requests waits for the peers of those still incomplete.
// Waitall (AND) may leave out what it cannot read: it waits at least for the
// rest. Waitany/Waitsome (OR) cannot: an unreadable request may complete it.
Waits request_waits(const CallRecord& call, const std::vector<RequestView>& requests,
                    const CommunicatorLookup& communicator) {
  Waits w;
  const std::string name = name_of(call);
  const bool wait_for_all = is(call, {FunctionId::Wait, FunctionId::Waitall, FunctionId::Test, FunctionId::Testall});
  std::set<int> all_of;
  std::vector<PointToPoint> any_of;
  int incomplete = 0;
  bool unreadable = call.request_count > kCopiedRequests;
  for (const RequestView& request : requests) {
    if (request.handle == MPI_REQUEST_NULL || request.state == RequestState::Complete) continue;
    if (request.state == RequestState::Unknown || !request.known || !is_point_to_point(request.started)) {
      unreadable = true;
      continue;
    }
    ++incomplete;
    w.converted_send = w.converted_send || request.started.converted_send;
    add_messages(request.started, communicator, w.messages);
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
    if (!all_of.empty()) {
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
    if (!either.empty()) {
      w.mode = WaitMode::Any;
      w.definite.assign(either.begin(), either.end());
    }
  }
  if (w.mode == WaitMode::None) {
    w.reason = unreadable ? fmt::format("{} waits on a request mpisentry cannot read ({})", name, counted)
                          : fmt::format("{}: {}", name, counted);
    w.definite.clear();
    return w;
  }
  w.reason = fmt::format("{} waits for {}{} ({})", name, w.mode == WaitMode::Any ? "any of " : "",
                         ranks_phrase(w.definite), counted);
  return w;
}

// RMA synchronization (MPI 4.0, 12.5). Only MPI_Win_wait (and MPI_Win_test)
// waits in every implementation: for MPI_Win_complete of every origin of its
// exposure epoch. MPI_Win_fence is collective over the window's group but
// need not synchronize; MPI_Win_start and MPI_Win_complete may wait for the
// targets' MPI_Win_post; lock, unlock and flush may wait for the target, or
// for whichever member holds a conflicting lock (the checker does not know
// which): possible waits. The end of an access epoch is a notice to each
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
    if (const std::optional<int> world = world_peer(*info, call.window.group[i])) members.insert(*world);
  const std::vector<int> group(members.begin(), members.end());
  const std::string window = "on its window of " + info->name;
  const std::string group_text =
      group.empty() ? std::string("none") : ranks_phrase(group) + (call.window.group_size > kCopiedRequests ? fmt::format(" (the first of {})", call.window.group_size) : "");
  const auto notices = [&](bool send) {
    for (int rank : group) w.messages.push_back({send, rank, 0, call.window.id});
  };
  switch (call.function) {
    case FunctionId::Win_fence:
    case FunctionId::Win_free:
      w.possible = others;
      w.collective.comm_id = call.window.id;
      w.collective.sequence = call.sequence;
      w.collective.function = name;
      w.reason = fmt::format("{} {} (the window's collective #{}) waits for other members only where MPI makes it "
                             "synchronize",
                             name, window, call.sequence);
      break;
    case FunctionId::Win_wait:
    case FunctionId::Win_test:
      if (!group.empty()) w.mode = WaitMode::All;
      w.definite = group;
      notices(false);
      w.reason = fmt::format("{} {} waits for MPI_Win_complete of every origin of its exposure epoch: {}", name,
                             window, group_text);
      break;
    case FunctionId::Win_start:
    case FunctionId::Win_complete:
      w.possible = group;
      notices(true);
      w.reason = fmt::format("{} {} may wait for MPI_Win_post of its targets: {}", name, window, group_text);
      break;
    case FunctionId::Win_lock:
    case FunctionId::Win_unlock:
    case FunctionId::Win_flush:
    case FunctionId::Win_flush_local: {
      const std::optional<int> target = world_peer(*info, call.peer);
      if (!target) {
        w.reason = fmt::format("{} {} names no member as target", name, window);
        break;
      }
      w.possible = others;
      w.reason = fmt::format("{} {} may wait for its target, rank {}, or for a member that holds a conflicting lock",
                             name, window, *target);
      break;
    }
    case FunctionId::Win_lock_all:
    case FunctionId::Win_unlock_all:
    case FunctionId::Win_flush_all:
    case FunctionId::Win_flush_local_all:
      w.possible = others;
      w.reason = fmt::format("{} {} may wait for any member, as target or as holder of a conflicting lock", name,
                             window);
      break;
    default: w.reason = fmt::format("{} {} waits for no other rank", name, window); break;
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
      add_messages(call, communicator, w.messages);
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
    case CallShape::Requests: return request_waits(call, requests, communicator);
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

std::optional<comms::Info> lookup_communicator(const CallRecord& call) {
  const std::uint64_t id = call.comm_id != 0 ? call.comm_id : comms::id_of(call.comm);
  return id == 0 ? std::nullopt : comms::info(id);
}

Describer::Describer(int world_rank) : world_rank_(world_rank), pid_(static_cast<int>(getpid())) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  host_ = host;
  for (MPI_Datatype type :
       {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
        MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
        MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_PACKED,
        MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
        MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
        MPI_CHARACTER, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION}) {
    char name[MPI_MAX_OBJECT_NAME] = {};
    int length = 0;
    if (type != MPI_DATATYPE_NULL && PMPI_Type_get_name(type, name, &length) == MPI_SUCCESS && length > 0)
      builtin_types_.emplace(type, std::string(name, static_cast<std::size_t>(length)));
  }
}

std::string Describer::datatype_name(MPI_Datatype datatype) const {
  if (datatype == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  const auto found = builtin_types_.find(datatype);
  return found != builtin_types_.end() ? found->second : handle_text(datatype);
}

std::string Describer::arguments(const CallRecord& call, const std::vector<RequestView>& requests) const {
  const auto tag_text = [](int tag) { return tag == MPI_ANY_TAG ? std::string("MPI_ANY_TAG") : std::to_string(tag); };
  const std::optional<comms::Info> info = lookup_communicator(call);
  const auto peer_text = [&](int rank) {
    if (rank == MPI_ANY_SOURCE) return std::string("MPI_ANY_SOURCE");
    if (rank == MPI_PROC_NULL) return std::string("MPI_PROC_NULL");
    if (rank == MPI_ROOT) return std::string("MPI_ROOT");
    if (call.comm == MPI_COMM_WORLD || !info) return std::to_string(rank);
    const std::optional<int> world = world_peer(*info, rank);
    return world ? fmt::format("{} (world {})", rank, *world) : std::to_string(rank);
  };
  const auto buffer = [&] {
    const std::string buf = call.buffer == MPI_IN_PLACE ? "MPI_IN_PLACE" : fmt::format("{}", call.buffer);
    return fmt::format("buf={}, count={}, datatype={}", buf, call.count, datatype_name(call.datatype));
  };
  const std::string comm = "comm=" + (call.comm == MPI_COMM_WORLD ? std::string("MPI_COMM_WORLD")
                                      : call.comm == MPI_COMM_SELF ? std::string("MPI_COMM_SELF")
                                      : call.comm == MPI_COMM_NULL ? std::string("MPI_COMM_NULL")
                                      : info                       ? fmt::format("{} ({})", handle_text(call.comm), info->name)
                                                                   : handle_text(call.comm));
  // Only collectives store an operation.
  const auto op = [&] { return call.op == MPI_OP_NULL ? std::string() : ", op=" + op_name(call.op); };
  switch (call.shape) {
    case CallShape::Send:
    case CallShape::Receive:
      return fmt::format("{}, {}={}, tag={}, {}", buffer(), peer_role(call.shape), peer_text(call.peer),
                         tag_text(call.tag), comm);
    case CallShape::Probe: return fmt::format("source={}, tag={}, {}", peer_text(call.peer), tag_text(call.tag), comm);
    case CallShape::SendReceive:
      return fmt::format("{}, dest={}, sendtag={}, source={}, recvtag={}, {}", buffer(), peer_text(call.peer),
                         tag_text(call.tag), peer_text(call.source), tag_text(call.recv_tag), comm);
    case CallShape::MatchedReceive: return buffer();
    case CallShape::Collective:
      return call.datatype == MPI_DATATYPE_NULL ? comm : fmt::format("{}{}, {}", buffer(), op(), comm);
    case CallShape::Rooted: return fmt::format("{}{}, root={}, {}", buffer(), op(), peer_text(call.peer), comm);
    case CallShape::Neighborhood: return comm;
    case CallShape::FileCollective:
    case CallShape::FileAccess: {
      std::string text = "fh=" + (call.file.handle == MPI_FILE_NULL ? std::string("MPI_FILE_NULL") : handle_text(call.file.handle));
      if (call.file.handle != MPI_FILE_NULL && info) text += fmt::format(" ({})", info->name);
      if (call.file.offset >= 0) text += fmt::format(", offset={}", call.file.offset);
      return call.datatype == MPI_DATATYPE_NULL ? text : fmt::format("{}, {}", text, buffer());
    }
    case CallShape::Connection:
      return call.comm == MPI_COMM_NULL ? "" : fmt::format("root={}, {}", peer_text(call.peer), comm);
    case CallShape::Requests: {
      constexpr std::size_t kListed = 4;
      std::vector<std::string> listed;
      for (std::size_t i = 0; i < std::min(requests.size(), kListed); ++i) {
        const RequestView& request = requests[i];
        if (request.handle == MPI_REQUEST_NULL) {
          listed.emplace_back("MPI_REQUEST_NULL");
          continue;
        }
        std::string text = request.known ? call_text(request.started, {})
                                         : handle_text(request.handle) + " (a request mpisentry did not see start)";
        if (request.state == RequestState::Complete) text += " [complete]";
        listed.push_back(std::move(text));
      }
      if (static_cast<std::size_t>(call.request_count) > listed.size())
        listed.push_back(fmt::format("... {} more", static_cast<std::size_t>(call.request_count) - listed.size()));
      if (call.request_count == 1 && !listed.empty()) return "request=" + listed.front();
      return fmt::format("count={}, requests=[{}]", call.request_count, fmt::join(listed, ", "));
    }
    case CallShape::Window: return window_arguments(call, info);
    case CallShape::Opaque:
    case CallShape::Finalize:
    case CallShape::None: return call.comm == MPI_COMM_NULL ? "" : comm;
  }
  return "";
}

std::string Describer::window_arguments(const CallRecord& call, const std::optional<comms::Info>& info) const {
  const auto rank_text = [&](int rank) {
    const std::optional<int> world = info ? world_peer(*info, rank) : std::nullopt;
    return !world || info->id == comms::kWorldId ? std::to_string(rank) : fmt::format("{} (world {})", rank, *world);
  };
  const auto assertion_text = [&] {
    std::vector<std::string> modes;
    int rest = call.window.assertion;
    for (const auto& [bit, mode] : {std::pair{MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK"}, {MPI_MODE_NOSTORE, "MPI_MODE_NOSTORE"},
                                    {MPI_MODE_NOPUT, "MPI_MODE_NOPUT"}, {MPI_MODE_NOPRECEDE, "MPI_MODE_NOPRECEDE"},
                                    {MPI_MODE_NOSUCCEED, "MPI_MODE_NOSUCCEED"}}) {
      if ((rest & bit) == 0) continue;
      modes.emplace_back(mode);
      rest &= ~bit;
    }
    if (rest != 0 || modes.empty()) modes.push_back(std::to_string(rest));
    return fmt::format("assert={}", fmt::join(modes, "|"));
  };
  const auto group_text = [&](const char* label) {
    std::vector<std::string> members;
    for (int i = 0; i < std::min(call.window.group_size, kCopiedRequests); ++i)
      members.push_back(call.window.group[i] == MPI_UNDEFINED ? "MPI_UNDEFINED" : rank_text(call.window.group[i]));
    if (call.window.group_size > kCopiedRequests) members.push_back(fmt::format("... {} more", call.window.group_size - kCopiedRequests));
    return fmt::format("{}=[{}]", label, fmt::join(members, ", "));
  };
  const std::string window =
      "win=" + (call.window.handle == MPI_WIN_NULL ? std::string("MPI_WIN_NULL")
                : info                      ? fmt::format("{} (on {})", handle_text(call.window.handle), info->name)
                                            : handle_text(call.window.handle) + " (a window mpisentry does not know)");
  std::vector<std::string> parts;
  switch (call.function) {
    case FunctionId::Win_start:
    case FunctionId::Win_post: parts = {group_text("group"), assertion_text()}; break;
    case FunctionId::Win_complete: parts = {group_text("targets")}; break;
    case FunctionId::Win_wait:
    case FunctionId::Win_test: parts = {group_text("origins")}; break;
    case FunctionId::Win_lock:
      parts = {call.window.lock_type == MPI_LOCK_EXCLUSIVE ? "lock_type=MPI_LOCK_EXCLUSIVE"
               : call.window.lock_type == MPI_LOCK_SHARED  ? "lock_type=MPI_LOCK_SHARED"
                                                    : fmt::format("lock_type={}", call.window.lock_type),
               "rank=" + rank_text(call.peer), assertion_text()};
      break;
    case FunctionId::Win_unlock:
    case FunctionId::Win_flush:
    case FunctionId::Win_flush_local: parts = {"rank=" + rank_text(call.peer)}; break;
    case FunctionId::Win_fence:
    case FunctionId::Win_lock_all: parts = {assertion_text()}; break;
    default: break;
  }
  parts.push_back(window);
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string Describer::call_text(const CallRecord& call, const std::vector<RequestView>& requests) const {
  return fmt::format("{}({})", function_info(call.function).name, arguments(call, requests));
}

std::vector<RequestView> Describer::view_requests(const CallRecord& call, bool ask_mpi) const {
  std::vector<RequestView> views;
  if (call.shape != CallShape::Requests) return views;
  for (int i = 0; i < std::min(call.request_count, kCopiedRequests); ++i) {
    RequestView view;
    view.handle = call.requests[i];
    if (view.handle != MPI_REQUEST_NULL) view.known = requests().find(view.handle, view.started);
    // Only requests of point-to-point operations are asked about: asking
    // about a generalized request would run the program's query function.
    if (ask_mpi && view.known && is_point_to_point(view.started)) {
      int flag = 0;
      if (PMPI_Request_get_status(view.handle, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS)
        view.state = flag ? RequestState::Complete : RequestState::Incomplete;
    }
    views.push_back(view);
  }
  return views;
}

RankSnapshot Describer::describe(RankState rank_state, double rank_seconds, std::uint64_t activity,
                                 const std::vector<ThreadView>& threads, bool ask_mpi,
                                 const std::function<bool(const ThreadState::Sample&)>& still_in_call) const {
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
  std::sort(snapshot.collectives.begin(), snapshot.collectives.end(),
            [](const CollectiveCount& a, const CollectiveCount& b) { return a.comm_id < b.comm_id; });
  for (const ThreadView& thread : threads) {
    ThreadSnapshot out;
    out.id = thread.sample.id;
    out.state = thread.state;
    out.seconds = thread.seconds;
    if (thread.state != RankState::Running) {
      const CallRecord& call = thread.sample.call;
      // MPI is asked about a request only while its call still runs.
      const std::vector<RequestView> views =
          view_requests(call, ask_mpi && (!still_in_call || still_in_call(thread.sample)));
      out.function = function_info(call.function).name;
      out.call = call_text(call, views);
      Waits w = derive_waits(call, views, world_rank_, lookup_communicator);
      out.wait_mode = w.mode;
      out.waits_for = std::move(w.definite);
      out.possibly_waits_for = std::move(w.possible);
      out.wait_reason = std::move(w.reason);
      out.collective = std::move(w.collective);
      out.converted_send = w.converted_send;
      out.messages = std::move(w.messages);
    }
    snapshot.threads.push_back(std::move(out));
  }
  return snapshot;
}

}  // namespace mpisentry::monitor
