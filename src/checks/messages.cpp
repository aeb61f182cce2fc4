#include "checks/messages.hpp"

#include <link.h>
#include <sched.h>
#include <time.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "checks/findings.hpp"
#include "checks/requests.hpp"
#include "log/log.hpp"
#include "checks/signature.hpp"
#include "stacks/stacks.hpp"
#include "records/communicators.hpp"

namespace mpisentry::checks {

namespace detail {
bool shadowing = false;
}

namespace {

// What a shadow message carries: the sender's signature, call and call site.
struct Payload {
  std::int64_t bytes = 0;
  std::int64_t elements = 0;
  std::int64_t count = 0;
  std::uint64_t hash = 0;
  std::uint64_t call_site = 0;  // offset in the program's executable + 1; 0: elsewhere
  std::uint8_t untyped = 0;
  std::uint8_t known = 0;
  std::uint8_t multiple_threads = 0;  // the sender runs at MPI_THREAD_MULTIPLE
  char function[30] = {};
  char type[64] = {};
};

struct Shadow {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request starting = MPI_REQUEST_NULL;  // the MPI_Comm_idup making `dup`, until usable_dup waits for it
  std::vector<int> peers;              // world rank of each destination rank (the remote group's for inter)
  std::vector<std::int64_t> sent_to;   // shadow messages sent, by destination rank
  std::int64_t received = 0;           // shadow messages taken here
  std::string name;                    // the program's communicator, for reports
  int rank = 0;                        // this rank in it
  // Receives freed while active, as (source, tag), wildcards kept: the
  // messages they took have shadows that nobody takes.
  std::vector<std::pair<int, int>> abandoned;
};

struct InFlight {
  std::uint64_t number;
  MPI_Request request;
  std::unique_ptr<Payload> payload;
  MPI_Comm comm;
  int dest;
};

struct PendingMessage {
  int source = 0;  // world rank
  int tag = 0;
  int dest = 0;  // this rank in the message's communicator
  std::string comm;
  Payload payload;
};

struct State {
  bool datatype_check = false;
  bool pending_check = false;
  bool multiple_threads = false;
  std::atomic<bool> count_lost{false};  // lost_count_of_messages()
  int max_pending = 20;
  std::uintptr_t exe_base = 0, exe_low = 0, exe_high = 0;  // the executable's load bias and mapped range
  std::mutex mutex;  // guards the rest
  std::unordered_map<MPI_Comm, Shadow> shadows;
  std::unordered_map<MPI_Message, MPI_Comm> probed;
  std::deque<InFlight> in_flight;
  std::uint64_t next_number = 1;
};

State& state() {
  static State* const instance = new State;  // never destroyed: wrappers may run during exit
  return *instance;
}

int locate_executable(dl_phdr_info* info, size_t, void* data) {
  auto& s = *static_cast<State*>(data);
  s.exe_base = info->dlpi_addr;
  s.exe_low = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    s.exe_low = std::min<std::uintptr_t>(s.exe_low, info->dlpi_addr + segment.p_vaddr);
    s.exe_high = std::max<std::uintptr_t>(s.exe_high, info->dlpi_addr + segment.p_vaddr + segment.p_memsz);
  }
  return 1;  // the first object is the executable
}

std::uint64_t call_site_of(const void* pc) {
  const State& s = state();
  const auto address = reinterpret_cast<std::uintptr_t>(pc);
  return address >= s.exe_low && address < s.exe_high ? address - s.exe_base + 1 : 0;
}

// The sender's call site, symbolized in this process (the same executable).
std::vector<Frame> call_site_frames(std::uint64_t call_site) {
  if (call_site == 0) return {};
  static std::mutex mutex;
  static stacks::Symbolizer symbolizer;
  static const std::string executable = [] {
    char path[PATH_MAX];
    return realpath("/proc/self/exe", path) ? std::string(path) : std::string();
  }();
  const std::lock_guard lock(mutex);
  return symbolizer.symbolize_every_frame({stacks::FrameAddress{executable, call_site - 1, true}});
}

// The shadow's duplicate, usable: every member started its MPI_Comm_idup in
// the program's call, so this waits only for their progress.
MPI_Comm usable_dup(Shadow& shadow) {
  if (shadow.starting != MPI_REQUEST_NULL) {
    PMPI_Wait(&shadow.starting, MPI_STATUS_IGNORE);
    PMPI_Comm_set_errhandler(shadow.dup, MPI_ERRORS_RETURN);
  }
  return shadow.dup;
}

// Under the lock: completed shadow sends leave the front of the queue.
void reap_completed() {
  State& s = state();
  while (!s.in_flight.empty()) {
    int done = 0;
    PMPI_Test(&s.in_flight.front().request, &done, MPI_STATUS_IGNORE);
    if (!done) return;
    s.in_flight.pop_front();
  }
}

// Every own shadow send completed, as far as the receivers drained them.
void complete_in_flight() {
  State& s = state();
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  const std::lock_guard lock(s.mutex);
  for (InFlight& sent : s.in_flight) {
    int done = 0;
    while (PMPI_Test(&sent.request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done &&
           std::chrono::steady_clock::now() < limit)
      sched_yield();
    if (!done) {
      PMPI_Cancel(&sent.request);
      PMPI_Request_free(&sent.request);
    }
  }
  s.in_flight.clear();
}

std::string sent_call_text(const Payload& p, int dest_rank, int tag, const std::string& comm) {
  return fmt::format("{}(count={}, datatype={}, dest={}, tag={}, comm={})", p.function, p.count, p.type, dest_rank,
                     tag, comm);
}

Signature signature_of(const Payload& p) {
  Signature sig;
  sig.bytes = p.bytes;
  sig.hash = p.hash;
  sig.elements = p.elements;
  sig.untyped = p.untyped != 0;
  sig.known = p.known != 0;
  return sig;
}

// Whether `shadow` had a receive freed while active that may have taken a
// message from comm rank `source` with `tag`; if so, that receive is used up.
bool taken_by_abandoned(Shadow& shadow, int source, int tag) {
  for (auto receive = shadow.abandoned.begin(); receive != shadow.abandoned.end(); ++receive)
    if ((receive->first == MPI_ANY_SOURCE || receive->first == source) &&
        (receive->second == MPI_ANY_TAG || receive->second == tag)) {
      shadow.abandoned.erase(receive);
      return true;
    }
  return false;
}

// Takes `count` shadow messages sent to this rank on any of `from`, as they
// come; `arrived` counts them. Those that a receive freed while active may
// have taken are left out of the result.
std::vector<PendingMessage> take_pending(std::int64_t count, const std::vector<Shadow*>& from, std::int64_t& arrived) {
  std::vector<PendingMessage> taken;
  arrived = 0;
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  while (arrived < count && std::chrono::steady_clock::now() < limit) {
    bool found = false;
    for (Shadow* shadow : from) {
      int flag = 0;
      MPI_Status status;
      if (PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, usable_dup(*shadow), &flag, &status) != MPI_SUCCESS || !flag)
        continue;
      PendingMessage pending;
      PMPI_Recv(&pending.payload, sizeof(Payload), MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, shadow->dup,
                MPI_STATUS_IGNORE);
      ++arrived;
      found = true;
      if (taken_by_abandoned(*shadow, status.MPI_SOURCE, status.MPI_TAG)) continue;
      pending.source = world_rank_of(shadow->peers, status.MPI_SOURCE);
      pending.tag = status.MPI_TAG;
      pending.dest = shadow->rank;
      pending.comm = shadow->name;
      taken.push_back(pending);
    }
    if (!found) {
      const timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
    }
  }
  return taken;
}

// One report of the messages sent to this rank on `where` and never
// received; `missing` of them did not even arrive.
void report_pending(const std::vector<PendingMessage>& pending, std::int64_t missing, const std::string& where,
                    const char* when) {
  const State& s = state();
  const std::int64_t count = static_cast<std::int64_t>(pending.size()) + missing;
  if (!s.pending_check || count == 0) return;
  if (s.count_lost.load(std::memory_order_relaxed)) {
    log::debug("{} message(s) on {} look pending at {}, but a receive failed earlier: not reported", count, where,
               when);
    return;
  }
  report::Finding finding;
  finding.check = report::Check::MessagePending;
  const int me = world_rank();
  finding.summary.push_back(fmt::format("{} message{} sent to rank {} on {} and never received before {}:", count,
                                        count == 1 ? " was" : "s were", me, where, when));
  if (missing > 0)
    finding.summary.push_back(fmt::format("({} of them did not arrive within {} s)", missing,
                                          std::chrono::seconds(kDrainLimit).count()));
  finding.parties.push_back({{me}, fmt::format("calls {}", when), "", {}});
  std::size_t listed = 0;
  for (const PendingMessage& message : pending) {
    if (listed == static_cast<std::size_t>(s.max_pending)) {
      finding.summary.push_back(fmt::format("... and {} more, not listed (CHECK-MAX-PENDING {})",
                                            pending.size() - listed, s.max_pending));
      break;
    }
    ++listed;
    const Payload& p = message.payload;
    finding.summary.push_back(fmt::format("message {}: from rank {}, tag {}, {}, {} B ({} x {}), sent by {}", listed,
                                          message.source, message.tag, message.comm, p.bytes, p.count, p.type,
                                          p.function));
    finding.parties.push_back({{message.source},
                               fmt::format("sent message {}", listed),
                               sent_call_text(p, message.dest, message.tag, message.comm),
                               call_site_frames(p.call_site)});
  }
  finding.key = fmt::format("pending {} {}", where, pending.empty() ? 0 : pending.front().payload.call_site);
  report(std::move(finding), /*own_stack=*/true);
}

// The shadow of `comm`, where this process has `rank`, without its duplicate.
Shadow shadow_of(MPI_Comm comm, int rank) {
  Shadow shadow;
  shadow.rank = rank;
  if (const auto info = comms::info(comms::id_of(comm))) {
    shadow.peers = info->peers();
    shadow.name = info->name;
  } else {
    shadow.name = "a communicator";
  }
  shadow.sent_to.assign(shadow.peers.size(), 0);
  return shadow;
}

Shadow make_shadow(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  Shadow shadow = shadow_of(comm, rank);
  PMPI_Comm_dup(comm, &shadow.dup);
  PMPI_Comm_set_errhandler(shadow.dup, MPI_ERRORS_RETURN);
  return shadow;
}

}  // namespace

