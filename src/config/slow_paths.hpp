// The wrappers' one slow-path word. Every behaviour of the wrappers that is
// off by default sets its bit here when it is switched on (at MPI_Init,
// before the program's first wrapped call, or later for the error limit),
// and every wrapper tests the whole word once: zero runs the wrapper's fast
// body, the deadlock checks' minimum; anything else its full body, which
// tests each behaviour as before. A bit once set stays set.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace mpisentry::slow_paths {

enum Path : std::uint32_t {
  kDelays = 1u << 0,        // INJECT-DELAYS
  kCommLog = 1u << 1,       // COMM-LOG
  kRaces = 1u << 2,         // recording or replaying outcomes (--record, --replay, --explore)
  kChecks = 1u << 3,        // a check that is off by default is on (the checks table's defaults)
  kErrorLimit = 1u << 4,    // this rank's errors reached CHECK-MAX-ERRORS: each wrapper stops the job after its call
  kPotential = 1u << 5,     // GLOBAL:DEADLOCK:POTENTIAL: standard sends made synchronous
  kPatientWaits = 1u << 6,  // PATIENT-WAITS: blocking waits as tested nonblocking ones
};

struct Named {
  Path path;
  const char* name;  // as the VERBOSE 2 line at MPI_Init names it
};
inline constexpr Named kPaths[] = {{kDelays, "INJECT-DELAYS"},      {kCommLog, "COMM-LOG"},
                                   {kRaces, "RECORD/REPLAY"},       {kChecks, "checks off by default"},
                                   {kErrorLimit, "CHECK-MAX-ERRORS reached"}, {kPotential, "GLOBAL:DEADLOCK:POTENTIAL"},
                                   {kPatientWaits, "PATIENT-WAITS"}};

namespace detail {
inline constinit std::atomic<std::uint32_t> word{0};
}  // namespace detail

inline void take(Path path) noexcept { detail::word.fetch_or(path, std::memory_order_relaxed); }

// The paths taken, by name, comma-separated; "none" when every wrapper runs its fast body.
inline std::string taken() {
  std::string names;
  for (const Named& named : kPaths)
    if (detail::word.load(std::memory_order_relaxed) & named.path) names += (names.empty() ? "" : ", ") + std::string(named.name);
  return names.empty() ? "none" : names;
}

// One relaxed load: a plain move on x86 and Arm.
[[gnu::always_inline]] inline bool any() noexcept { return detail::word.load(std::memory_order_relaxed) != 0; }

}  // namespace mpisentry::slow_paths
