// StableMap, the checks' map of live requests and message streams: values
// stay where they are while others come and go, and a key erased from the
// middle of a probe run leaves the others findable (backward shift).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>

#include "trackers/stable_map.hpp"

using mpisentry::checks::StableMap;

TEST_CASE("stable map: values keep their address through growth and erasures", "[stable_map]") {
  StableMap<int> map;
  std::map<std::uint64_t, int*> where;
  for (std::uint64_t key = 1; key <= 1000; ++key) {
    bool added = false;
    int& value = map.get(key, added);
    CHECK(added);
    value = static_cast<int>(key);
    where[key] = &value;
  }
  for (std::uint64_t key = 1; key <= 1000; key += 3) map.erase(key);
  for (std::uint64_t key = 1; key <= 1000; ++key) {
    int* found = map.find(key);
    if (key % 3 == 1) {
      CHECK(found == nullptr);
    } else {
      REQUIRE(found == where[key]);
      CHECK(*found == static_cast<int>(key));
    }
  }
  bool added = true;
  CHECK(&map.get(2, added) == where[2]);
  CHECK_FALSE(added);
}

TEST_CASE("stable map: random insertions and erasures agree with std::map", "[stable_map]") {
  StableMap<std::uint64_t> map;
  std::map<std::uint64_t, std::uint64_t> expected;
  std::mt19937_64 random(7);
  for (int step = 0; step < 200000; ++step) {
    // Few distinct keys, so that probe runs collide and erasures shift them.
    const std::uint64_t key = 1 + random() % 512;
    if (random() % 3 == 0) {
      map.erase(key);
      expected.erase(key);
    } else {
      bool added = false;
      map.get(key, added) = key * 10;
      CHECK(added == (expected.count(key) == 0));
      expected[key] = key * 10;
    }
  }
  std::size_t visited = 0;
  map.for_each([&](std::uint64_t key, const std::uint64_t& value) {
    ++visited;
    CHECK(expected.at(key) == value);
  });
  CHECK(visited == expected.size());
  for (std::uint64_t key = 1; key <= 512; ++key) CHECK((map.find(key) != nullptr) == (expected.count(key) == 1));
}