std::vector<Frame> call_site_stack(const void* call_site) { return call_site_frames(call_site_of(call_site)); }

void start_messages(bool datatype_check, bool pending_check, int max_pending, bool multiple_threads) {
  State& s = state();
  s.multiple_threads = multiple_threads;
  s.datatype_check = datatype_check;
  s.pending_check = pending_check;
  s.max_pending = max_pending;
  dl_iterate_phdr(locate_executable, &s);
  if (!datatype_check && !pending_check) return;
  s.shadows[MPI_COMM_WORLD] = make_shadow(MPI_COMM_WORLD);
  s.shadows[MPI_COMM_SELF] = make_shadow(MPI_COMM_SELF);
  detail::shadowing = true;
}

void communicator_created(MPI_Comm created) {
  if (created == MPI_COMM_NULL) return;
  Shadow shadow = make_shadow(created);
  State& s = state();
  const std::lock_guard lock(s.mutex);
  s.shadows[created] = std::move(shadow);
}

void communicator_dup_started(MPI_Comm parent, MPI_Comm created) {
  int rank = 0;
  PMPI_Comm_rank(parent, &rank);
  Shadow shadow = shadow_of(created, rank);
  State& s = state();
  const std::lock_guard lock(s.mutex);
  Shadow& kept = s.shadows[created] = std::move(shadow);
  // Into the kept shadow, whose address lasts: MPI may write the handle
  // until the request completes.
  PMPI_Comm_idup(parent, &kept.dup, &kept.starting);
}

