#include "report/suppressions.hpp"

#include <algorithm>
#include <atomic>

namespace mpisentry::report {
namespace {

// Written once in MPI_Init, before any thread reports.
std::vector<config::Suppression>* suppressions = nullptr;  // never destroyed: reports may come during exit

struct AtomicCounts {
  std::atomic<std::int64_t> found{0};
  std::atomic<std::int64_t> suppressed{0};
};
AtomicCounts monitor_reports[kCheckCount];

const config::Suppression* matching(Check check, const std::vector<const std::vector<Frame>*>& stacks) {
  if (!may_be_suppressed(check)) return nullptr;
  for (const config::Suppression& suppression : *suppressions) {
    if (!config::matches_check(suppression, check_name(check))) continue;
    for (const std::vector<Frame>* stack : stacks)
      for (const Frame& frame : *stack)
        if (config::matches_frame(suppression, frame.function, frame.file, frame.module)) return &suppression;
  }
  return nullptr;
}

}  // namespace

void set_suppressions(std::vector<config::Suppression> lines) {
  if (!suppressions) suppressions = new std::vector<config::Suppression>(std::move(lines));
}

bool may_be_suppressed(Check check) {
  // A pattern such as GLOBAL:DEADLOCK:* names checks that cannot be suppressed too.
  if (!suppressions || !config::can_be_suppressed(config::check_info(check))) return false;
  for (const config::Suppression& suppression : *suppressions)
    if (config::matches_check(suppression, check_name(check))) return true;
  return false;
}

const config::Suppression* suppression_for(const Finding& finding) {
  std::vector<const std::vector<Frame>*> stacks;
  for (const Finding::Party& party : finding.parties) stacks.push_back(&party.stack);
  return matching(finding.check, stacks);
}

const config::Suppression* suppression_for(const Report& report) {
  const DeadlockCore leading = leading_ranks(report);
  std::vector<const std::vector<Frame>*> stacks;
  for (const RankSnapshot& rank : report.ranks) {
    if (!leading.empty() && std::find(leading.core.begin(), leading.core.end(), rank.rank) == leading.core.end())
      continue;
    for (const ThreadSnapshot& thread : rank.threads) stacks.push_back(&thread.stack);
  }
  return matching(report.check, stacks);
}

void count_monitor_report(Check check, bool suppressed) {
  AtomicCounts& counts = monitor_reports[static_cast<int>(check)];
  (suppressed ? counts.suppressed : counts.found).fetch_add(1, std::memory_order_relaxed);
}

CheckCounts monitor_counts(Check check) {
  const AtomicCounts& counts = monitor_reports[static_cast<int>(check)];
  return {counts.found.load(std::memory_order_relaxed), counts.suppressed.load(std::memory_order_relaxed)};
}

}  // namespace mpisentry::report
