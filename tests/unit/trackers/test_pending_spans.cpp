// PendingSpans, LOCAL:MEMORY:OVERLAP's tables of pending buffers: what a
// lookup finds agrees with a plain list of the buffers kept, whatever the
// order of starts and releases and of the orders given, through tombstones
// and compaction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "trackers/pending_spans.hpp"

using mpisentry::FunctionId;
using mpisentry::checks::BufferUse;
using mpisentry::checks::PendingBuffer;
using mpisentry::checks::PendingSpans;

namespace {

struct Kept {
  PendingBuffer buffer;
  std::uint64_t order;
};

bool overlaps(const PendingBuffer& b, std::uintptr_t low, std::uintptr_t high) { return b.low < high && low < b.high; }

}  // namespace

TEST_CASE("pending spans: a lookup finds a kept buffer exactly when one shares a byte", "[pending_spans]") {
  std::mt19937_64 random(7);
  PendingSpans table;
  std::vector<Kept> kept;
  for (int step = 0; step < 20000; ++step) {
    const std::uintptr_t low = 1000 + random() % 4000;
    // Mostly short buffers, now and then a long one (the lookup reaches back by the longest).
    const std::uintptr_t length = random() % 50 == 0 ? 1 + random() % 2000 : 1 + random() % 16;
    const std::uintptr_t high = low + length;
    const bool any = std::any_of(kept.begin(), kept.end(), [&](const Kept& k) { return overlaps(k.buffer, low, high); });
    const PendingBuffer* found = table.first_overlapping(low, high);
    REQUIRE((found != nullptr) == any);
    if (found) CHECK(overlaps(*found, low, high));
    if (!kept.empty() && random() % 2 == 0) {
      const std::size_t which = random() % kept.size();
      table.remove(kept[which].buffer.low, kept[which].order);
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(which));
    } else if (kept.size() < 300) {
      // Orders unique but not ascending, as the threads' own counters give them.
      const std::uint64_t order = (step % 3 == 0 ? 1ull << 40 : 2ull << 40) + static_cast<std::uint64_t>(step);
      table.add(low, high, BufferUse::Write, FunctionId::Irecv, nullptr, order);
      kept.push_back({{low, high}, order});
    }
    REQUIRE(table.size() == kept.size());
  }
}

TEST_CASE("pending spans: buffers of one first byte are released one by one", "[pending_spans]") {
  PendingSpans table;
  std::vector<std::uint64_t> orders;
  for (std::uint64_t i = 0; i < 100; ++i) {
    // Two threads' orders, interleaved: each ascends, together they do not.
    orders.push_back((i % 2 == 0 ? 2ull << 40 : 1ull << 40) + i);
    table.add(64, 72, BufferUse::Read, FunctionId::Isend, nullptr, orders.back());
  }
  for (std::size_t i = 0; i < orders.size(); i += 2) table.remove(64, orders[i]);
  CHECK(table.size() == 50);
  table.remove(64, orders[0]);  // released before: nothing changes
  CHECK(table.size() == 50);
  for (std::size_t i = 1; i < orders.size(); i += 2) {
    CHECK(table.first_overlapping(71, 80) != nullptr);
    table.remove(64, orders[i]);
  }
  CHECK(table.size() == 0);
  CHECK(table.first_overlapping(0, 1000) == nullptr);
}

TEST_CASE("pending spans: a long buffer released is found no more, the short ones still are", "[pending_spans]") {
  PendingSpans table;
  const std::uint64_t long_one = 1, short_one = 2;
  table.add(0x1000, 0x101000, BufferUse::Write, FunctionId::Irecv, nullptr, long_one);
  table.add(0x200000, 0x200008, BufferUse::Write, FunctionId::Irecv, nullptr, short_one);
  CHECK(table.first_overlapping(0x100ff8, 0x101008) != nullptr);
  table.remove(0x1000, long_one);
  CHECK(table.first_overlapping(0x100ff8, 0x101008) == nullptr);
  CHECK(table.first_overlapping(0x200004, 0x200005) != nullptr);
  table.remove(0x200000, short_one);
  CHECK(table.size() == 0);
}