std::uint64_t send_shadow(const char* function, std::int64_t count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm, const void* call_site) {
  if (dest == MPI_PROC_NULL) return 0;
  auto payload = std::make_unique<Payload>();
  const Signature sig = signature_of(type, count);
  payload->bytes = sig.bytes;
  payload->elements = sig.elements;
  payload->count = count;
  payload->hash = sig.hash;
  payload->untyped = sig.untyped;
  payload->known = sig.known;
  payload->multiple_threads = state().multiple_threads;
  payload->call_site = call_site_of(call_site);
  std::strncpy(payload->function, function, sizeof(payload->function) - 1);
  const std::string type_text = datatype_text(type);
  std::strncpy(payload->type, type_text.c_str(), sizeof(payload->type) - 1);
  State& s = state();
  const std::lock_guard lock(s.mutex);
  const auto found = s.shadows.find(comm);
  if (found == s.shadows.end()) return 0;
  Shadow& shadow = found->second;
  if (dest < 0 || dest >= static_cast<int>(shadow.sent_to.size())) return 0;
  MPI_Request request = MPI_REQUEST_NULL;
  if (PMPI_Isend(payload.get(), sizeof(Payload), MPI_BYTE, dest, tag, usable_dup(shadow), &request) != MPI_SUCCESS)
    return 0;
  ++shadow.sent_to[static_cast<std::size_t>(dest)];
  const std::uint64_t number = s.next_number++;
  reap_completed();
  s.in_flight.push_back({number, request, std::move(payload), comm, dest});
  return number;
}

