// GLOBAL:RMA:CONFLICT's rule (pure, unit-tested): within one fence epoch
// MPI leaves undefined the outcome of two accesses to the same bytes of a
// window unless both only read them or both are accumulate-family
// operations (atomic per element). The accesses are the one-sided
// operations that target the window, from any origin and also two from
// one origin (nothing orders them before the fence), and the target's own
// one-sided calls whose origin buffers lie in its window. Two such own
// calls are LOCAL:MEMORY:OVERLAP's, not compared here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpisentry::checks {

enum class AccessKind : std::uint8_t { Read, Write, Atomic };

// One access to a window's bytes [begin, end), as the target sees them:
// offsets from its window's base (addresses for a dynamic window).
struct WindowAccess {
  std::int64_t begin = 0, end = 0;
  AccessKind kind = AccessKind::Read;
  bool local = false;     // the target's own call; `origin` is then the target
  int origin = 0;         // the origin's rank in the window's group
  std::size_t index = 0;  // where the caller keeps what else it knows of it
};

bool conflicting(const WindowAccess& a, const WindowAccess& b);

// Pairs of conflicting accesses among `accesses`, the one that begins
// first (then the lower index) first; at most `limit`.
struct Conflict {
  WindowAccess first, second;
};
std::vector<Conflict> find_conflicts(std::vector<WindowAccess> accesses, std::size_t limit);

}  // namespace mpisentry::checks
