#include "findings/limits.hpp"

namespace mpisentry::checks {

Limits::Decision Limits::count(report::Check check, const std::string& key, bool may_end_run) {
  report::CheckCounts& counts = counts_[static_cast<int>(check)];
  ++counts.found;
  Decision decision;
  if (const report::Severity severity = report::severity(check);
      severity != report::Severity::Warning && severity != report::Severity::Info)
    decision.error_limit_reached = ++errors_ >= max_errors_ && max_errors_ > 0 && may_end_run;
  std::int64_t* printed_here = nullptr;
  if (const auto known = printed_per_key_.find(key); known != printed_per_key_.end())
    printed_here = &known->second;
  else if (printed_per_key_.size() < kMaxKeys)
    printed_here = &printed_per_key_[key];
  const bool repeat_suppressed = suppression_limit_ > 0 && printed_here && *printed_here >= suppression_limit_;
  const bool over_reports = max_reports_ > 0 && printed_ >= max_reports_;
  if (repeat_suppressed || over_reports) {
    ++counts.suppressed;
    return decision;
  }
  if (printed_here) ++*printed_here;
  ++printed_;
  decision.print = true;
  return decision;
}

}  // namespace mpisentry::checks
