#include "checks/rma/conflicts.hpp"

#include <algorithm>

namespace mpisentry::checks {

namespace {

bool reads_only(AccessKind kind) { return kind == AccessKind::Read || kind == AccessKind::AtomicRead; }
bool atomic(AccessKind kind) { return kind == AccessKind::Atomic || kind == AccessKind::AtomicRead; }

bool kinds_conflict(const WindowAccess& a, const WindowAccess& b) {
  if (reads_only(a.kind) && reads_only(b.kind)) return false;
  if (!atomic(a.kind) || !atomic(b.kind)) return true;
  const bool same_op = a.op == b.op || a.op == kNoOp || b.op == kNoOp || a.op == 0 || b.op == 0;
  const bool same_type = a.basic_type == b.basic_type || a.basic_type == 0 || b.basic_type == 0;
  return !(same_op && same_type);
}

bool lock_epoch(EpochKind epoch) { return epoch == EpochKind::SharedLock || epoch == EpochKind::ExclusiveLock; }

// The time rule (conflicts.hpp): whether the spans of a and b overlap on
// one clock, with no third origin's exclusive lock epoch among them.
bool overlapping_in_time(const AccessOrder& a, const AccessOrder& b, int a_origin, int b_origin,
                         const std::vector<ExclusiveEpoch>& exclusive) {
  if (a.clock != b.clock || a.completed == 0 || b.completed == 0) return false;
  if (!(a.issued < b.completed && b.issued < a.completed)) return false;
  const std::int64_t from = std::min(a.issued, b.issued), to = std::max(a.completed, b.completed);
  return std::none_of(exclusive.begin(), exclusive.end(), [&](const ExclusiveEpoch& e) {
    return e.origin != a_origin && e.origin != b_origin && e.clock == a.clock && e.issued < to && e.completed > from;
  });
}

// Whether nothing orders a and b (conflicts.hpp).
bool unordered(const WindowAccess& a, const WindowAccess& b, const std::vector<ExclusiveEpoch>& exclusive) {
  const AccessOrder &x = a.order, &y = b.order;
  if (a.origin == b.origin) {
    // One process: program order and its synchronizations; and MPI orders
    // one origin's accumulates to one target (the default accumulate_ordering).
    if (atomic(a.kind) && atomic(b.kind) && !a.local && !b.local) return false;
    return x.serial == y.serial;
  }
  if (x.epoch == EpochKind::Fence && y.epoch == EpochKind::Fence) return x.epoch_number == y.epoch_number;
  if (x.epoch == EpochKind::Start && y.epoch == EpochKind::Start)
    return x.epoch_number != 0 && x.epoch_number == y.epoch_number;
  const bool both_locked = !a.local && !b.local && lock_epoch(x.epoch) && lock_epoch(y.epoch);
  if (both_locked && (x.epoch == EpochKind::ExclusiveLock || y.epoch == EpochKind::ExclusiveLock)) return false;
  return overlapping_in_time(x, y, a.origin, b.origin, exclusive);
}

}  // namespace

bool conflicting(const WindowAccess& a, const WindowAccess& b, const std::vector<ExclusiveEpoch>& exclusive) {
  if (a.begin >= b.end || b.begin >= a.end) return false;
  if (a.local && b.local) return false;
  return kinds_conflict(a, b) && unordered(a, b, exclusive);
}

std::vector<Conflict> find_conflicts(std::vector<WindowAccess> accesses, const std::vector<ExclusiveEpoch>& exclusive,
                                     std::size_t limit) {
  std::sort(accesses.begin(), accesses.end(), [](const WindowAccess& a, const WindowAccess& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.index < b.index;
  });
  std::vector<Conflict> found;
  // A sweep by start: each access meets the earlier ones that still reach it.
  std::vector<const WindowAccess*> reaching;
  for (const WindowAccess& access : accesses) {
    std::erase_if(reaching, [&](const WindowAccess* earlier) { return earlier->end <= access.begin; });
    for (const WindowAccess* earlier : reaching) {
      if (!conflicting(*earlier, access, exclusive)) continue;
      if (found.size() == limit) return found;
      found.push_back({*earlier, access});
    }
    if (access.end > access.begin) reaching.push_back(&access);
  }
  return found;
}

}  // namespace mpisentry::checks
