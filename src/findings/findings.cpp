#include "findings/findings.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/checks.hpp"
#include "config/exit_status.hpp"
#include "config/slow_paths.hpp"
#include "findings/limits.hpp"
#include "log/log.hpp"
#include "records/call_text.hpp"
#include "records/lifecycle.hpp"
#include "report/sink.hpp"
#include "report/suppressions.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::checks {
namespace detail {
std::atomic<bool> error_limit_reached{false};
}

namespace {

struct FindingsState {
  bool enabled[report::kCheckCount] = {};
  bool any = false;
  int rank = 0;
  MPI_Comm summary_comm = MPI_COMM_NULL;

  int error_exitcode = 0;
  bool warnings_are_errors = false;

  std::mutex mutex;  // guards limits
  Limits limits{1, 0, 10};
};

FindingsState& findings_state() {
  static FindingsState* const instance = new FindingsState;  // never destroyed: findings may come during exit
  return *instance;
}

// Through the report sink: the report file first, so that it is on disk
// before anything may end the process, then stderr, then a finding's record
// to the CI reports.
void print(const std::string& text, const report::Finding* finding = nullptr) {
  report::Sink* sink = report::sink();
  if (!sink) return report::write_stderr(text);
  if (!finding || !sink->wants_ci()) return void(sink->write(text));
  const report::CiRecord record = report::ci_record(*finding, text);
  sink->write(text, {}, {}, &record);
}

std::vector<Frame> caller_stack() {
  stacks::RawStack raw;
  stacks::capture_current(raw);
  return stacks::symbolize(raw);
}

}  // namespace

void start_findings(const config::Settings& settings, int world_rank) {
  FindingsState& s = findings_state();
  const config::Settings defaults;
  for (const config::CheckInfo& check : config::switchable_checks()) {
    const int i = static_cast<int>(check.id);
    s.enabled[i] = settings.*check.member;
    s.any = s.any || (i >= static_cast<int>(report::Check::CollectiveOperation) && s.enabled[i]);
    // The wrappers' fast bodies do what the checks on by default need, no more.
    if (s.enabled[i] && !(defaults.*check.member)) slow_paths::take(slow_paths::kChecks);
  }
  s.rank = world_rank;
  s.limits = Limits(settings.max_errors, settings.max_reports, settings.suppression_limit);
  s.error_exitcode = settings.error_exitcode;
  s.warnings_are_errors = settings.warnings_are_errors;
  // The monitor's warnings count for ERROR-EXITCODE too: summed in finish().
  if (s.any || s.error_exitcode != 0) PMPI_Comm_dup(MPI_COMM_WORLD, &s.summary_comm);
  if (!s.any || world_rank != 0) return;
  std::vector<std::string_view> names;
  bool beyond_defaults = false;  // the line is news only then: the defaults are in the README
  for (const config::CheckInfo& check : config::switchable_checks()) {
    if (static_cast<int>(check.id) < static_cast<int>(report::Check::CollectiveOperation) || !(settings.*check.member))
      continue;
    names.emplace_back(check.name);
    beyond_defaults = beyond_defaults || !(defaults.*check.member);
  }
  const std::string line =
      fmt::format("{} consistency check{} on (VERBOSE 2 names them); CHECK-MAX-ERRORS {}{}", names.size(),
                  names.size() == 1 ? "" : "s", settings.max_errors, settings.max_errors == 0 ? " (never stop)" : "");
  if (beyond_defaults)
    log::info("{}", line);
  else
    log::debug("{}", line);
  log::debug("consistency checks on: {}", fmt::join(names, ", "));
}

bool any_on() noexcept { return findings_state().any; }

bool on(report::Check check) noexcept { return findings_state().enabled[static_cast<int>(check)]; }

int world_rank() noexcept { return findings_state().rank; }

int world_rank_of(const std::vector<int>& peers, int rank) {
  return rank >= 0 && rank < static_cast<int>(peers.size()) ? peers[static_cast<std::size_t>(rank)] : rank;
}

std::string call_text(const CallRecord& call) {
  static const CallText text;
  return text.format(call, {});
}

std::vector<Frame> call_site_stack(const void* call_site) {
  return call_site ? stacks::symbolize_call_site(call_site) : std::vector<Frame>{};
}

void report(report::Finding finding, bool own_stack) {
  FindingsState& s = findings_state();
  finding.rank = s.rank;
  const auto take_stack = [&] {
    if (own_stack && !finding.parties.empty() && finding.parties.front().stack.empty())
      finding.parties.front().stack = caller_stack();
  };
  // The stack is taken before the decision only when a SUPPRESSIONS line
  // may need it: it costs more than the check.
  if (report::may_be_suppressed(finding.check)) {
    take_stack();
    if (report::suppression_for(finding)) {
      const std::lock_guard lock(s.mutex);
      s.limits.suppress(finding.check);
      return;
    }
  }
  Limits::Decision decision;
  {
    const std::lock_guard lock(s.mutex);
    decision = s.limits.count(finding.check, finding.key, finding.may_end_run);
  }
  if (decision.error_limit_reached) {
    detail::error_limit_reached.store(true, std::memory_order_relaxed);
    slow_paths::take(slow_paths::kErrorLimit);
  }
  if (!decision.print) return;
  take_stack();
  print(report::format_finding(finding), &finding);
}

void detail::abort_at_error_limit() {
  FindingsState& s = findings_state();
  std::string text;
  {
    const std::lock_guard lock(s.mutex);
    const std::int64_t errors = s.limits.errors();
    text = fmt::format("[{}] INFO: {} error{}, limit CHECK-MAX-ERRORS reached => aborting\n", s.rank, errors,
                       errors == 1 ? "" : "s") +
           report::format_summary(s.rank, s.limits.counts());
  }
  print(text);
  lifecycle::abort_job(s.error_exitcode != 0 ? s.error_exitcode : config::kErrorLimitStatus);
}

bool finish_findings() {
  FindingsState& s = findings_state();
  if (s.summary_comm == MPI_COMM_NULL) return false;
  // Per check found and suppressed, then what ERROR-EXITCODE counts.
  constexpr int kCounted = 2 * report::kCheckCount;
  std::int64_t mine[kCounted + 1] = {}, all[kCounted + 1] = {};
  {
    const std::lock_guard lock(s.mutex);
    for (int i = 0; i < report::kCheckCount; ++i) {
      const auto check = static_cast<report::Check>(i);
      const report::CheckCounts monitor = report::monitor_counts(check);
      mine[2 * i] = s.limits.counts()[i].found + monitor.found;
      mine[2 * i + 1] = s.limits.counts()[i].suppressed + monitor.suppressed;
      if (config::counts_for_exit_status(report::severity(check), s.warnings_are_errors)) mine[kCounted] += mine[2 * i];
    }
  }
  PMPI_Allreduce(mine, all, kCounted + 1, MPI_INT64_T, MPI_SUM, s.summary_comm);
  PMPI_Comm_free(&s.summary_comm);
  if (s.rank == 0) {
    report::CheckCounts total[report::kCheckCount];
    for (int i = 0; i < report::kCheckCount; ++i) total[i] = {all[2 * i], all[2 * i + 1]};
    if (const std::string text = report::format_summary(0, total); !text.empty()) print(text);
  }
  return all[kCounted] > 0;
}

}  // namespace mpisentry::checks
