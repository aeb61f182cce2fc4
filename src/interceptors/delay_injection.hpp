// INJECT-DELAYS, for testing the checker: sleeps before or after a seeded
// random choice of MPI calls, so that tests meet the orderings and the
// timings that a loaded machine would give only now and then. Off unless the
// key is set; then each wrapper's cost is one predictable branch.
#pragma once

#include "config/settings.hpp"

namespace mpisentry::delay_injection {

// Set once, by configure(), before the program's first wrapped call.
inline bool enabled = false;

// From MPI_Init, on the main thread. The choices of a rank's main thread
// follow from SEED and the rank alone: the same on every run.
void configure(const config::DelayInjection& injection, int world_rank);

// The draw for one call: with before == true, it may sleep now or leave the
// sleep for the same call's around_call(false).
void draw_and_sleep(bool before);

// In every wrapper that may wait or starts a request: before the call is
// recorded (before == true) and after it is left (false), so that the sleep
// lies outside MPI.
inline void around_call(bool before) {
  if (enabled) [[unlikely]]
    draw_and_sleep(before);
}

}  // namespace mpisentry::delay_injection
