#include "checks/rma/rma.hpp"

#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trackers/owned_buffers.hpp"
#include "trackers/thread_lock.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_rma = false;
}

namespace {

struct Operation {
  MPI_Win win = MPI_WIN_NULL;
  int target = 0;
  TakenBuffer read_buffer, written_buffer;  // LOCAL:MEMORY:OVERLAP's
  FunctionId function = FunctionId::None;
  BufferChecksum read;  // taken when the modification check is on; its buffer and count name it in a report
  const void* call_site = nullptr;
};

struct RmaState {
  bool modification_check = false;
  bool overlap_check = false;
  SpinMutex mutex;
  std::vector<Operation> pending;
};

RmaState& rma_state() {
  static RmaState* const instance = new RmaState;  // never destroyed: wrappers may run during exit
  return *instance;
}

// The operations on `win` (and `target`, unless kEveryTarget), taken out of
// the pending ones.
std::vector<Operation> take(MPI_Win win, int target) {
  RmaState& s = rma_state();
  std::vector<Operation> taken;
  const std::lock_guard guard(s.mutex);
  const auto done = [&](const Operation& op) {
    return op.win == win && (target == kEveryTarget || op.target == target);
  };
  for (const Operation& op : s.pending)
    if (done(op)) taken.push_back(op);
  std::erase_if(s.pending, done);
  return taken;
}

// Its buffers are MPI's no more.
void release_buffers(Operation& op) {
  buffer_released(op.read_buffer);
  buffer_released(op.written_buffer);
}

}  // namespace

void start_rma(const StartContext&) {
  RmaState& s = rma_state();
  s.modification_check = on(report::Check::MemoryIllegalModification);
  s.overlap_check = on(report::Check::MemoryOverlap);
  const bool conflict_check = on(report::Check::RmaConflict);
  start_rma_epochs(conflict_check);
  detail::watching_rma = s.modification_check || s.overlap_check || conflict_check;
}

void rma_window_created(MPI_Comm comm, MPI_Win win, const void* call_site) {
  if (watching_rma()) epoch_window_created(comm, win, call_site);
}

void rma_request_issued(FunctionId function, const TargetAccess& access, int target, MPI_Win win,
                        const void* call_site) {
  if (watching_rma() && target != MPI_PROC_NULL) epoch_access(function, {}, {}, access, target, win, call_site);
}

void rma_synchronized(MPI_Win win, RmaSync sync, int target, int lock_type, MPI_Group group) {
  if (watching_rma()) epoch_synchronized(win, sync, target, lock_type, group);
}

int rma_issued(int result, FunctionId function, const BufferPart& read, const BufferPart& written,
               const TargetAccess& access, int target, MPI_Win win, const void* call_site) {
  if (!watching_rma() || result != MPI_SUCCESS || target == MPI_PROC_NULL) return result;
  epoch_access(function, read, written, access, target, win, call_site);
  RmaState& s = rma_state();
  if (!s.modification_check && !s.overlap_check) return result;
  Operation op{win, target, {}, {}, function, {}, call_site};
  if (s.modification_check) sum_into(read, op.read);
  // Taken before the operation is pending: another thread's synchronization
  // may complete it as soon as it is.
  if (s.overlap_check) {
    buffer_taken(op.read_buffer, read.buffer, read.count, read.type, BufferUse::Read, function, call_site);
    buffer_taken(op.written_buffer, written.buffer, written.count, written.type, BufferUse::Write, function, call_site);
  }
  const std::lock_guard guard(s.mutex);
  s.pending.push_back(op);
  return result;
}

void rma_completed(MPI_Win win, int target) {
  if (!watching_rma()) return;
  for (Operation& op : take(win, target)) {
    release_buffers(op);
    if (!op.read.taken || !buffer_changed(op.read)) continue;
    const char* name = function_info(op.function).name;
    report(modified_buffer_finding("origin buffer", name, name,
                                   fmt::format("{}(origin_addr={}, origin_count={}, target_rank={})", name,
                                               op.read.buffer, op.read.count, op.target),
                                   op.call_site),
           /*own_stack=*/true);
  }
}

void rma_fenced(MPI_Win win, int assertion) {
  rma_completed(win, kEveryTarget);
  if (watching_rma()) epoch_fenced(win, assertion);
}

void rma_window_freed(MPI_Win win) {
  if (!watching_rma()) return;
  for (Operation& op : take(win, kEveryTarget)) release_buffers(op);
  epoch_window_freed(win);
}

}  // namespace mpisentry::checks
