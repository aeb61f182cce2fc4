#include "checks/rma/epochs.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <sched.h>

#include <fmt/format.h>

#include "findings/findings.hpp"
#include "trackers/signature.hpp"
#include "log/log.hpp"
#include "records/windows.hpp"

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
  std::uint16_t function = 0;  // FunctionId
  AccessKind kind = AccessKind::Read;
};

// What an origin sends one target at a fence: the epoch's accesses to it.
struct Sent {
  std::int32_t count = 0;
  SentAccess accesses[kKeptPerTarget];
};

// A call of this rank whose origin buffer lies in its own window.
struct OwnAccess {
  WindowAccess access;
  FunctionId function = FunctionId::None;
  const void* buffer = nullptr;
  std::int64_t count = 0;
  const void* call_site = nullptr;
};
constexpr std::size_t kKeptOwn = 64;

// An epoch's accesses, as the fence that ended it sent them.
struct EpochExchange {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<Sent> sent, received;
  std::vector<OwnAccess> own;
  std::uint64_t ended_by = 0;  // the window's fence that ended the epoch, counted from 1
};

struct Window {
  MPI_Comm comm = MPI_COMM_NULL;  // the checker's duplicate of the window's communicator
  int me = 0;
  std::vector<int> world;  // each member's MPI_COMM_WORLD rank
  // This rank's memory in the window (none for a dynamic window, whose
  // displacements are addresses: unit 1).
  const char* base = nullptr;
  std::int64_t size = 0;
  std::int64_t disp_unit = 1;
  bool open = false;  // a fence without MPI_MODE_NOSUCCEED came last
  std::uint64_t fences = 0;
  std::vector<Sent> to_target;  // this epoch's, by target rank
  std::vector<OwnAccess> own;
  EpochExchange pending;  // the last epoch's, until the next fence or MPI_Win_free
};

struct EpochsState {
  std::mutex mutex;
  std::unordered_map<MPI_Win, Window> windows;
};

EpochsState& epochs_state() {
  static EpochsState* const instance = new EpochsState;  // never destroyed: wrappers may run during exit
  return *instance;
}

int attribute_int(MPI_Win win, int key, int otherwise) {
  int* value = nullptr;
  int found = 0;
  return PMPI_Win_get_attr(win, key, &value, &found) == MPI_SUCCESS && found ? *value : otherwise;
}

void keep_own(Window& w, const BufferPart& part, AccessKind kind, FunctionId function, const void* call_site) {
  if (w.base == nullptr || w.own.size() == kKeptOwn || part.buffer == MPI_IN_PLACE) return;
  const std::optional<DenseBytes> dense = dense_bytes(part.count, part.type);
  if (!dense) return;
  const std::int64_t begin = static_cast<const char*>(part.buffer) + dense->first - w.base;
  if (begin < 0 || begin + dense->bytes > w.size) return;
  w.own.push_back({{begin, begin + dense->bytes, kind, /*local=*/true, w.me, w.own.size()},
                   function,
                   part.buffer,
                   part.count,
                   call_site});
}

const char* verb(AccessKind kind) {
  switch (kind) {
    case AccessKind::Write: return "writes";
    case AccessKind::Read: return "reads";
    case AccessKind::Atomic: return "updates";
  }
  return "accesses";
}

// One access of a conflict, described for the report.
struct Described {
  WindowAccess access;
  FunctionId function = FunctionId::None;
  std::string call;
  const void* call_site = nullptr;  // this rank's calls only
};

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
      fmt::format("In one fence epoch of a window (between its fences {} and {}), {}{} {} bytes {} to {} of rank {}'s "
                  "window memory, which {}{} {}.",
                  e.ended_by - 1, e.ended_by, who(a), function_info(a.function).name, verb(a.access.kind), low,
                  high - 1, target, who(b), function_info(b.function).name, verb(b.access.kind)),
      "MPI orders no two accesses of one fence epoch: where two touch the same bytes of a window, unless both read "
      "them or both are accumulates, the bytes or the data read are undefined (MPI 4.1, section 12.7)."};
  for (const Described* d : {&a, &b}) {
    const int rank = d->access.local ? target : w.world[d->access.origin];
    finding.parties.push_back({{rank},
                               fmt::format("{} bytes {} to {}", verb(d->access.kind), d->access.begin,
                                           d->access.end - 1),
                               d->call,
                               d->call_site ? call_site_stack(d->call_site) : std::vector<Frame>{}});
  }
  finding.key = fmt::format("rma conflict {} {} {} {}", function_info(a.function).name, a.access.origin,
                            function_info(b.function).name, b.access.origin);
  report(std::move(finding));
}

// The exchange is complete: compares what reached this rank, its target.
void compare(const Window& w, const EpochExchange& e) {
  std::vector<Described> described;
  std::vector<WindowAccess> accesses;
  for (std::size_t origin = 0; origin < e.received.size(); ++origin) {
    const Sent& from = e.received[origin];
    for (int i = 0; i < std::clamp(from.count, 0, kKeptPerTarget); ++i) {
      const SentAccess& sent = from.accesses[i];
      const std::int64_t begin = sent.disp * w.disp_unit + sent.first;
      const WindowAccess access{begin, begin + sent.bytes, sent.kind, false, static_cast<int>(origin),
                                described.size()};
      const auto function = static_cast<FunctionId>(sent.function);
      described.push_back({access, function,
                           fmt::format("{}(target_rank={}, target_disp={}, target_count={})",
                                       function_info(function).name, w.me, sent.disp, sent.count),
                           nullptr});
      accesses.push_back(access);
    }
  }
  for (const OwnAccess& own : e.own) {
    WindowAccess access = own.access;
    access.index = described.size();
    described.push_back({access, own.function,
                         fmt::format("{}(origin_addr={}, origin_count={}) in its own window",
                                     function_info(own.function).name, own.buffer, own.count),
                         own.call_site});
    accesses.push_back(access);
  }
  constexpr std::size_t kReportedPerEpoch = 4;
  for (const Conflict& c : find_conflicts(std::move(accesses), kReportedPerEpoch))
    report_conflict(w, e, described[c.first.index], described[c.second.index]);
}

