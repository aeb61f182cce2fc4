#include "monitor/publisher.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/checks.hpp"
#include "log/log.hpp"
#include "monitor/ending.hpp"
#include "monitor/reports.hpp"
#include "report/html.hpp"
#include "report/sink.hpp"
#include "report/suppressions.hpp"

namespace mpisentry::monitor {
namespace {

// The ranks of a verdict that are blocked with threads outside MPI: why
// those threads cannot release them, for the rule line.
std::string held_outside_note(const Verdict& verdict, const std::vector<RankSnapshot>& ranks) {
  std::vector<int> held;
  for (int involved : verdict.involved) {
    if (involved < 0 || static_cast<std::size_t>(involved) >= ranks.size()) continue;
    const RankSnapshot& rank = ranks[static_cast<std::size_t>(involved)];
    if (rank.state == RankState::Blocked && rank.held_tasks > 0) held.push_back(rank.rank);
  }
  if (held.empty()) return {};
  return fmt::format(
      "; on {} {} the threads outside MPI sleep in waits that only their own process can end (futex waits with "
      "no timeout, private to the process: pthread_join, a condition variable, a mutex), those that never called "
      "MPI among them, every other thread is blocked in MPI, no other process shares the rank's memory and no "
      "program signal handler is installed, so they cannot release it",
      held.size() == 1 ? "rank" : "ranks", fmt::join(held, ","));
}

}  // namespace

std::string verdict_signature(const Verdict& verdict) {
  return verdict.rule + '|' + fmt::format("{}", fmt::join(verdict.involved, ","));
}

void Publisher::publish(const Verdict& judged, double seconds_between, Gathered gathered, Channel& channel) {
  symbolize_into(gathered, symbolizer_, channel);
  Verdict verdict = judged;
  verdict.rule += held_outside_note(verdict, gathered.ranks);
  const report::Report report =
      reports::verdict_report(verdict, seconds_between, std::move(gathered.ranks), settings_);
  const bool fatal = report::aborts_job(report.check);
  if (!fatal) warned_.insert(verdict_signature(verdict));
  write_report(report);
  if (fatal) abort_job(report.check);
}

void Publisher::publish_dump(Gathered gathered, Channel& channel) {
  symbolize_into(gathered, symbolizer_, channel);
  write_report(reports::dump_report(std::move(gathered.ranks), settings_));
}

void Publisher::write_report(const report::Report& report) {
  // A report that leaves the program running is counted for the summary
  // and ERROR-EXITCODE, or left out by SUPPRESSIONS.
  if (config::can_be_suppressed(config::check_info(report.check))) {
    const config::Suppression* suppression = report::suppression_for(report);
    report::count_monitor_report(report.check, suppression != nullptr);
    if (suppression) {
      log::info("{} left out, as SUPPRESSIONS {} says", report::check_name(report.check), suppression->where);
      return;
    }
  }
  const std::string json =
      settings_.report_json.empty() && settings_.report_html.empty() ? std::string() : report::format_json(report);
  const std::string text = report::format_text(report);
  // A dump on request is the job's state, not a finding.
  const bool wants_ci = report.check != report::Check::Dump && report::sink()->wants_ci();
  const report::CiRecord ci = wants_ci ? report::ci_record(report, text) : report::CiRecord{};
  const bool on_file = report::sink()->write(
      text, settings_.report_json.empty() ? std::string() : json,
      settings_.report_dot.empty() ? std::string() : report::format_dot(report), wants_ci ? &ci : nullptr);
  if (on_file) log::info("report written to {}", paths_.text);
  if (settings_.report_html.empty()) return;
  try {
    report::sink()->write_page(report::format_html(json, paths_.text));
  } catch (const report::BadReport& bad) {
    log::error("cannot make the report's page for REPORT-HTML {}: {}", paths_.html, bad.what());
  }
}

void Publisher::write_rank_lost(const RankSnapshot& mine, const std::vector<std::string>& lines, bool with_stacks) {
  report::Sink& sink = *report::sink();
  const std::string text = report::format_rank_lost(mine, lines, with_stacks);
  const std::string json = settings_.report_json.empty()
                               ? std::string()
                               : report::format_json(reports::rank_lost_report(mine, lines));
  const bool wants_ci = !with_stacks && sink.wants_ci();
  const report::CiRecord ci =
      wants_ci ? report::ci_record(reports::rank_lost_report(mine, lines), text) : report::CiRecord{};
  sink.write_rank_report(text, json, wants_ci ? &ci : nullptr);
}

}  // namespace mpisentry::monitor
