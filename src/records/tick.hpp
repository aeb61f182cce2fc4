// A count that the monitor thread advances every DEADLOCK-CHECK-INTERVAL:
// how the program's threads tell, with one load and no clock on the hot
// path, that time has passed (the message checks send the records they hold
// at the next tick). It stays 0 when the monitor does not run.
#pragma once

#include <atomic>
#include <cstdint>

namespace mpisentry::tick {

inline std::atomic<std::uint32_t> count{0};

// The monitor thread, once per tick.
inline void advance() noexcept { count.fetch_add(1, std::memory_order_relaxed); }

inline std::uint32_t now() noexcept { return count.load(std::memory_order_relaxed); }

}  // namespace mpisentry::tick