// Waits for the last epoch's exchange, outside the lock, and compares it.
void finish_exchange(const Window& w, EpochExchange& e) {
  if (e.request == MPI_REQUEST_NULL) return;
  if (PMPI_Wait(&e.request, MPI_STATUS_IGNORE) == MPI_SUCCESS) compare(w, e);
  e.request = MPI_REQUEST_NULL;
}

}  // namespace

void start_rma_epochs(bool on) { checking = on; }

void epoch_window_created(MPI_Comm comm, MPI_Win win) {
  if (!checking || win == MPI_WIN_NULL) return;
  Window w;
  if (PMPI_Comm_dup(comm, &w.comm) != MPI_SUCCESS) return;
  PMPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);
  int size = 0;
  PMPI_Comm_rank(w.comm, &w.me);
  PMPI_Comm_size(w.comm, &size);
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  PMPI_Comm_group(w.comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> members(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) members[static_cast<std::size_t>(i)] = i;
  w.world.resize(members.size());
  PMPI_Group_translate_ranks(group, size, members.data(), world, w.world.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  if (attribute_int(win, MPI_WIN_CREATE_FLAVOR, MPI_WIN_FLAVOR_DYNAMIC) != MPI_WIN_FLAVOR_DYNAMIC) {
    void* base = nullptr;
    MPI_Aint* bytes = nullptr;
    int found = 0;
    if (PMPI_Win_get_attr(win, MPI_WIN_BASE, &base, &found) == MPI_SUCCESS && found) w.base = static_cast<char*>(base);
    if (PMPI_Win_get_attr(win, MPI_WIN_SIZE, &bytes, &found) == MPI_SUCCESS && found) w.size = *bytes;
    w.disp_unit = attribute_int(win, MPI_WIN_DISP_UNIT, 1);
  }
  w.to_target.resize(members.size());
  EpochsState& s = epochs_state();
  const std::lock_guard guard(s.mutex);
  s.windows[win] = std::move(w);
}

void epoch_access(FunctionId function, const BufferPart& read, const BufferPart& written, const TargetAccess& access,
                  int target, MPI_Win win, const void* call_site) {
  if (!checking || windows::in_lock_or_start_epoch(win)) return;
  const std::optional<DenseBytes> dense = dense_bytes(access.count, access.type);
  EpochsState& s = epochs_state();
  const std::lock_guard guard(s.mutex);
  const auto found = s.windows.find(win);
  if (found == s.windows.end() || !found->second.open) return;
  Window& w = found->second;
  if (dense && target >= 0 && static_cast<std::size_t>(target) < w.to_target.size()) {
    Sent& to = w.to_target[static_cast<std::size_t>(target)];
    if (to.count < kKeptPerTarget)
      to.accesses[to.count++] = {access.disp, access.count, dense->first, dense->bytes,
                                 static_cast<std::uint16_t>(function), access.kind};
  }
  keep_own(w, read, AccessKind::Read, function, call_site);
  keep_own(w, written, AccessKind::Write, function, call_site);
}

void epoch_fenced(MPI_Win win, int assertion) {
  if (!checking) return;
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
  ++w->fences;
  // MPI_MODE_NOPRECEDE is given by every member or none (MPI 4.1, 12.5.5),
  // and the first fence ends no epoch: every member exchanges, or none.
  if (w->fences > 1 && (assertion & MPI_MODE_NOPRECEDE) == 0) {
    EpochExchange next;
    {
      const std::lock_guard guard(s.mutex);
      next.sent = w->to_target;
      next.own = std::move(w->own);
    }
    next.received.resize(next.sent.size());
    next.ended_by = w->fences;
    if (PMPI_Ialltoall(next.sent.data(), sizeof(Sent), MPI_BYTE, next.received.data(), sizeof(Sent), MPI_BYTE,
                       w->comm, &next.request) != MPI_SUCCESS)
      next.request = MPI_REQUEST_NULL;
    const std::lock_guard guard(s.mutex);
    w->pending = std::move(next);
  }
  // The next epoch starts empty.
  const std::lock_guard guard(s.mutex);
  w->open = (assertion & MPI_MODE_NOSUCCEED) == 0;
  for (Sent& to : w->to_target) to.count = 0;
  w->own.clear();
}

void finish_rma_epochs() {
  if (!checking) return;
  EpochsState& s = epochs_state();
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  const std::lock_guard guard(s.mutex);  // the program's threads are done with MPI
  for (auto& [win, w] : s.windows) {
    EpochExchange& e = w.pending;
    int done = 0;
    while (e.request != MPI_REQUEST_NULL && PMPI_Test(&e.request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
           !done && std::chrono::steady_clock::now() < limit)
      sched_yield();
    if (done) compare(w, e);
    if (!done && e.request != MPI_REQUEST_NULL) {
      log::debug("an RMA epoch's exchange did not complete within {} s: not compared",
                 std::chrono::seconds(kDrainLimit).count());
      (void)new EpochExchange(std::move(e));  // MPI may still write into its buffers: they are left allocated
    }
    e = {};
  }
}

void epoch_window_freed(MPI_Win win) {
  if (!checking) return;
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
  PMPI_Comm_free(&w.comm);
}

}  // namespace mpisentry::checks
