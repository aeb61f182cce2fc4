// GLOBAL:RMA:CONFLICT's rule: which accesses of one fence epoch conflict.
#include <catch2/catch.hpp>

#include "checks/rma/conflicts.hpp"

using mpisentry::checks::AccessKind;
using mpisentry::checks::AccessOrder;
using mpisentry::checks::EpochKind;
using mpisentry::checks::ExclusiveEpoch;
using mpisentry::checks::kNoOp;
using mpisentry::checks::Conflict;
using mpisentry::checks::conflicting;
using mpisentry::checks::find_conflicts;
using mpisentry::checks::WindowAccess;

namespace {

WindowAccess access(std::int64_t begin, std::int64_t end, AccessKind kind, int origin, bool local = false) {
  return {begin, end, kind, local, origin, 0, 0, 0, {}};
}

// An access to bytes 0 to 15 in an epoch of `epoch`, spanning [issued, completed] on clock 1.
WindowAccess in_epoch(AccessKind kind, int origin, EpochKind epoch, std::int64_t issued, std::int64_t completed,
                      std::uint64_t number = 0, std::uint32_t serial = 1) {
  WindowAccess a = access(0, 16, kind, origin);
  a.order = AccessOrder{epoch, serial, number, issued, completed, 1};
  return a;
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
  const std::vector<Conflict> found = find_conflicts(accesses, {}, 10);
  REQUIRE(found.size() == 1);
  CHECK(found[0].first.index == 1);  // the put, which starts first
  CHECK(found[0].second.index == 3);

  accesses.push_back(access(42, 46, AccessKind::Write, 0));
  accesses.back().index = 5;
  const std::vector<Conflict> more = find_conflicts(accesses, {}, 10);
  REQUIRE(more.size() == 3);  // the put at 0 with the read at 4, and the put at 42 with both reads reaching it
  CHECK(more[1].second.index == 5);
  CHECK(more[2].second.index == 5);
  CHECK(find_conflicts(accesses, {}, 2).size() == 2);
}

TEST_CASE("rma conflicts: an accumulate with MPI_NO_OP only reads", "[rma]") {
  WindowAccess read_atomically = access(0, 16, AccessKind::AtomicRead, 0);
  read_atomically.op = kNoOp;
  CHECK_FALSE(conflicting(read_atomically, access(0, 16, AccessKind::Read, 2)));
  CHECK(conflicting(read_atomically, access(0, 16, AccessKind::Write, 2)));
  WindowAccess sum = access(0, 16, AccessKind::Atomic, 2);
  sum.op = 4;
  CHECK_FALSE(conflicting(read_atomically, sum));  // same_op_no_op allows MPI_NO_OP with any operation
}

TEST_CASE("rma conflicts: accumulates conflict when their operations or basic types differ", "[rma]") {
  WindowAccess a = access(0, 16, AccessKind::Atomic, 0), b = access(0, 16, AccessKind::Atomic, 2);
  a.op = b.op = 4;
  a.basic_type = b.basic_type = 11;
  CHECK_FALSE(conflicting(a, b));
  b.op = 5;
  CHECK(conflicting(a, b));
  b.op = 4;
  b.basic_type = 12;
  CHECK(conflicting(a, b));
  b.basic_type = 0;  // a derived datatype: not known, taken as alike
  CHECK_FALSE(conflicting(a, b));
}

TEST_CASE("rma conflicts: fence epochs order by their fence, exposure epochs by their number", "[rma]") {
  CHECK(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::Fence, 0, 0, 3),
                    in_epoch(AccessKind::Read, 2, EpochKind::Fence, 0, 0, 3)));
  CHECK_FALSE(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::Fence, 0, 0, 3),
                          in_epoch(AccessKind::Read, 2, EpochKind::Fence, 0, 0, 4)));
  CHECK(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::Start, 10, 20, 1),
                    in_epoch(AccessKind::Write, 2, EpochKind::Start, 30, 40, 1)));  // one exposure: time says nothing
  CHECK_FALSE(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::Start, 10, 20, 1),
                          in_epoch(AccessKind::Write, 2, EpochKind::Start, 10, 20, 2)));
  CHECK_FALSE(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::Start, 10, 20, 0),
                          in_epoch(AccessKind::Write, 2, EpochKind::Start, 10, 20, 0)));  // exposure not known
}

