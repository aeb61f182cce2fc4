// GLOBAL:MSG:RACE's clock: CLOCK_MONOTONIC, which orders events as
// causality does within one kernel (the rule is in checks/message_races).
#pragma once

#include <time.h>

#include <cstdint>

namespace mpisentry::checks {

// Now, in ns.
inline std::int64_t race_clock() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

}  // namespace mpisentry::checks
