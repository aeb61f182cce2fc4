// Which findings are printed and when a rank stops (pure, unit-tested):
// CHECK-SUPPRESSION-LIMIT prints the same report (same key) at most so
// often, CHECK-MAX-REPORTS prints at most so many reports in all, and
// CHECK-MAX-ERRORS errors (warnings never count) end the run. Everything
// found is counted, printed or not, for the summary; what SUPPRESSIONS
// leaves out is counted as suppressed only.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "report/report.hpp"

namespace mpisentry::checks {

class Limits {
 public:
  // 0 means no limit, for each.
  Limits(int max_errors, int max_reports, int suppression_limit)
      : max_errors_(max_errors), max_reports_(max_reports), suppression_limit_(suppression_limit) {}

  struct Decision {
    bool print = false;
    bool error_limit_reached = false;  // this rank's errors reached CHECK-MAX-ERRORS
  };
  // With `may_end_run` false, an error counts all the same but never itself
  // reaches CHECK-MAX-ERRORS: the next error that may end the run does.
  Decision count(report::Check check, const std::string& key, bool may_end_run = true);
  // A finding that a SUPPRESSIONS line leaves out: counted as suppressed,
  // never as found, and never towards CHECK-MAX-ERRORS.
  void suppress(report::Check check) { ++counts_[static_cast<int>(check)].suppressed; }

  const report::CheckCounts (&counts() const)[report::kCheckCount] { return counts_; }
  std::int64_t errors() const { return errors_; }

 private:
  // Distinct keys remembered; past this, new keys are printed without being
  // remembered (a program with endless distinct findings keeps bounded memory).
  static constexpr std::size_t kMaxKeys = 100000;

  int max_errors_;
  int max_reports_;
  int suppression_limit_;
  report::CheckCounts counts_[report::kCheckCount] = {};
  std::map<std::string, std::int64_t> printed_per_key_;
  std::int64_t printed_ = 0;
  std::int64_t errors_ = 0;
};

}  // namespace mpisentry::checks
