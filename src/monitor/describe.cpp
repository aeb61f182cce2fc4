#include "monitor/describe.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace mpisentry::monitor {
namespace {

template <typename Handle>
std::string handle_text(Handle handle) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &handle, std::min(sizeof(handle), sizeof(bits)));
  return fmt::format("{:#x}", bits);
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

bool is_intercomm(MPI_Comm comm) {
  int inter = 0;
  return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter;
}

// World ranks of the `local` ranks of a group; MPI_UNDEFINED left out.
std::vector<int> translate(MPI_Group group, std::vector<int> local) {
  MPI_Group world = MPI_GROUP_NULL;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> translated(local.size(), MPI_UNDEFINED);
  PMPI_Group_translate_ranks(group, static_cast<int>(local.size()), local.data(), world, translated.data());
  PMPI_Group_free(&world);
  std::erase(translated, MPI_UNDEFINED);
  return translated;
}

std::vector<int> whole_group_in_world(MPI_Group group) {
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> local(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) local[static_cast<std::size_t>(i)] = i;
  return translate(group, std::move(local));
}

// World ranks of comm-local peer ranks: of the remote group on an
// inter-communicator. Empty when they cannot be known without MPI.
std::vector<int> to_world(MPI_Comm comm, const std::vector<int>& local, bool use_mpi) {
  if (comm == MPI_COMM_WORLD) return local;
  if (!use_mpi || comm == MPI_COMM_NULL) return {};
  MPI_Group peers = MPI_GROUP_NULL;
  const int found = is_intercomm(comm) ? PMPI_Comm_remote_group(comm, &peers) : PMPI_Comm_group(comm, &peers);
  if (found != MPI_SUCCESS) return {};
  std::vector<int> world = translate(peers, local);
  PMPI_Group_free(&peers);
  return world;
}

// Every world rank that takes part in comm's collectives (both groups of an
// inter-communicator), sorted.
std::vector<int> members(MPI_Comm comm, bool use_mpi) {
  if (comm == MPI_COMM_NULL || !use_mpi) return {};
  std::vector<int> all;
  const auto append = [&all](std::vector<int> world) { all.insert(all.end(), world.begin(), world.end()); };
  MPI_Group group = MPI_GROUP_NULL;
  if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS) {
    append(whole_group_in_world(group));
    PMPI_Group_free(&group);
  }
  if (is_intercomm(comm) && PMPI_Comm_remote_group(comm, &group) == MPI_SUCCESS) {
    append(whole_group_in_world(group));
    PMPI_Group_free(&group);
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

std::uint64_t hash_ranks(std::uint64_t seed, const std::vector<int>& world_ranks) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  const auto mix = [&hash](std::uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  mix(seed);
  for (int rank : world_ranks) mix(static_cast<std::uint64_t>(rank));
  return hash | 1;  // never 0, which means "none"
}

std::uint64_t collective_key(FunctionId function, const std::vector<int>& world_members) {
  return hash_ranks(static_cast<std::uint64_t>(function), world_members);
}

// The same on every rank for one communicator. Communicators with the same
// members share it, so a send may be taken to match a receive on a twin
// communicator: that errs towards "transfer under way", never towards a
// deadlock that is not there.
std::uint64_t comm_key(const std::vector<int>& world_members) {
  constexpr std::uint64_t kCommunicatorSeed = 0xC0FFEE;
  return world_members.empty() ? 0 : hash_ranks(kCommunicatorSeed, world_members);
}

bool synchronous_send(const CallRecord& started) {
  switch (started.function) {
    case FunctionId::Issend:
    case FunctionId::Issend_c:
    case FunctionId::Ssend_init:
    case FunctionId::Ssend_init_c: return true;
    default: return started.converted_send;
  }
}

MPI_Request request_at(const CallRecord& call, int index) {
  // The program's array may change under us once the call returns; the
  // seqlock check after sampling tells, a torn handle just finds nothing.
  return __atomic_load_n(&call.requests[index], __ATOMIC_RELAXED);
}

std::string rank_list(const std::vector<int>& ranks) {
  return fmt::format("{}", fmt::join(ranks, ","));
}

}  // namespace