void cancel_shadow(std::uint64_t number) {
  if (number == 0) return;
  State& s = state();
  const std::lock_guard lock(s.mutex);
  for (auto sent = s.in_flight.begin(); sent != s.in_flight.end(); ++sent) {
    if (sent->number != number) continue;
    PMPI_Cancel(&sent->request);
    MPI_Status status;
    PMPI_Wait(&sent->request, &status);
    int cancelled = 0;
    PMPI_Test_cancelled(&status, &cancelled);
    if (cancelled)
      if (const auto found = s.shadows.find(sent->comm); found != s.shadows.end())
        --found->second.sent_to[static_cast<std::size_t>(sent->dest)];
    s.in_flight.erase(sent);
    return;
  }
}

void received(const Receive& receive, const MPI_Status& status) {
  if (status.MPI_SOURCE == MPI_PROC_NULL || status.MPI_SOURCE < 0) return;
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  if (cancelled) return;
  State& s = state();
  MPI_Comm dup = MPI_COMM_NULL;
  int sender = status.MPI_SOURCE;
  std::string comm_name;
  {
    const std::lock_guard lock(s.mutex);
    const auto found = s.shadows.find(receive.comm);
    if (found == s.shadows.end()) return;
    ++found->second.received;
    dup = usable_dup(found->second);
    sender = world_rank_of(found->second.peers, status.MPI_SOURCE);
    if (s.datatype_check) comm_name = found->second.name;
  }
  Payload sent;
  if (PMPI_Recv(&sent, sizeof(Payload), MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, dup, MPI_STATUS_IGNORE) !=
      MPI_SUCCESS)
    return;
  if (!s.datatype_check || !receive.known_type || s.multiple_threads || sent.multiple_threads) return;
  if (!receive.in_order || (!receive.posted_at && !receive_in_order(receive.comm, status.MPI_SOURCE, status.MPI_TAG)))
    return;
  int received_bytes = 0;
  PMPI_Get_count(&status, MPI_BYTE, &received_bytes);
  if (received_bytes == MPI_UNDEFINED || received_bytes != sent.bytes) return;  // truncation: MPI's own error
  const Signature mine = signature_of(receive.type, receive.count, received_bytes);
  if (!mine.differs_from(signature_of(sent))) return;
  const std::string receive_type = datatype_text(receive.type);
  MPI_Count type_size = 0;
  PMPI_Type_size_x(receive.type, &type_size);
  const std::string receive_amount = amount_text(receive.type, receive.count);
  report::Finding finding;
  finding.check = report::Check::MessageDatatype;
  finding.summary = {
      fmt::format("The type signature of a message from rank {} to rank {} (tag {}, {}) differs between send and "
                  "receive:",
                  sender, world_rank(), status.MPI_TAG, comm_name),
      fmt::format("sent as {} x {} ({} B), received as {}.", sent.count, sent.type, sent.bytes,
                  received_bytes == type_size * receive.count
                      ? receive_amount
                      : fmt::format("the first {} B of {}", received_bytes, receive_amount))};
  const std::string receive_call =
      fmt::format("{}(count={}, datatype={}, source={}, tag={}, comm={})", receive.function, receive.count,
                  receive_type, status.MPI_SOURCE, status.MPI_TAG, comm_name);
  // The first party gets this rank's stack: where the receive completed.
  if (receive.posted_at) {
    finding.parties.push_back({{world_rank()}, "completed the receive", "", {}});
    finding.parties.push_back(
        {{world_rank()}, "posted it", receive_call, call_site_stack(receive.posted_at)});
  } else {
    finding.parties.push_back({{world_rank()}, "received it", receive_call, {}});
  }
  finding.parties.push_back({{sender}, "sent it", sent_call_text(sent, world_rank(), status.MPI_TAG, comm_name),
                             call_site_frames(sent.call_site)});
  finding.key = fmt::format("datatype {} {} {} {} {}", receive.function, receive_type, sent.type, sent.call_site,
                            sent.count);
  report(std::move(finding), /*own_stack=*/true);
}

