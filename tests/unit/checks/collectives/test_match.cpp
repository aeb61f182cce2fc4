// The GLOBAL:COLLECTIVE comparison of the records the members exchange.
#include <catch2/catch.hpp>

#include <cstring>

#include "checks/collectives/match.hpp"

using mpisentry::checks::Amount;
using mpisentry::checks::CollectiveRecord;
using mpisentry::checks::compare_calls;
using mpisentry::checks::compare_data;
using mpisentry::checks::Mismatch;
using mpisentry::report::Check;

namespace {

constexpr std::uint16_t kBcast = 10, kAllgather = 11, kCommFree = 12;

CollectiveRecord call(std::uint16_t kind, int root = -1, int op = -1) {
  CollectiveRecord record;
  record.kind = kind;
  record.rooted = root >= 0;
  record.root = root < 0 ? 0 : root;
  record.op = op;
  return record;
}

Amount amount(std::int64_t bytes, std::uint64_t hash, bool known = true) {
  Amount a;
  a.bytes = bytes;
  a.hash = hash;
  a.present = 1;
  a.known = known;
  std::strcpy(a.type, "MPI_INT");
  return a;
}

CollectiveRecord with(CollectiveRecord record, Amount sent, Amount expected) {
  record.sent = sent;
  record.expected = expected;
  return record;
}

}  // namespace

TEST_CASE("collective_match: the same call everywhere agrees", "[collective_match]") {
  const CollectiveRecord bcast = call(kBcast, 0);
  CHECK(compare_calls(bcast, {bcast, bcast, bcast}).empty());
}

TEST_CASE("collective_match: another kind is an OPERATION_MISMATCH, counted over the peers", "[collective_match]") {
  const std::vector<Mismatch> found =
      compare_calls(call(kAllgather), {call(kAllgather), call(kBcast, 1), call(kBcast, 1)});
  REQUIRE(found.size() == 1);
  CHECK(found[0].check == Check::CollectiveOperation);
  CHECK(found[0].first == 1);
  CHECK(found[0].peers == 2);
}

TEST_CASE("collective_match: MPI_Comm_free against another collective is a COMM_FREE_MISMATCH", "[collective_match]") {
  CollectiveRecord frees = call(kCommFree);
  frees.frees = 1;
  frees.kind_only = 1;
  const std::vector<Mismatch> found = compare_calls(frees, {frees, call(kBcast, 1)});
  REQUIRE(found.size() == 1);
  CHECK(found[0].check == Check::CommFreeMismatch);
  CHECK(found[0].first == 1);
}

TEST_CASE("collective_match: roots and predefined operations are compared for the same kind only",
          "[collective_match]") {
  SECTION("root") {
    const std::vector<Mismatch> found = compare_calls(call(kBcast, 0), {call(kBcast, 0), call(kBcast, 1)});
    REQUIRE(found.size() == 1);
    CHECK(found[0].check == Check::CollectiveRoot);
    CHECK(found[0].first == 1);
  }
  SECTION("operation") {
    const std::vector<Mismatch> found =
        compare_calls(call(kAllgather, -1, 2), {call(kAllgather, -1, 2), call(kAllgather, -1, 0)});
    REQUIRE(found.size() == 1);
    CHECK(found[0].check == Check::CollectiveReduction);
  }
  SECTION("a user-defined operation is not compared") {
    CHECK(compare_calls(call(kAllgather, -1, 2), {call(kAllgather, -1, -1)}).empty());
  }
  SECTION("another kind hides the root") {
    const std::vector<Mismatch> found = compare_calls(call(kBcast, 0), {call(kAllgather)});
    REQUIRE(found.size() == 1);
    CHECK(found[0].check == Check::CollectiveOperation);
  }
  SECTION("kind only (inter-communicators, neighbourhoods)") {
    CollectiveRecord a = call(kBcast, 0), b = call(kBcast, 1);
    a.kind_only = b.kind_only = 1;
    CHECK(compare_calls(a, {b}).empty());
  }
}

TEST_CASE("collective_match: what each peer sends against what is expected from it", "[collective_match]") {
  const CollectiveRecord gather = call(kBcast, 0);
  // This member expects 8 B from peer 0 and 4 B from peer 1 (a v-collective).
  const std::vector<CollectiveRecord> mine = {with(gather, {}, amount(8, 1)), with(gather, {}, amount(4, 1))};
  SECTION("different counts per peer that agree") {
    CHECK(compare_data(mine, {with(gather, amount(8, 1), {}), with(gather, amount(4, 1), {})}).empty());
  }
  SECTION("bytes differ") {
    const std::vector<Mismatch> found =
        compare_data(mine, {with(gather, amount(8, 1), {}), with(gather, amount(8, 1), {})});
    REQUIRE(found.size() == 1);
    CHECK(found[0].check == Check::CollectiveSize);
    CHECK(found[0].first == 1);
    CHECK(found[0].peers == 1);
  }
  SECTION("same bytes, another signature") {
    const std::vector<Mismatch> found =
        compare_data(mine, {with(gather, amount(8, 2), {}), with(gather, amount(4, 3), {})});
    REQUIRE(found.size() == 1);
    CHECK(found[0].check == Check::CollectiveDatatype);
    CHECK(found[0].first == 0);
    CHECK(found[0].peers == 2);
  }
  SECTION("untyped data is compared by bytes only") {
    Amount untyped = amount(8, 5);
    untyped.untyped = 1;
    CHECK(compare_data(mine, {with(gather, untyped, {}), with(gather, amount(4, 1), {})}).empty());
  }
  SECTION("in place or unreadable: not compared") {
    CHECK(compare_data(mine, {with(gather, amount(1, 1, false), {}), with(gather, amount(4, 1), {})}).empty());
  }
  SECTION("nothing moves one way: not compared") {
    CHECK(compare_data(mine, {with(gather, {}, {}), with(gather, amount(4, 1), {})}).empty());
  }
  SECTION("calls that disagree are not compared by data") {
    CHECK(compare_data(mine, {with(call(kBcast, 1), amount(1, 1), {}), with(gather, amount(4, 1), {})}).empty());
    CHECK(compare_data(mine, {with(call(kAllgather), amount(1, 1), {}), with(gather, amount(4, 1), {})}).empty());
  }
}