struct Describer::Waits {
  WaitMode mode = WaitMode::None;
  std::vector<int> ranks;
  std::string reason;
  std::uint64_t collective_key = 0;
  bool converted_send = false;
};

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

std::string Describer::comm_name(MPI_Comm comm, bool use_mpi) const {
  if (comm == MPI_COMM_WORLD) return "MPI_COMM_WORLD";
  if (comm == MPI_COMM_SELF) return "MPI_COMM_SELF";
  if (comm == MPI_COMM_NULL) return "MPI_COMM_NULL";
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  if (use_mpi && PMPI_Comm_get_name(comm, name, &length) == MPI_SUCCESS && length > 0)
    return std::string(name, static_cast<std::size_t>(length));
  return handle_text(comm);
}

std::string Describer::peer_text(int rank, MPI_Comm comm, bool use_mpi) const {
  if (rank == MPI_ANY_SOURCE) return "MPI_ANY_SOURCE";
  if (rank == MPI_PROC_NULL) return "MPI_PROC_NULL";
  if (rank == MPI_ROOT) return "MPI_ROOT";
  if (comm == MPI_COMM_WORLD) return std::to_string(rank);
  const std::vector<int> world = to_world(comm, {rank}, use_mpi);
  return world.empty() ? std::to_string(rank) : fmt::format("{} (world {})", rank, world.front());
}

std::string Describer::arguments(const CallRecord& call, bool use_mpi) const {
  const auto tag_text = [](int tag) { return tag == MPI_ANY_TAG ? std::string("MPI_ANY_TAG") : std::to_string(tag); };
  const auto buffer = [&] {
    return fmt::format("buf={}, count={}, datatype={}", call.buffer, call.count, datatype_name(call.datatype));
  };
  const std::string comm = "comm=" + comm_name(call.comm, use_mpi);
  switch (call.shape) {
    case CallShape::Send:
    case CallShape::Receive:
      return fmt::format("{}, {}={}, tag={}, {}", buffer(), peer_role(call.shape),
                         peer_text(call.peer, call.comm, use_mpi), tag_text(call.tag), comm);
    case CallShape::Probe:
      return fmt::format("source={}, tag={}, {}", peer_text(call.peer, call.comm, use_mpi), tag_text(call.tag), comm);
    case CallShape::SendReceive:
      return fmt::format("{}, dest={}, sendtag={}, source={}, recvtag={}, {}", buffer(),
                         peer_text(call.peer, call.comm, use_mpi), tag_text(call.tag),
                         peer_text(call.source, call.comm, use_mpi), tag_text(call.recv_tag), comm);
    case CallShape::MatchedReceive: return buffer();
    case CallShape::Collective:
      return call.datatype == MPI_DATATYPE_NULL ? comm : fmt::format("{}, {}", buffer(), comm);
    case CallShape::Rooted:
      return fmt::format("{}, root={}, {}", buffer(), peer_text(call.peer, call.comm, use_mpi), comm);
    case CallShape::Neighborhood: return comm;
    case CallShape::Requests: {
      constexpr int kListed = 4;
      std::vector<std::string> listed;
      for (int i = 0; i < std::min(call.request_count, kListed); ++i) {
        const MPI_Request request = request_at(call, i);
        CallRecord started;
        if (request == MPI_REQUEST_NULL)
          listed.emplace_back("MPI_REQUEST_NULL");
        else if (requests().find(request, started))
          listed.push_back(call_text(started, use_mpi));
        else
          listed.push_back(handle_text(request) + " (a request mpisentry did not see start)");
      }
      if (call.request_count > kListed) listed.push_back(fmt::format("... {} more", call.request_count - kListed));
      if (call.request_count == 1) return "request=" + listed.front();
      return fmt::format("count={}, requests=[{}]", call.request_count, fmt::join(listed, ", "));
    }
    case CallShape::Window:
    case CallShape::Finalize:
    case CallShape::None: return "";
  }
  return "";
}

std::string Describer::call_text(const CallRecord& call, bool use_mpi) const {
  return fmt::format("{}({})", function_info(call.function).name, arguments(call, use_mpi));
}

