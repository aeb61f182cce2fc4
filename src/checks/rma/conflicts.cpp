#include "checks/rma/conflicts.hpp"

#include <algorithm>

namespace mpisentry::checks {

bool conflicting(const WindowAccess& a, const WindowAccess& b) {
  if (a.begin >= b.end || b.begin >= a.end) return false;
  if (a.local && b.local) return false;
  if (a.kind == AccessKind::Read && b.kind == AccessKind::Read) return false;
  return !(a.kind == AccessKind::Atomic && b.kind == AccessKind::Atomic);
}

std::vector<Conflict> find_conflicts(std::vector<WindowAccess> accesses, std::size_t limit) {
  std::sort(accesses.begin(), accesses.end(), [](const WindowAccess& a, const WindowAccess& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.index < b.index;
  });
  std::vector<Conflict> found;
  // A sweep by start: each access meets the earlier ones that still reach it.
  std::vector<const WindowAccess*> reaching;
  for (const WindowAccess& access : accesses) {
    std::erase_if(reaching, [&](const WindowAccess* earlier) { return earlier->end <= access.begin; });
    for (const WindowAccess* earlier : reaching) {
      if (!conflicting(*earlier, access)) continue;
      if (found.size() == limit) return found;
      found.push_back({*earlier, access});
    }
    if (access.end > access.begin) reaching.push_back(&access);
  }
  return found;
}

}  // namespace mpisentry::checks
