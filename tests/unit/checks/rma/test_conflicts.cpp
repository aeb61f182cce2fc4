// GLOBAL:RMA:CONFLICT's rule: which accesses of one fence epoch conflict.
#include <catch2/catch.hpp>

#include "checks/rma/conflicts.hpp"

using mpisentry::checks::AccessKind;
using mpisentry::checks::Conflict;
using mpisentry::checks::conflicting;
using mpisentry::checks::find_conflicts;
using mpisentry::checks::WindowAccess;

namespace {

WindowAccess access(std::int64_t begin, std::int64_t end, AccessKind kind, int origin, bool local = false) {
  return {begin, end, kind, local, origin, 0};
}

}  // namespace

TEST_CASE("rma conflicts: a put conflicts with every access to its bytes, from any origin", "[rma]") {
  const WindowAccess put = access(0, 16, AccessKind::Write, 0);
  for (const AccessKind kind : {AccessKind::Read, AccessKind::Write, AccessKind::Atomic}) {
    CHECK(conflicting(put, access(12, 20, kind, 2)));
    CHECK(conflicting(access(12, 20, kind, 2), put));
    CHECK(conflicting(put, access(0, 4, kind, 0)));  // the same origin: nothing orders them before the fence
    CHECK(conflicting(put, access(8, 12, kind, 1, /*local=*/true)));
    CHECK_FALSE(conflicting(put, access(16, 32, kind, 2)));  // adjacent bytes
  }
}

TEST_CASE("rma conflicts: reads with reads and accumulates with accumulates do not conflict", "[rma]") {
  CHECK_FALSE(conflicting(access(0, 16, AccessKind::Read, 0), access(0, 16, AccessKind::Read, 2)));
  CHECK_FALSE(conflicting(access(0, 16, AccessKind::Read, 0), access(0, 16, AccessKind::Read, 1, true)));
  CHECK_FALSE(conflicting(access(0, 16, AccessKind::Atomic, 0), access(4, 8, AccessKind::Atomic, 2)));
  CHECK(conflicting(access(0, 16, AccessKind::Atomic, 0), access(4, 8, AccessKind::Read, 2)));
  CHECK(conflicting(access(0, 16, AccessKind::Read, 0), access(4, 8, AccessKind::Write, 1, true)));
}

TEST_CASE("rma conflicts: the target's own calls are not compared with each other", "[rma]") {
  CHECK_FALSE(conflicting(access(0, 16, AccessKind::Write, 1, true), access(0, 16, AccessKind::Read, 1, true)));
}

TEST_CASE("rma conflicts: find_conflicts pairs every overlap once, earlier start first, up to the limit", "[rma]") {
  std::vector<WindowAccess> accesses = {access(40, 48, AccessKind::Read, 3), access(0, 8, AccessKind::Write, 0),
                                        access(100, 200, AccessKind::Read, 1), access(4, 44, AccessKind::Read, 2),
                                        access(150, 160, AccessKind::Read, 2)};
  for (std::size_t i = 0; i < accesses.size(); ++i) accesses[i].index = i;
  const std::vector<Conflict> found = find_conflicts(accesses, 10);
  REQUIRE(found.size() == 1);
  CHECK(found[0].first.index == 1);  // the put, which starts first
  CHECK(found[0].second.index == 3);

  accesses.push_back(access(42, 46, AccessKind::Write, 0));
  accesses.back().index = 5;
  const std::vector<Conflict> more = find_conflicts(accesses, 10);
  REQUIRE(more.size() == 3);  // the put at 0 with the read at 4, and the put at 42 with both reads reaching it
  CHECK(more[1].second.index == 5);
  CHECK(more[2].second.index == 5);
  CHECK(find_conflicts(accesses, 2).size() == 2);
}
