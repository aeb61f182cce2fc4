#include "interceptors/delay_injection.hpp"

#include <time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>

#include "config/slow_paths.hpp"

namespace mpisentry::delay_injection {
namespace {

config::DelayInjection settings;
int rank = 0;
std::atomic<std::uint64_t> threads_seen{0};  // index 0: the thread that called MPI_Init

// splitmix64: spreads seed, rank and thread index over the whole state.
std::uint64_t mix(std::uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

struct ThreadDice {
  std::uint64_t state = 0;  // xorshift64; 0 until seeded
  bool sleep_after = false;  // the current call's sleep comes after it

  void seed(std::uint64_t thread_index) {
    state = mix(settings.seed ^ mix(static_cast<std::uint64_t>(rank) ^ mix(thread_index)));
    if (state == 0) state = 1;  // xorshift's one fixed point
  }
  std::uint64_t next() {
    if (state == 0) seed(threads_seen.fetch_add(1, std::memory_order_relaxed));
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};
thread_local ThreadDice dice;

void sleep_for_delay() {
  const auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(settings.delay).count();
  timespec left{static_cast<time_t>(nanoseconds / 1'000'000'000), static_cast<long>(nanoseconds % 1'000'000'000)};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

}  // namespace

void configure(const config::DelayInjection& injection, int world_rank) {
  settings = injection;
  rank = world_rank;
  if (!injection.on) return;
  dice.seed(threads_seen.fetch_add(1, std::memory_order_relaxed));
  enabled = true;
  slow_paths::take(slow_paths::kDelays);
}

void draw_and_sleep(bool before) {
  if (!before) {
    if (dice.sleep_after) sleep_for_delay();
    dice.sleep_after = false;
    return;
  }
  // The draw's upper bits against PERCENT in units of 10^-6 %, its lowest
  // bit for the side.
  constexpr std::uint64_t kScale = 100'000'000;
  const std::uint64_t draw = dice.next();
  if ((draw >> 1) % kScale >= static_cast<std::uint64_t>(settings.percent * (kScale / 100))) return;
  if (draw & 1)
    dice.sleep_after = true;
  else
    sleep_for_delay();
}

}  // namespace mpisentry::delay_injection
