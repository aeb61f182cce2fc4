#include "records/message_tallies.hpp"

#include <algorithm>
#include <thread>
#include <utility>

namespace mpisentry::tallies {
namespace {

// Communicators that carried a message: far more than a program makes with
// point-to-point traffic on each; past it, the account is incomplete.
constexpr std::size_t kMostCommunicators = 4096;

std::atomic<CommTallies*> made[kMostCommunicators];
std::atomic<std::size_t> made_count{0};
std::atomic<bool> full{false};
bool concurrent_writers = false;

}  // namespace

CommTallies::CommTallies(std::uint64_t comm_id, std::vector<int> peers_world)
    : comm_id_(comm_id), peers_world_(std::move(peers_world)), peers_(peers_world_.size()) {}

void CommTallies::add(int peer, int tag, Direction Peer::*direction, int step) noexcept {
  if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size()) return;
  Peer& entry = peers_[static_cast<std::size_t>(peer)];
  std::uint64_t sequence = entry.sequence.load(std::memory_order_relaxed);
  if (concurrent_writers) {
    // Another thread counting on this peer holds the odd sequence.
    while ((sequence & 1) ||
           !entry.sequence.compare_exchange_weak(sequence, sequence + 1, std::memory_order_acquire)) {
      std::this_thread::yield();
      sequence = entry.sequence.load(std::memory_order_relaxed);
    }
  } else {
    entry.sequence.store(sequence + 1, std::memory_order_relaxed);
  }
  // Release stores, as SharedRecord's: a reader that sees a new value sees
  // the odd sequence before it.
  Direction& tally = entry.*direction;
  const auto value = static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag));
  const auto signed_step = static_cast<std::uint64_t>(static_cast<std::int64_t>(step));
  tally.count.store(tally.count.load(std::memory_order_relaxed) + signed_step, std::memory_order_release);
  tally.sum.store(tally.sum.load(std::memory_order_relaxed) + signed_step * value, std::memory_order_release);
  tally.squares.store(tally.squares.load(std::memory_order_relaxed) + signed_step * value * value,
                      std::memory_order_release);
  entry.sequence.store(sequence + 2, std::memory_order_release);
}

void CommTallies::append_to(std::vector<MessageTally>& out) const {
  const auto read = [](const Direction& direction) {
    return TagTally{direction.count.load(std::memory_order_acquire), direction.sum.load(std::memory_order_acquire),
                    direction.squares.load(std::memory_order_acquire)};
  };
  for (std::size_t peer = 0; peer < peers_.size(); ++peer) {
    const Peer& entry = peers_[peer];
    MessageTally tally;
    // A writer holds the word for nanoseconds: read again until untorn.
    while (true) {
      const std::uint64_t before = entry.sequence.load(std::memory_order_acquire);
      if (!(before & 1)) {
        tally.sent = read(entry.sent);
        tally.matched = read(entry.matched);
        if (entry.sequence.load(std::memory_order_relaxed) == before) break;
      }
      std::this_thread::yield();
    }
    if (tally.sent.count == 0 && tally.matched.count == 0) continue;
    tally.comm_id = comm_id_;
    tally.peer = peers_world_[peer];
    out.push_back(tally);
  }
}

void set_concurrent_writers(bool concurrent) noexcept { concurrent_writers = concurrent; }

void lost() noexcept { full.store(true, std::memory_order_release); }

CommTallies* make(std::uint64_t comm_id, std::vector<int> peers_world) {
  const std::size_t index = made_count.fetch_add(1, std::memory_order_acq_rel);
  if (index >= kMostCommunicators) {
    full.store(true, std::memory_order_release);
    return nullptr;
  }
  auto* tallies = new CommTallies(comm_id, std::move(peers_world));  // never freed (above)
  made[index].store(tallies, std::memory_order_release);
  return tallies;
}

std::vector<MessageTally> collect(bool& incomplete) {
  std::vector<MessageTally> all;
  const std::size_t count = std::min(made_count.load(std::memory_order_acquire), kMostCommunicators);
  for (std::size_t i = 0; i < count; ++i)
    if (const CommTallies* tallies = made[i].load(std::memory_order_acquire)) tallies->append_to(all);
  std::sort(all.begin(), all.end(), [](const MessageTally& a, const MessageTally& b) {
    return a.comm_id != b.comm_id ? a.comm_id < b.comm_id : a.peer < b.peer;
  });
  incomplete = full.load(std::memory_order_acquire);
  return all;
}

}  // namespace mpisentry::tallies
