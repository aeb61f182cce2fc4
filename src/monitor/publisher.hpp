// The monitor's reports: rank 0's of the deadlock checks' verdicts and
// warnings and of dumps, and a rank's own of a rank it lost. Each goes
// through the report sink, the report file first, then stderr, JSON and
// DOT, then the page made from the JSON; a report that leaves the program
// running is counted for the summary and ERROR-EXITCODE, or left out by
// SUPPRESSIONS; a fatal one ends the job once written.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "monitor/channel.hpp"
#include "monitor/gather.hpp"
#include "monitor/report_paths.hpp"
#include "monitor/verdict.hpp"
#include "report/report.hpp"
#include "model/snapshot.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {

// A verdict's rule and ranks: what "the same warning" means.
std::string verdict_signature(const Verdict& verdict);

class Publisher {
 public:
  // Both outlive the publisher.
  Publisher(const config::Settings& settings, const ReportPaths& paths) : settings_(settings), paths_(paths) {}

  // Rank 0: the report of `judged` with the gathered ranks, their stacks
  // symbolized; a fatal one ends the job.
  void publish(const Verdict& judged, double seconds_between, Gathered gathered, Channel& channel);
  // Rank 0: every rank's state and stack now; the program goes on.
  void publish_dump(Gathered gathered, Channel& channel);
  void write_report(const report::Report& report);
  // A rank's own report of `mine` having lost a rank (`lines` say which and
  // how). The CI reports get the first, fast one alone (without stacks): it
  // is the one sure to be on disk before the launcher ends the job.
  void write_rank_lost(const RankSnapshot& mine, const std::vector<std::string>& lines, bool with_stacks);

  // Whether a warning of `verdict` was given (each once).
  bool warned(const Verdict& verdict) const { return warned_.contains(verdict_signature(verdict)); }
  // Rank 0's, for every rank's frames.
  stacks::Symbolizer& symbolizer() { return symbolizer_; }

 private:
  const config::Settings& settings_;
  const ReportPaths& paths_;
  stacks::Symbolizer symbolizer_;
  std::set<std::string> warned_;  // warnings given, by verdict_signature
};

}  // namespace mpisentry::monitor