TEST_CASE("rma conflicts: one process's accesses are ordered by its synchronizations only", "[rma]") {
  CHECK(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::SharedLock, 10, 20, 0, 5),
                    in_epoch(AccessKind::Write, 0, EpochKind::SharedLock, 50, 60, 0, 5)));
  CHECK_FALSE(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::SharedLock, 10, 20, 0, 5),
                          in_epoch(AccessKind::Write, 0, EpochKind::SharedLock, 15, 60, 0, 6)));  // a flush between
}

TEST_CASE("rma conflicts: one origin's accumulates are ordered, whatever their operations", "[rma]") {
  WindowAccess replace = in_epoch(AccessKind::Atomic, 1, EpochKind::SharedLock, 10, 30);
  WindowAccess sum = in_epoch(AccessKind::Atomic, 1, EpochKind::SharedLock, 10, 30);
  replace.op = 3;
  sum.op = 4;
  CHECK_FALSE(conflicting(replace, sum));
  sum.origin = 2;
  CHECK(conflicting(replace, sum));
}

TEST_CASE("rma conflicts: lock epochs conflict when shared and overlapping in time on one clock", "[rma]") {
  const WindowAccess a = in_epoch(AccessKind::Write, 0, EpochKind::SharedLock, 10, 30);
  CHECK(conflicting(a, in_epoch(AccessKind::Write, 2, EpochKind::SharedLock, 20, 40)));
  CHECK(conflicting(a, in_epoch(AccessKind::Write, 2, EpochKind::Fence, 5, 15, 1)));  // kinds mixed: time
  CHECK_FALSE(conflicting(a, in_epoch(AccessKind::Write, 2, EpochKind::SharedLock, 31, 40)));  // after its completion
  CHECK_FALSE(conflicting(a, in_epoch(AccessKind::Write, 2, EpochKind::SharedLock, 0, 10)));   // before its call
  CHECK_FALSE(conflicting(a, in_epoch(AccessKind::Write, 2, EpochKind::ExclusiveLock, 20, 40)));
  CHECK_FALSE(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::ExclusiveLock, 10, 30),
                          in_epoch(AccessKind::Write, 2, EpochKind::ExclusiveLock, 20, 40)));
  WindowAccess other_clock = in_epoch(AccessKind::Write, 2, EpochKind::SharedLock, 20, 40);
  other_clock.order.clock = 2;
  CHECK_FALSE(conflicting(a, other_clock));
  WindowAccess not_completed = in_epoch(AccessKind::Write, 2, EpochKind::SharedLock, 20, 0);
  CHECK_FALSE(conflicting(a, not_completed));
  // The target's own call in a lock epoch is not lock-protected: time decides.
  WindowAccess own = in_epoch(AccessKind::Write, 1, EpochKind::ExclusiveLock, 20, 40);
  own.local = true;
  CHECK(conflicting(in_epoch(AccessKind::Write, 0, EpochKind::ExclusiveLock, 10, 30), own));
}

TEST_CASE("rma conflicts: a third origin's exclusive lock epoch among two may order them", "[rma]") {
  const WindowAccess a = in_epoch(AccessKind::Write, 0, EpochKind::SharedLock, 10, 30);
  const WindowAccess b = in_epoch(AccessKind::Write, 2, EpochKind::SharedLock, 20, 40);
  CHECK_FALSE(conflicting(a, b, {ExclusiveEpoch{3, 25, 35, 1}}));
  CHECK(conflicting(a, b, {ExclusiveEpoch{3, 45, 50, 1}}));  // after both
  CHECK(conflicting(a, b, {ExclusiveEpoch{0, 25, 35, 1}}));  // one of the two's own
}