void probed(MPI_Message message, MPI_Comm comm) {
  if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return;
  State& s = state();
  const std::lock_guard lock(s.mutex);
  s.probed[message] = comm;
}

void lost_count_of_messages() { state().count_lost.store(true, std::memory_order_relaxed); }

void receive_abandoned(MPI_Comm comm, int source, int tag) {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  if (const auto found = s.shadows.find(comm); found != s.shadows.end())
    found->second.abandoned.emplace_back(source, tag);
}

MPI_Comm take_probed(MPI_Message message) {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  const auto found = s.probed.find(message);
  if (found == s.probed.end()) return MPI_COMM_NULL;
  const MPI_Comm comm = found->second;
  s.probed.erase(found);
  return comm;
}

void communicator_freeing(MPI_Comm comm) {
  State& s = state();
  Shadow shadow;
  {
    const std::lock_guard lock(s.mutex);
    const auto found = s.shadows.find(comm);
    if (found == s.shadows.end()) return;
    usable_dup(found->second);  // before the move: MPI may write the handle until then
    shadow = std::move(found->second);
    s.shadows.erase(found);
  }
  // What each peer sent here: an all-to-all of counts, which means the same
  // on an inter-communicator (whose groups may differ in size) as on an
  // intra-communicator.
  std::vector<std::int64_t> sent_here(shadow.sent_to.size(), 0);
  if (!shadow.sent_to.empty())
    PMPI_Alltoall(shadow.sent_to.data(), 1, MPI_INT64_T, sent_here.data(), 1, MPI_INT64_T, shadow.dup);
  std::int64_t expected = -shadow.received;
  for (const std::int64_t count : sent_here) expected += count;
  std::int64_t arrived = 0;
  const std::vector<PendingMessage> pending = take_pending(expected, {&shadow}, arrived);
  report_pending(pending, expected - arrived, shadow.name, "MPI_Comm_free");
  PMPI_Comm_free(&shadow.dup);
}

void finish_messages() {
  if (!shadowing()) return;
  State& s = state();
  int world_size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::vector<std::int64_t> sent_to(static_cast<std::size_t>(world_size), 0);
  std::int64_t received = 0;
  std::vector<Shadow*> live;
  MPI_Comm world_dup = MPI_COMM_NULL;
  {
    const std::lock_guard lock(s.mutex);
    for (auto& [comm, shadow] : s.shadows) {
      for (std::size_t i = 0; i < shadow.sent_to.size(); ++i)
        sent_to[static_cast<std::size_t>(shadow.peers[i])] += shadow.sent_to[i];
      received += shadow.received;
      live.push_back(&shadow);
    }
    world_dup = s.shadows.at(MPI_COMM_WORLD).dup;
  }
  std::int64_t expected = 0;
  PMPI_Reduce_scatter_block(sent_to.data(), &expected, 1, MPI_INT64_T, MPI_SUM, world_dup);
  expected -= received;
  std::int64_t arrived = 0;
  const std::vector<PendingMessage> pending = take_pending(expected, live, arrived);
  report_pending(pending, expected - arrived, "its communicators", "MPI_Finalize");
  complete_in_flight();
  detail::shadowing = false;
  // The shadows go as the program's communicators do: MPICH keeps a
  // communicator's memory past MPI_Finalize unless it was freed. A duplicate
  // still being made by MPI_Comm_idup is left, as waiting for it could hang.
  const std::lock_guard lock(s.mutex);
  for (auto& [comm, shadow] : s.shadows)
    if (shadow.starting == MPI_REQUEST_NULL && shadow.dup != MPI_COMM_NULL) PMPI_Comm_free(&shadow.dup);
  s.shadows.clear();
}

}  // namespace mpisentry::checks