Describer::Waits Describer::waits(const CallRecord& call, bool use_mpi) const {
  Waits w;
  const std::string name = function_info(call.function).name;
  const auto everyone_else = [&](MPI_Comm comm) {
    std::vector<int> ranks = members(comm, use_mpi);
    std::erase(ranks, world_rank_);
    return ranks;
  };
  const auto from_peer = [&](int peer, const char* preposition) {
    if (peer == MPI_PROC_NULL) return;
    if (peer == MPI_ANY_SOURCE) {
      w.mode = WaitMode::Any;
      w.ranks = everyone_else(call.comm);
      w.reason = fmt::format("{} from any rank", name);
      return;
    }
    w.ranks = to_world(call.comm, {peer}, use_mpi);
    if (w.ranks.empty()) return;
    w.mode = WaitMode::All;
    w.reason = fmt::format("{} {} rank {}", name, preposition, w.ranks.front());
  };
  switch (call.shape) {
    case CallShape::Send:
      from_peer(call.peer, "to");
      w.converted_send = call.converted_send;
      break;
    case CallShape::Receive:
    case CallShape::Probe: from_peer(call.peer, "from"); break;
    // Its send half may complete without the receiver's help: the receive decides.
    case CallShape::SendReceive: from_peer(call.source, "from"); break;
    case CallShape::Collective:
    case CallShape::Rooted: {
      const std::vector<int> all = members(call.comm, use_mpi);
      if (all.empty()) break;
      w.mode = WaitMode::All;
      w.collective_key = collective_key(call.function, all);
      w.ranks = everyone_else(call.comm);
      w.reason = fmt::format("{} on {}", name, comm_name(call.comm, use_mpi));
      break;
    }
    case CallShape::Requests: return request_waits(call, use_mpi);
    case CallShape::Finalize:
      w.mode = WaitMode::All;  // the analysis fills in the ranks not yet finalizing
      w.reason = "MPI_Finalize waits for the ranks not yet there";
      break;
    // Neighbours, matched messages and windows: whom they wait for is not
    // recorded, so they are never claimed to be part of a deadlock.
    case CallShape::Neighborhood:
    case CallShape::MatchedReceive:
    case CallShape::Window:
    case CallShape::None: break;
  }
  return w;
}

// A Wait on several requests waits for their peers. Sound rather than
// complete: only what must hold is claimed, so a rank is never put in a
// deadlock it could leave. Standard sends may complete without their receiver
// and count only when nothing else is waited for; wildcard receives and
// requests of unknown kind weaken the claim.
Describer::Waits Describer::request_waits(const CallRecord& call, bool use_mpi) const {
  Waits w;
  const bool wait_for_all = call.function == FunctionId::Wait || call.function == FunctionId::Waitall ||
                            call.function == FunctionId::Test || call.function == FunctionId::Testall;
  std::set<int> required, optional, wildcard;
  bool unknown = false;
  std::vector<std::string> kinds;
  for (int i = 0; i < call.request_count; ++i) {
    const MPI_Request request = request_at(call, i);
    if (request == MPI_REQUEST_NULL) continue;
    CallRecord started;
    if (!requests().find(request, started)) {
      unknown = true;
      continue;
    }
    kinds.emplace_back(function_info(started.function).name);
    w.converted_send = w.converted_send || started.converted_send;
    const auto world_peer = [&](int peer) { return to_world(started.comm, {peer}, use_mpi); };
    switch (started.shape) {
      case CallShape::Send: {
        const std::vector<int> peer = world_peer(started.peer);
        if (peer.empty()) unknown = started.peer != MPI_PROC_NULL;
        else (synchronous_send(started) ? required : optional).insert(peer.front());
        break;
      }
      case CallShape::Receive:
      case CallShape::SendReceive: {
        const int source = started.shape == CallShape::Receive ? started.peer : started.source;
        if (source == MPI_ANY_SOURCE) {
          for (int rank : members(started.comm, use_mpi))
            if (rank != world_rank_) wildcard.insert(rank);
        } else if (const std::vector<int> peer = world_peer(source); !peer.empty()) {
          required.insert(peer.front());
        } else {
          unknown = unknown || source != MPI_PROC_NULL;
        }
        break;
      }
      default: unknown = true;  // nonblocking collectives, matched receives
    }
  }
  if (unknown) return w;
  std::set<int> targets;
  if (wait_for_all) {
    targets = !required.empty() ? required : !wildcard.empty() ? wildcard : optional;
    w.mode = required.empty() && !wildcard.empty() ? WaitMode::Any : WaitMode::All;
  } else {
    targets = required;
    targets.insert(optional.begin(), optional.end());
    targets.insert(wildcard.begin(), wildcard.end());
    w.mode = WaitMode::Any;
  }
  if (targets.empty()) return Waits{};
  w.ranks.assign(targets.begin(), targets.end());
  const std::string name = function_info(call.function).name;
  w.reason = kinds.size() == 1 ? fmt::format("{} for {} with rank {}", name, kinds.front(), rank_list(w.ranks))
                               : fmt::format("{} for ranks {}", name, rank_list(w.ranks));
  return w;
}

