#include "comm_log/comm_log.hpp"

#include <filesystem>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "config/slow_paths.hpp"
#include "races/races.hpp"
#include "recording/comm_log.hpp"
#include "recording/rank_file.hpp"
#include "records/communicators.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::comm_log {

namespace detail {
bool on = false;
}

using recording::Op;
using recording::OpKind;

namespace {

// A request whose wait returns at once: MPI_Imrecv's (its MPI_Mprobe took
// the message, logged as the receive), one with MPI_PROC_NULL, and an
// inactive persistent one.
constexpr std::uint64_t kNeedsNoWait = UINT64_MAX;

struct Started {
  std::uint64_t number = recording::kUnknownRequest;
  Op persistent;  // a persistent request's operation, logged at each start (kind Opaque: none)
};

// Guards everything below: taken by the program's threads at their logged
// calls and by the writers.
std::mutex mutex;
recording::RankFile file;
std::string pending;  // lines not yet written
std::uint64_t requests_started = 0;
std::unordered_map<MPI_Request, Started> requests;
std::set<std::uint64_t> comms_declared;
std::unordered_map<const void*, int> sites;
std::vector<std::pair<int, const void*>> sites_unnamed;

// Under the lock: the call site's number, named at the next flush.
int site_of(const void* call_site) {
  const auto [found, added] = sites.try_emplace(call_site, static_cast<int>(sites.size()) + 1);
  if (added) sites_unnamed.emplace_back(found->second, call_site);
  return found->second;
}

// Under the lock: the communicator's id, declared by a comm line before its
// first use.
std::uint64_t comm_of(MPI_Comm comm, std::uint64_t known_id) {
  const std::uint64_t id = known_id != 0 ? known_id : comms::id_of(comm);
  if (id == 0 || id == recording::kWorldComm || id == recording::kSelfComm || comms_declared.contains(id)) return id;
  comms_declared.insert(id);
  if (const auto info = comms::info(id)) pending += recording::comm_text(id, info->local, info->inter);
  return id;
}

int any_or(int value, int any) { return value == any ? recording::kAnyPeer : value; }

// The logged operation of a call that may wait, or an Opaque one with an
// empty function when the call needs no line.
Op op_of(const CallRecord& r) {
  Op op;
  op.function = function_info(r.function).name;
  switch (r.shape) {
    case CallShape::Send:
      if (r.peer == MPI_PROC_NULL) break;
      op.kind = OpKind::Send;
      op.peer = r.peer;
      op.tag = r.tag;
      break;
    case CallShape::Receive:
    case CallShape::Probe:
      if (r.peer == MPI_PROC_NULL) break;
      // MPI_Mprobe takes the message it finds, as a receive does.
      op.kind = r.shape == CallShape::Probe && (function_info(r.function).arguments & kMessageArgument) == 0
                    ? OpKind::Probe
                    : OpKind::Receive;
      op.peer = any_or(r.peer, MPI_ANY_SOURCE);
      op.tag = any_or(r.tag, MPI_ANY_TAG);
      break;
    case CallShape::SendReceive:
      if (r.peer == MPI_PROC_NULL && r.source == MPI_PROC_NULL) break;
      op.kind = r.peer == MPI_PROC_NULL ? OpKind::Receive : r.source == MPI_PROC_NULL ? OpKind::Send : OpKind::SendReceive;
      op.peer = r.peer == MPI_PROC_NULL ? any_or(r.source, MPI_ANY_SOURCE) : r.peer;
      op.tag = r.peer == MPI_PROC_NULL ? any_or(r.recv_tag, MPI_ANY_TAG) : r.tag;
      op.source = any_or(r.source, MPI_ANY_SOURCE);
      op.receive_tag = any_or(r.recv_tag, MPI_ANY_TAG);
      break;
    case CallShape::Collective:
    case CallShape::Rooted: op.kind = OpKind::Collective; break;
    case CallShape::Requests:
      op.kind = function_info(r.function).completes == Completes::Any ||
                        function_info(r.function).completes == Completes::Some
                    ? OpKind::WaitAny
                    : OpKind::WaitAll;
      break;
    case CallShape::Neighborhood:
    case CallShape::Window:
    case CallShape::FileCollective:
    case CallShape::Connection:
    case CallShape::Opaque: op.kind = OpKind::Opaque; return op;
    // Needs no line: MPI_Mrecv's message was taken by its MPI_Mprobe; an
    // independent file access waits for no other rank; MPI_Finalize is "end".
    case CallShape::MatchedReceive:
    case CallShape::FileAccess:
    case CallShape::Finalize:
    case CallShape::None: break;
  }
  if (op.kind == OpKind::Opaque) op.function.clear();
  return op;
}

// Under the lock: the op with its communicator and site, and a wait's requests.
std::string line_of(Op op, const CallRecord& r, int count, const MPI_Request* requests_waited, const void* call_site) {
  op.site = site_of(call_site);
  if (op.kind != OpKind::WaitAll && op.kind != OpKind::WaitAny && op.kind != OpKind::Opaque)
    op.comm = comm_of(r.comm, r.comm_id);
  for (int i = 0; i < count; ++i) {
    if (requests_waited[i] == MPI_REQUEST_NULL) continue;
    const auto found = requests.find(requests_waited[i]);
    const std::uint64_t number = found == requests.end() ? recording::kUnknownRequest : found->second.number;
    if (number != kNeedsNoWait) op.requests.push_back(number);
  }
  return recording::op_text(op);
}

}  // namespace

