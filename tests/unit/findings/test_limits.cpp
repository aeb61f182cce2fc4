// Which consistency findings are printed, and when a rank stops.
#include <catch2/catch.hpp>

#include "findings/limits.hpp"

using mpisentry::checks::Limits;
using mpisentry::report::Check;

namespace {

int printed(Limits& limits, Check check, const std::string& key, int times) {
  int count = 0;
  for (int i = 0; i < times; ++i) count += limits.count(check, key).print;
  return count;
}

}  // namespace

TEST_CASE("limits: repeats of one report past CHECK-SUPPRESSION-LIMIT are counted, not printed", "[limits]") {
  Limits limits(0, 0, 10);
  CHECK(printed(limits, Check::CollectiveReduction, "Allreduce SUM/MAX at a.c:7", 10000) == 10);
  CHECK(printed(limits, Check::CollectiveReduction, "Allreduce SUM/MIN at a.c:7", 3) == 3);
  const auto& counts = limits.counts()[static_cast<int>(Check::CollectiveReduction)];
  CHECK(counts.found == 10003);
  CHECK(counts.suppressed == 9990);
}

TEST_CASE("limits: past CHECK-MAX-REPORTS nothing more is printed, whatever the key", "[limits]") {
  Limits limits(0, 2, 0);
  CHECK(limits.count(Check::CallFailed, "a").print);
  CHECK(limits.count(Check::RequestNotFreed, "b").print);
  CHECK_FALSE(limits.count(Check::CallFailed, "c").print);
  CHECK(limits.counts()[static_cast<int>(Check::CallFailed)].suppressed == 1);
}

TEST_CASE("limits: CHECK-MAX-ERRORS counts errors, printed or not, never warnings nor information, and 0 never stops",
          "[limits]") {
  Limits limits(3, 0, 1);
  CHECK_FALSE(limits.count(Check::CollectiveRoot, "same").error_limit_reached);
  CHECK_FALSE(limits.count(Check::RequestNotFreed, "w").error_limit_reached);
  for (int i = 0; i < 5; ++i) CHECK_FALSE(limits.count(Check::MessageRace, "race").error_limit_reached);
  CHECK_FALSE(limits.count(Check::MessagePending, "w").error_limit_reached);
  CHECK_FALSE(limits.count(Check::CollectiveRoot, "same").error_limit_reached);
  CHECK(limits.count(Check::CollectiveRoot, "same").error_limit_reached);
  CHECK(limits.errors() == 3);
  Limits unlimited(0, 0, 0);
  for (int i = 0; i < 1000; ++i) CHECK_FALSE(unlimited.count(Check::CallFailed, "x").error_limit_reached);
}

TEST_CASE("limits: an error that may not end the run counts, and the next one that may ends it", "[limits]") {
  Limits limits(1, 0, 0);
  CHECK_FALSE(limits.count(Check::ArgumentRank, "rank 9", /*may_end_run=*/false).error_limit_reached);
  CHECK_FALSE(limits.count(Check::ArgumentTag, "tag -5", /*may_end_run=*/false).error_limit_reached);
  CHECK(limits.errors() == 2);
  CHECK(limits.count(Check::CollectiveRoot, "root").error_limit_reached);
}