std::vector<PendingMessage> Describer::messages(const CallRecord& call, bool use_mpi) const {
  std::vector<PendingMessage> pending;
  const auto add = [&](const CallRecord& operation) {
    const std::uint64_t key = comm_key(members(operation.comm, use_mpi));
    const auto add_one = [&](bool send, int peer, int tag) {
      if (key == 0 || peer == MPI_PROC_NULL) return;
      int world_peer = PendingMessage::kAny;
      if (peer != MPI_ANY_SOURCE) {
        const std::vector<int> world = to_world(operation.comm, {peer}, use_mpi);
        if (world.empty()) return;
        world_peer = world.front();
      }
      pending.push_back({send, world_peer, tag == MPI_ANY_TAG ? PendingMessage::kAny : tag, key});
    };
    switch (operation.shape) {
      case CallShape::Send: add_one(true, operation.peer, operation.tag); break;
      case CallShape::Receive:
      case CallShape::Probe: add_one(false, operation.peer, operation.tag); break;
      case CallShape::SendReceive:
        add_one(true, operation.peer, operation.tag);
        add_one(false, operation.source, operation.recv_tag);
        break;
      default: break;
    }
  };
  if (call.shape != CallShape::Requests) {
    add(call);
    return pending;
  }
  for (int i = 0; i < call.request_count; ++i) {
    CallRecord started;
    const MPI_Request request = request_at(call, i);
    if (request != MPI_REQUEST_NULL && requests().find(request, started)) add(started);
  }
  return pending;
}

RankSnapshot Describer::describe(const Activity::Sample& sample, const LocalStatus& status, bool use_mpi) const {
  RankSnapshot snapshot;
  snapshot.rank = world_rank_;
  snapshot.host = host_;
  snapshot.pid = pid_;
  const bool blocking = sample.in_call && function_info(sample.call.function).kind == CallKind::Blocking;
  if (status.finalizing) {
    snapshot.state = RankState::Finalizing;
  } else if (blocking) {
    snapshot.state = RankState::Blocked;
  } else if (status.polling) {
    snapshot.state = RankState::Polling;
  } else {
    return snapshot;  // running: no call to show
  }
  // Handles are sure to be valid only while their call runs: asking MPI about
  // a freed communicator would raise an error in the program.
  use_mpi = use_mpi && sample.in_call;
  snapshot.seconds = snapshot.state == RankState::Polling ? status.stalled_seconds : status.blocked_seconds;
  snapshot.function = function_info(sample.call.function).name;
  snapshot.call = call_text(sample.call, use_mpi);
  Waits w = waits(sample.call, use_mpi);
  snapshot.wait_mode = w.mode;
  snapshot.waits_for = std::move(w.ranks);
  snapshot.wait_reason = std::move(w.reason);
  snapshot.collective_key = w.collective_key;
  snapshot.converted_send = w.converted_send;
  snapshot.messages = messages(sample.call, use_mpi);
  return snapshot;
}

}  // namespace mpisentry::monitor