std::optional<std::string> start(const std::string& dir, int world_rank, int world_size, bool multiple_threads) {
  if (auto problem = file.create(dir, fmt::format("rank-{}.log", world_rank), "the communication log")) return problem;
  std::error_code no_directory;  // then the line names none, and analyze runs the program where it is
  const std::string directory = std::filesystem::current_path(no_directory).string();
  file.append(recording::log_header_text(world_rank, world_size, races::command_line(), directory, multiple_threads));
  detail::on = true;
  slow_paths::take(slow_paths::kCommLog);
  return std::nullopt;
}

void call(const CallRecord& record, int count, const MPI_Request* requests_waited, const void* call_site) {
  const Op op = op_of(record);
  if (op.function.empty()) return;
  const std::lock_guard lock(mutex);
  if (on()) pending += line_of(op, record, count, requests_waited, call_site);
}

void started(MPI_Request request, const CallRecord& record, const void* call_site) {
  Op op;
  op.function = function_info(record.function).name;
  op.peer = record.peer;
  op.tag = record.tag;
  if (record.shape == CallShape::Send && record.peer != MPI_PROC_NULL) {
    op.kind = OpKind::StartSend;
  } else if (record.shape == CallShape::Receive && record.peer != MPI_PROC_NULL) {
    op.kind = OpKind::StartReceive;
    op.peer = any_or(record.peer, MPI_ANY_SOURCE);
    op.tag = any_or(record.tag, MPI_ANY_TAG);
  } else if (record.shape == CallShape::Collective || record.shape == CallShape::Rooted) {
    op.kind = OpKind::StartCollective;
  }
  const std::lock_guard lock(mutex);
  if (!on()) return;
  Started& entry = requests[request];
  entry = {};
  // A send or receive with MPI_PROC_NULL completes at once, as does
  // MPI_Imrecv (its MPI_Mprobe took the message); other starts (the
  // nonblocking MPI_Isendrecv, I/O, RMA) are not modeled: their waits list "?".
  if ((record.shape == CallShape::Send || record.shape == CallShape::Receive) && record.peer == MPI_PROC_NULL)
    entry.number = kNeedsNoWait;
  if (record.shape == CallShape::MatchedReceive) entry.number = kNeedsNoWait;
  if (op.kind == OpKind::Opaque) return;
  op.site = site_of(call_site);
  op.comm = comm_of(record.comm, record.comm_id);
  if (function_info(record.function).form == Form::Persistent) {
    entry.number = kNeedsNoWait;  // inactive until started: a wait returns at once
    entry.persistent = std::move(op);
    return;
  }
  entry.number = op.request = ++requests_started;
  pending += recording::op_text(op);
}

void restarted(int count, const MPI_Request* started_requests, const void* call_site) {
  const std::lock_guard lock(mutex);
  if (!on()) return;
  for (int i = 0; i < count; ++i) {
    const auto found = requests.find(started_requests[i]);
    if (found == requests.end() || found->second.persistent.kind == OpKind::Opaque) continue;
    Op op = found->second.persistent;
    op.site = site_of(call_site);
    found->second.number = op.request = ++requests_started;
    pending += recording::op_text(op);
  }
}

Poll::Poll(const CallRecord& record, int count, const MPI_Request* requests_tested, const void* call_site)
    : on_(on()) {
  if (!on_) return;
  Op op = op_of(record);
  if (function_info(record.function).arguments & kMessageArgument) {  // MPI_Improbe
    op.kind = OpKind::Opaque;
    op.function = function_info(record.function).name;
  } else if (op.kind != OpKind::WaitAll && op.kind != OpKind::WaitAny) {
    return;  // MPI_Iprobe: the receive that follows takes the message
  }
  const std::lock_guard lock(mutex);
  line_ = line_of(op, record, count, requests_tested, call_site);
}

void Poll::done(bool completed) const {
  if (!on_ || !completed || line_.empty()) return;
  const std::lock_guard lock(mutex);
  if (on()) pending += line_;
}

void flush(bool symbolize) {
  std::unique_lock lock(mutex, std::defer_lock);
  if (symbolize) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return;  // a crashed thread may hold it
  }
  if (!file.is_open()) return;
  if (symbolize && !sites_unnamed.empty()) {
    std::vector<std::pair<int, const void*>> unnamed;
    unnamed.swap(sites_unnamed);
    lock.unlock();  // symbolizing is slow the first time: the program's threads go on
    std::string named;
    for (const auto& [site, call_site] : unnamed) named += recording::site_text(site, stacks::place_text(call_site));
    lock.lock();
    pending.insert(0, named);
  }
  file.append(pending);
  pending.clear();
}

void finish() {
  flush(true);
  const std::lock_guard lock(mutex);
  detail::on = false;
  file.append(recording::kLogEnd);
  file.close();
}

}  // namespace mpisentry::comm_log
