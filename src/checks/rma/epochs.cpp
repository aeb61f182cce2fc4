#include "checks/rma/epochs.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <list>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <sched.h>

#include <fmt/format.h>

#include "findings/findings.hpp"
#include "log/log.hpp"
#include "stacks/stacks.hpp"
#include "trackers/race_clock.hpp"
#include "trackers/signature.hpp"

namespace mpisentry::checks {

namespace {

bool checking = false;

// One access of an origin to a target, as the origin sends it: plain, and
// exchanged as MPI_BYTE.
struct SentAccess {
  std::int64_t disp = 0;   // target_disp, in the target's displacement units
  std::int64_t count = 0;  // target_count, for the report
  std::int64_t first = 0;  // the bytes from disp: dense_bytes() of the target datatype
  std::int64_t bytes = 0;
  std::int64_t issued = 0,
               completed = 0;  // AccessOrder's, on the origin's clock
  // Fence: the window's fence that opened the epoch; Start: how many of the
  // origin's MPI_Win_start epochs named this target, this one included.
  std::uint64_t epoch_number = 0;
  stacks::ProgramSite site;
  std::uint32_t serial = 0;
  std::uint32_t basic_type = 0;
  std::uint16_t function = 0;  // FunctionId
  AccessKind kind = AccessKind::Read;
  EpochKind epoch = EpochKind::Fence;
  std::uint8_t op = 0;
};

// What an origin sends one target at an exchange: the accesses to it since
// the last one.
struct Sent {
  std::int32_t count = 0;
  std::int32_t dropped = 0;  // past kKeptPerTarget
  std::int32_t gaps = 0;     // target datatypes with gaps: not kept
  std::uint64_t clock = 0;   // the origin's clock domain
  // Its exclusive lock epochs at the target, each apart (a span over two of
  // them would take accesses between them for ordered); past
  // kKeptExclusive, the last span grows over the rest.
  std::int32_t exclusive_count = 0;
  ExclusiveEpoch exclusive[kKeptExclusive]{};
  SentAccess accesses[kKeptPerTarget]{};
};

// A call of this rank whose origin buffer lies in its own window.
struct OwnAccess {
  WindowAccess access;
  int target = 0;
  FunctionId function = FunctionId::None;
  const void* buffer = nullptr;
  std::int64_t count = 0;
  const void* call_site = nullptr;
};
constexpr std::size_t kKeptOwn = 64;

// This rank's epoch towards one target, as an origin.
struct TargetEpoch {
  bool open = false;
  EpochKind kind = EpochKind::Fence;
  std::uint32_t serial = 0;
  std::uint64_t epoch_number = 0;
  std::int64_t opened = 0;   // an exclusive lock's return
  std::uint64_t starts = 0;  // MPI_Win_start epochs that named the target so far
};

// This rank's exposure epochs as a target since the last exchange: for
// each origin, the exposures that named it, in order.
struct Exposures {
  std::uint64_t first_number = 1;  // the number of exposures[0]
  // Each exposure's MPI_Win_wait (or successful MPI_Win_test), 0 while open.
  std::vector<std::int64_t> waited;
  std::vector<std::vector<std::size_t>> of_origin;  // indices into waited
  std::vector<std::uint64_t> starts_before;         // per origin: its start epochs matched before first_number
};

// An exchange: the accesses as the synchronization that sent them left them.
struct EpochExchange {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<Sent> sent, received;
  std::vector<OwnAccess> own;
  Exposures exposures;
  std::uint64_t fence = 0;    // the window's fence that sent it, or 0 for MPI_Win_free
  std::int64_t ended_at = 0;  // this rank's return from that call
};

struct Window {
  MPI_Comm comm = MPI_COMM_NULL;  // the checker's duplicate of the window's communicator
  MPI_Group group = MPI_GROUP_NULL;
  int me = 0;
  std::vector<int> world;  // each member's MPI_COMM_WORLD rank
  const void* created_at = nullptr;
  // This rank's memory in the window (none for a dynamic window, whose
  // displacements are addresses: unit 1).
  const char* base = nullptr;
  std::int64_t size = 0;
  std::int64_t disp_unit = 1;
  std::uint64_t fences = 0;
  bool fence_open = false;  // a fence without MPI_MODE_NOSUCCEED came last
  std::uint32_t next_serial = 0;
  std::vector<TargetEpoch> epochs;  // by target rank
  std::vector<Sent> to_target;      // since the last exchange, by target rank
  std::vector<OwnAccess> own;
  Exposures exposures;
  EpochExchange pending;       // the last fence's, until the next fence or MPI_Win_free
  std::set<std::string> said;  // what was not judged, said once
};

struct EpochsState {
  std::mutex mutex;
  std::unordered_map<MPI_Win, Window> windows;
  std::list<Window> freed;  // freed windows whose last exchange is not yet compared
};

EpochsState& epochs_state() {
  static EpochsState* const instance = new EpochsState;  // never destroyed: wrappers may run during exit
  return *instance;
}

// The domain of CLOCK_MONOTONIC: the boot (network namespaces share it).
std::uint64_t clock_domain() {
  static const std::uint64_t domain = [] {
    std::ifstream file("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(file, id);
    return id.empty() ? std::uint64_t{0} : std::uint64_t{std::hash<std::string>{}(id)} | 1;
  }();
  return domain;
}

int attribute_int(MPI_Win win, int key, int otherwise) {
  int* value = nullptr;
  int found = 0;
  return PMPI_Win_get_attr(win, key, &value, &found) == MPI_SUCCESS && found ? *value : otherwise;
}

// The accumulate operation's code (conflicts.hpp's op).
std::uint8_t op_code(const TargetAccess& access) {
  if (access.swaps) return 2;
  const MPI_Op op = access.op;
  const MPI_Op ops[] = {MPI_NO_OP, MPI_REPLACE, MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN,    MPI_LAND,
                        MPI_BAND,  MPI_LOR,     MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
  for (std::size_t i = 0; i < std::size(ops); ++i)
    if (op == ops[i]) return static_cast<std::uint8_t>(i == 0 ? kNoOp : i + 2);
  return 0;
}

// A predefined datatype's code, alike in every process (its name); 0 for a
// derived one.
std::uint32_t basic_type_code(MPI_Datatype type) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  if (PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_NAMED)
    return 0;
  char name[MPI_MAX_OBJECT_NAME];
  int length = 0;
  if (PMPI_Type_get_name(type, name, &length) != MPI_SUCCESS) return 0;
  return static_cast<std::uint32_t>(std::hash<std::string_view>{}({name, static_cast<std::size_t>(length)})) | 1;
}

void keep_own(Window& w, const TargetEpoch& epoch, int target, const BufferPart& part, AccessKind kind,
              FunctionId function, const void* call_site, std::int64_t now) {
  if (w.base == nullptr || w.own.size() == kKeptOwn || part.buffer == MPI_IN_PLACE || part.buffer == nullptr) return;
  const std::optional<DenseBytes> dense = dense_bytes(part.count, part.type);
  if (!dense) return;
  const std::int64_t begin = static_cast<const char*>(part.buffer) + dense->first - w.base;
  if (begin < 0 || begin + dense->bytes > w.size) return;
  const WindowAccess access{begin,
                            begin + dense->bytes,
                            kind,
                            /*local=*/true,
                            w.me,
                            w.own.size(),
                            0,
                            0,
                            {epoch.kind, epoch.serial, epoch.epoch_number, now, 0, clock_domain()}};
  w.own.push_back({access, target, function, part.buffer, part.count, call_site});
}

// A synchronization at `now` completed this rank's accesses to `target`
// (kEveryTarget: to all).
void stamp_completed(Window& w, int target, std::int64_t now) {
  for (std::size_t t = 0; t < w.to_target.size(); ++t) {
    if (target >= 0 && static_cast<std::size_t>(target) != t) continue;
    Sent& to = w.to_target[t];
    for (int i = 0; i < to.count; ++i)
      if (to.accesses[i].completed == 0) to.accesses[i].completed = now;
  }
  for (OwnAccess& own : w.own)
    if (own.access.order.completed == 0 && (target < 0 || own.target == target)) own.access.order.completed = now;
}

void open_epoch(Window& w, std::size_t target, EpochKind kind, std::int64_t now) {
  TargetEpoch& e = w.epochs[target];
  e.open = true;
  e.kind = kind;
  e.serial = ++w.next_serial;
  e.epoch_number = kind == EpochKind::Start ? ++e.starts : kind == EpochKind::Fence ? w.fences : 0;
  e.opened = now;
}

void close_epoch(Window& w, std::size_t target, std::int64_t now) {
  TargetEpoch& e = w.epochs[target];
  if (e.open && e.kind == EpochKind::ExclusiveLock) {
    Sent& to = w.to_target[target];
    if (to.exclusive_count < kKeptExclusive)
      to.exclusive[to.exclusive_count++] = {w.me, e.opened, now, clock_domain()};
    else
      to.exclusive[kKeptExclusive - 1].completed = now;
  }
  e.open = false;
  if (w.fence_open) open_epoch(w, target, EpochKind::Fence, now);
}

// The members of `group` as ranks of the window's group.
std::vector<int> window_ranks(const Window& w, MPI_Group group) {
  int size = 0;
  if (group == MPI_GROUP_NULL || PMPI_Group_size(group, &size) != MPI_SUCCESS || size <= 0) return {};
  std::vector<int> members(static_cast<std::size_t>(size)), ranks(members.size());
  for (int i = 0; i < size; ++i) members[static_cast<std::size_t>(i)] = i;
  if (PMPI_Group_translate_ranks(group, size, members.data(), w.group, ranks.data()) != MPI_SUCCESS) return {};
  std::erase_if(ranks, [&](int r) { return r < 0 || static_cast<std::size_t>(r) >= w.epochs.size(); });
  return ranks;
}

std::string place(const void* call_site) {
  const std::vector<Frame> frames = call_site_stack(call_site);
  for (const Frame& frame : frames)
    if (!frame.file.empty()) return fmt::format(" ({}:{})", frame.file, frame.line);
  return "";
}

// Says once per window and reason what GLOBAL:RMA:CONFLICT did not judge.
void not_judged(Window& w, const std::string& what) {
  if (!w.said.insert(what).second) return;
  log::warn("GLOBAL:RMA:CONFLICT did not judge {} at this rank's window made by the call{}: {}", what,
            place(w.created_at), "they are neither reported nor taken as correct");
}

const char* verb(AccessKind kind) {
  switch (kind) {
    case AccessKind::Write: return "writes";
    case AccessKind::Read: return "reads";
    case AccessKind::Atomic: return "updates";
    case AccessKind::AtomicRead: return "reads (atomically)";
  }
  return "accesses";
}

const char* epoch_name(EpochKind epoch) {
  switch (epoch) {
    case EpochKind::Fence: return "fence";
    case EpochKind::SharedLock: return "shared lock";
    case EpochKind::ExclusiveLock: return "exclusive lock";
    case EpochKind::Start: return "MPI_Win_start";
  }
  return "other";
}

// "a shared lock epoch", "an exclusive lock epoch".
std::string an_epoch(EpochKind epoch) {
  const bool vowel = epoch == EpochKind::ExclusiveLock || epoch == EpochKind::Start;
  return fmt::format("{} {} epoch", vowel ? "an" : "a", epoch_name(epoch));
}

// One access of a conflict, described for the report.
struct Described {
  WindowAccess access;
  FunctionId function = FunctionId::None;
  std::string call;
  const void* call_site = nullptr;  // in this process: the origin's, when it runs the same program file
};

// Why nothing ordered the two, in words.
std::string why_unordered(const WindowAccess& a, const WindowAccess& b, std::uint64_t fence) {
  if (a.origin == b.origin) return "both in one epoch of one process, with no synchronization of the target between";
  if (a.order.epoch == EpochKind::Fence && b.order.epoch == EpochKind::Fence)
    return fmt::format("both in one fence epoch (between the window's fences {} and {})", a.order.epoch_number,
                       fence ? fence : a.order.epoch_number + 1);
  if (a.order.epoch == EpochKind::Start && b.order.epoch == EpochKind::Start)
    return fmt::format("both in the target's exposure epoch {} (one MPI_Win_post ... MPI_Win_wait)",
                       a.order.epoch_number);
  const std::string epochs = a.order.epoch == b.order.epoch
                                 ? fmt::format("both in {} epochs", epoch_name(a.order.epoch))
                                 : fmt::format("one in {}, the other in {}", an_epoch(a.order.epoch),
                                               an_epoch(b.order.epoch));
  return epochs + ", and each was called before the other was completed, with no exclusive lock between them";
}

void report_conflict(const Window& w, const EpochExchange& e, const Described& a, const Described& b) {
  const std::int64_t low = std::max(a.access.begin, b.access.begin);
  const std::int64_t high = std::min(a.access.end, b.access.end);
  const int target = world_rank();
  const auto who = [&](const Described& d) {
    return d.access.local ? fmt::format("rank {}'s own ", target) : fmt::format("rank {}'s ", w.world[d.access.origin]);
  };
  report::Finding finding;
  finding.check = report::Check::RmaConflict;
  finding.summary = {
      fmt::format("{}{} {} bytes {} to {} of rank {}'s window memory, which {}{} {}, and nothing orders the two: {}.",
                  who(a), function_info(a.function).name, verb(a.access.kind), low, high - 1, target, who(b),
                  function_info(b.function).name, verb(b.access.kind), why_unordered(a.access, b.access, e.fence)),
      "MPI leaves undefined the bytes, or the data read, where two accesses to a window that no synchronization orders "
      "touch the same bytes, unless both read them or both are accumulates with the same operation (or MPI_NO_OP) on "
      "the same basic datatype (MPI 4.1, section 12.7)."};
  for (const Described* d : {&a, &b}) {
    const int rank = d->access.local ? target : w.world[d->access.origin];
    finding.parties.push_back(
        {{rank},
         fmt::format("{} bytes {} to {}", verb(d->access.kind), d->access.begin, d->access.end - 1),
         d->call,
         d->call_site ? call_site_stack(d->call_site) : std::vector<Frame>{}});
  }
  finding.key = fmt::format("rma conflict {} {} {} {}", function_info(a.function).name, a.access.origin,
                            function_info(b.function).name, b.access.origin);
  report(std::move(finding));
}

// A Start access's exposure epoch at this target, and when it ended (0: not known).
std::pair<std::uint64_t, std::int64_t> exposure_of(const Exposures& x, std::size_t origin, std::uint64_t start) {
  if (origin >= x.of_origin.size() || start <= x.starts_before[origin]) return {0, 0};
  const std::uint64_t i = start - x.starts_before[origin] - 1;
  if (i >= x.of_origin[origin].size()) return {0, 0};
  const std::size_t exposure = x.of_origin[origin][i];
  return {x.first_number + exposure, x.waited[exposure]};
}

// The exchange is complete: compares what reached this rank, its target.
void compare(Window& w, const EpochExchange& e) {
  std::vector<Described> described;
  std::vector<WindowAccess> accesses;
  std::vector<ExclusiveEpoch> exclusive;
  const std::uint64_t my_clock = clock_domain();
  bool other_clock = false;
  for (std::size_t origin = 0; origin < e.received.size(); ++origin) {
    const Sent& from = e.received[origin];
    if (from.dropped > 0)
      not_judged(w, fmt::format("the accesses past the first {} of one origin to this rank between two of the window's "
                                "fences, or its creation and free",
                                kKeptPerTarget));
    if (from.gaps > 0) not_judged(w, "accesses whose target datatype has gaps");
    for (int i = 0; i < std::clamp(from.exclusive_count, 0, kKeptExclusive); ++i) {
      ExclusiveEpoch span = from.exclusive[i];
      span.origin = static_cast<int>(origin);
      exclusive.push_back(span);
    }
    for (int i = 0; i < std::clamp(from.count, 0, kKeptPerTarget); ++i) {
      const SentAccess& sent = from.accesses[i];
      const std::int64_t begin = sent.disp * w.disp_unit + sent.first;
      WindowAccess access{begin,
                          begin + sent.bytes,
                          sent.kind,
                          false,
                          static_cast<int>(origin),
                          described.size(),
                          sent.op,
                          sent.basic_type,
                          {sent.epoch, sent.serial, sent.epoch_number, sent.issued, sent.completed, from.clock}};
      // Fence and MPI_Win_start epochs' accesses are complete at the target
      // only when its own synchronization returns: their span ends there
      // (or earlier), on this rank's clock.
      const bool same_clock = from.clock == my_clock;
      if (sent.epoch == EpochKind::Start) {
        const auto [number, waited] = exposure_of(e.exposures, origin, sent.epoch_number);
        if (number == 0) not_judged(w, "MPI_Win_start epochs whose exposure epoch at this rank is not known");
        access.order.epoch_number = number;
        access.order.completed =
            same_clock && waited != 0 ? std::min(sent.completed ? sent.completed : waited, waited) : 0;
      } else if (sent.epoch == EpochKind::Fence) {
        access.order.completed =
            same_clock && e.fence != 0 ? std::min(sent.completed ? sent.completed : e.ended_at, e.ended_at) : 0;
      }
      other_clock |= !same_clock && (sent.epoch == EpochKind::SharedLock || sent.epoch == EpochKind::ExclusiveLock);
      const auto function = static_cast<FunctionId>(sent.function);
      described.push_back({access, function,
                           fmt::format("{}(target_rank={}, target_disp={}, target_count={})",
                                       function_info(function).name, w.me, sent.disp, sent.count),
                           stacks::local_call_site(sent.site)});
      accesses.push_back(access);
    }
  }
  if (other_clock) not_judged(w, "lock epochs of origins on other hosts, which only time could order");
  for (const OwnAccess& own : e.own) {
    WindowAccess access = own.access;
    access.index = described.size();
    described.push_back({access, own.function,
                         fmt::format("{}(origin_addr={}, origin_count={}) in its own window",
                                     function_info(own.function).name, own.buffer, own.count),
                         own.call_site});
    accesses.push_back(access);
  }
  constexpr std::size_t kReportedPerExchange = 4;
  for (const Conflict& c : find_conflicts(std::move(accesses), exclusive, kReportedPerExchange))
    report_conflict(w, e, described[c.first.index], described[c.second.index]);
}

// Waits for an exchange, outside the lock, and compares it.
void finish_exchange(Window& w, EpochExchange& e) {
  if (e.request == MPI_REQUEST_NULL) return;
  if (PMPI_Wait(&e.request, MPI_STATUS_IGNORE) == MPI_SUCCESS) compare(w, e);
  e.request = MPI_REQUEST_NULL;
}

// Under the lock: what the window's accesses since the last exchange are,
// taken out for an exchange sent at `now` by `fence` (0: MPI_Win_free).
EpochExchange take_exchange(Window& w, std::uint64_t fence, std::int64_t now) {
  EpochExchange next;
  next.sent = w.to_target;
  next.own = std::move(w.own);
  w.own.clear();
  next.fence = fence;
  next.ended_at = now;
  next.exposures = w.exposures;
  Exposures& x = w.exposures;
  for (std::size_t o = 0; o < x.of_origin.size(); ++o) {
    x.starts_before[o] += x.of_origin[o].size();
    x.of_origin[o].clear();
  }
  x.first_number += x.waited.size();
  x.waited.clear();
  for (Sent& to : w.to_target) to = Sent{.clock = clock_domain()};
  return next;
}

// Starts an exchange on the window's duplicate communicator.
void send_exchange(const Window& w, EpochExchange& e) {
  e.received.resize(e.sent.size());
  if (PMPI_Ialltoall(e.sent.data(), sizeof(Sent), MPI_BYTE, e.received.data(), sizeof(Sent), MPI_BYTE, w.comm,
                     &e.request) != MPI_SUCCESS)
    e.request = MPI_REQUEST_NULL;
}

// Compares the freed windows' exchanges that completed (without waiting),
// outside the lock; with `drain`, waits for each within kDrainLimit.
void compare_freed(bool drain) {
  EpochsState& s = epochs_state();
  std::list<Window> done;
  {
    const std::lock_guard guard(s.mutex);
    done.splice(done.begin(), s.freed);
  }
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  for (auto it = done.begin(); it != done.end();) {
    EpochExchange& e = it->pending;
    int complete = 0;
    while (e.request != MPI_REQUEST_NULL && PMPI_Test(&e.request, &complete, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
           !complete && drain && std::chrono::steady_clock::now() < limit)
      sched_yield();
    if (e.request != MPI_REQUEST_NULL && !complete) {
      ++it;
      continue;
    }
    if (complete) compare(*it, e);
    PMPI_Comm_free(&it->comm);
    PMPI_Group_free(&it->group);
    it = done.erase(it);
  }
  if (drain) {
    if (!done.empty())
      log::debug("{} RMA exchanges did not complete within {} s: not compared", done.size(),
                 std::chrono::seconds(kDrainLimit).count());
    for (Window& w : done) (void)new Window(std::move(w));  // MPI may still write into their buffers: left allocated
    return;
  }
  const std::lock_guard guard(s.mutex);
  s.freed.splice(s.freed.end(), done);
}

}  // namespace

void start_rma_epochs(bool on) { checking = on; }

void epoch_window_created(MPI_Comm comm, MPI_Win win, const void* call_site) {
  if (!checking || win == MPI_WIN_NULL) return;
  compare_freed(false);
  Window w;
  if (PMPI_Comm_dup(comm, &w.comm) != MPI_SUCCESS) return;
  PMPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);
  w.created_at = call_site;
  int size = 0;
  PMPI_Comm_rank(w.comm, &w.me);
  PMPI_Comm_size(w.comm, &size);
  MPI_Group world = MPI_GROUP_NULL;
  PMPI_Comm_group(w.comm, &w.group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> members(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) members[static_cast<std::size_t>(i)] = i;
  w.world.resize(members.size());
  PMPI_Group_translate_ranks(w.group, size, members.data(), world, w.world.data());
  PMPI_Group_free(&world);
  if (attribute_int(win, MPI_WIN_CREATE_FLAVOR, MPI_WIN_FLAVOR_DYNAMIC) != MPI_WIN_FLAVOR_DYNAMIC) {
    void* base = nullptr;
    MPI_Aint* bytes = nullptr;
    int found = 0;
    if (PMPI_Win_get_attr(win, MPI_WIN_BASE, &base, &found) == MPI_SUCCESS && found) w.base = static_cast<char*>(base);
    if (PMPI_Win_get_attr(win, MPI_WIN_SIZE, &bytes, &found) == MPI_SUCCESS && found) w.size = *bytes;
    w.disp_unit = attribute_int(win, MPI_WIN_DISP_UNIT, 1);
  }
  w.to_target.assign(members.size(), Sent{.clock = clock_domain()});
  w.epochs.resize(members.size());
  w.exposures.of_origin.resize(members.size());
  w.exposures.starts_before.resize(members.size());
  EpochsState& s = epochs_state();
  const std::lock_guard guard(s.mutex);
  s.windows[win] = std::move(w);
}

void epoch_access(FunctionId function, const BufferPart& read, const BufferPart& written, const TargetAccess& access,
                  int target, MPI_Win win, const void* call_site) {
  if (!checking) return;
  const std::optional<DenseBytes> dense = dense_bytes(access.count, access.type);
  const std::uint8_t op = access.kind == AccessKind::Atomic ? op_code(access) : 0;
  const AccessKind kind = op == kNoOp ? AccessKind::AtomicRead : access.kind;
  const std::uint32_t basic_type = op != 0 ? basic_type_code(access.type) : 0;
  const std::int64_t now = race_clock();
  EpochsState& s = epochs_state();
  const std::lock_guard guard(s.mutex);
  const auto found = s.windows.find(win);
  if (found == s.windows.end() || target < 0 || static_cast<std::size_t>(target) >= found->second.epochs.size()) return;
  Window& w = found->second;
  const TargetEpoch& epoch = w.epochs[static_cast<std::size_t>(target)];
  if (!epoch.open) return;  // outside every epoch: erroneous, and MPI's to report
  Sent& to = w.to_target[static_cast<std::size_t>(target)];
  if (!dense) {
    ++to.gaps;
  } else if (to.count == kKeptPerTarget) {
    ++to.dropped;
  } else {
    to.accesses[to.count++] = {access.disp,
                               access.count,
                               dense->first,
                               dense->bytes,
                               now,
                               0,
                               epoch.epoch_number,
                               stacks::program_site(call_site),
                               epoch.serial,
                               basic_type,
                               static_cast<std::uint16_t>(function),
                               kind,
                               epoch.kind,
                               op};
  }
  keep_own(w, epoch, target, read, AccessKind::Read, function, call_site, now);
  keep_own(w, epoch, target, written, AccessKind::Write, function, call_site, now);
}

void epoch_synchronized(MPI_Win win, RmaSync sync, int target, int lock_type, MPI_Group group) {
  if (!checking) return;
  const std::int64_t now = race_clock();
  EpochsState& s = epochs_state();
  const std::lock_guard guard(s.mutex);
  const auto found = s.windows.find(win);
  if (found == s.windows.end()) return;
  Window& w = found->second;
  const std::size_t members = w.epochs.size();
  const bool one = target >= 0 && static_cast<std::size_t>(target) < members;
  switch (sync) {
    case RmaSync::Lock:
      if (one)
        open_epoch(w, static_cast<std::size_t>(target),
                   lock_type == MPI_LOCK_EXCLUSIVE ? EpochKind::ExclusiveLock : EpochKind::SharedLock, now);
      break;
    case RmaSync::LockAll:
      for (std::size_t t = 0; t < members; ++t) open_epoch(w, t, EpochKind::SharedLock, now);
      break;
    case RmaSync::Unlock:
      if (!one) break;
      stamp_completed(w, target, now);
      close_epoch(w, static_cast<std::size_t>(target), now);
      break;
    case RmaSync::UnlockAll:
      stamp_completed(w, kEveryTarget, now);
      for (std::size_t t = 0; t < members; ++t) close_epoch(w, t, now);
      break;
    case RmaSync::Flush:
    case RmaSync::FlushAll:
      // Completed at their targets: later accesses are ordered after them.
      stamp_completed(w, sync == RmaSync::Flush ? target : kEveryTarget, now);
      for (std::size_t t = 0; t < members; ++t)
        if (w.epochs[t].open && (sync == RmaSync::FlushAll || (one && t == static_cast<std::size_t>(target))))
          w.epochs[t].serial = ++w.next_serial;
      break;
    case RmaSync::Start:
      for (const int t : window_ranks(w, group)) open_epoch(w, static_cast<std::size_t>(t), EpochKind::Start, now);
      break;
    case RmaSync::Complete:
      for (std::size_t t = 0; t < members; ++t)
        if (w.epochs[t].open && w.epochs[t].kind == EpochKind::Start) {
          stamp_completed(w, static_cast<int>(t), now);
          close_epoch(w, t, now);
        }
      break;
    case RmaSync::Post: {
      Exposures& x = w.exposures;
      x.waited.push_back(0);
      for (const int origin : window_ranks(w, group))
        x.of_origin[static_cast<std::size_t>(origin)].push_back(x.waited.size() - 1);
      break;
    }
    case RmaSync::Wait:
      for (std::int64_t& waited : w.exposures.waited)
        if (waited == 0) waited = now;
      break;
  }
}

void epoch_fenced(MPI_Win win, int assertion) {
  if (!checking) return;
  compare_freed(false);
  const std::int64_t now = race_clock();
  EpochsState& s = epochs_state();
  EpochExchange last;
  Window* w = nullptr;
  {
    const std::lock_guard guard(s.mutex);
    const auto found = s.windows.find(win);
    if (found == s.windows.end()) return;
    w = &found->second;
    last = std::move(w->pending);
    w->pending = {};
  }
  // The program calls a window's fences one at a time: no other thread
  // changes or frees this window's entry until this call returns.
  finish_exchange(*w, last);
  const std::lock_guard guard(s.mutex);
  ++w->fences;
  for (std::size_t t = 0; t < w->epochs.size(); ++t)
    if (w->epochs[t].open && w->epochs[t].kind == EpochKind::Fence) stamp_completed(*w, static_cast<int>(t), now);
  // MPI_MODE_NOPRECEDE is given by every member or none (MPI 4.1, 12.5.5):
  // every member exchanges, or none.
  if ((assertion & MPI_MODE_NOPRECEDE) == 0) {
    w->pending = take_exchange(*w, w->fences, now);
    send_exchange(*w, w->pending);
  }
  w->fence_open = (assertion & MPI_MODE_NOSUCCEED) == 0;
  for (std::size_t t = 0; t < w->epochs.size(); ++t) {
    TargetEpoch& e = w->epochs[t];
    if (e.open && e.kind != EpochKind::Fence) continue;  // a lock or start epoch goes on
    e.open = false;
    if (w->fence_open) open_epoch(*w, t, EpochKind::Fence, now);
  }
}

void finish_rma_epochs() {
  if (!checking) return;
  EpochsState& s = epochs_state();
  {
    const std::lock_guard guard(s.mutex);  // the program's threads are done with MPI
    for (auto& [win, w] : s.windows) {
      s.freed.push_back(std::move(w));
    }
    s.windows.clear();
  }
  compare_freed(true);
}

void epoch_window_freed(MPI_Win win) {
  if (!checking) return;
  compare_freed(false);
  const std::int64_t now = race_clock();
  EpochsState& s = epochs_state();
  Window w;
  {
    const std::lock_guard guard(s.mutex);
    const auto found = s.windows.find(win);
    if (found == s.windows.end()) return;
    w = std::move(found->second);
    s.windows.erase(found);
  }
  finish_exchange(w, w.pending);
  stamp_completed(w, kEveryTarget, now);
  w.pending = take_exchange(w, 0, now);
  send_exchange(w, w.pending);
  const std::lock_guard guard(s.mutex);
  s.freed.push_back(std::move(w));
}

}  // namespace mpisentry::checks
