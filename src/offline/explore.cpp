#include "offline/explore.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>


namespace mpisentry::offline::explore {
namespace {

using recording::Ending;
using recording::Event;
using recording::Kind;
using recording::Recording;

constexpr std::string_view kDeadlockChecks = "GLOBAL:DEADLOCK:";

// What a report says: what failed (its check and rule; empty when it is not
// an error), and whether it is a deadlock check's.
struct ReportReading {
  std::string failure;
  bool deadlock = false;
};

ReportReading read_report(const std::string& text) {
  const nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
  if (report.is_discarded() || !report.is_object()) return {"a report that is not JSON (cut while it was written?)"};
  const std::string check = report.value("check", "?");
  const bool deadlock = check.starts_with(kDeadlockChecks);
  if (report.value("severity", "") != "error") return {{}, deadlock};
  std::string what = check;
  if (const std::string rule = report.value("rule", ""); !rule.empty()) what += ": " + rule;
  if (report.contains("signal") && report["signal"].is_string())
    what += fmt::format(" ({})", report["signal"].get<std::string>());
  return {what, deadlock};
}

}  // namespace

std::vector<Schedule> children(const Schedule& parent, const std::vector<Recording>& recordings, int max_changes,
                               std::size_t& beyond_bound) {
  struct Candidate {
    std::uint64_t event;
    int rank;
    int sender;
  };
  std::vector<Candidate> candidates;
  std::vector<std::vector<Event>> events(recordings.size());
  for (std::size_t rank = 0; rank < recordings.size(); ++rank) {
    events[rank] = recordings[rank].events();
    const auto forced = parent.forced.find(static_cast<int>(rank));
    const std::uint64_t first = forced == parent.forced.end() ? 0 : forced->second.size();
    for (const auto& [number, senders] : recordings[rank].alternatives) {
      if (number < first || number >= events[rank].size()) continue;
      // Receives and probes, blocking or not: the events that get
      // alternatives. A nonblocking probe's "nothing" is varied too, and a
      // receive that never completed (the run ended in it).
      const Event& taken = events[rank][number];
      if (taken.kind != Kind::Receive && taken.kind != Kind::Probe && taken.kind != Kind::Poll) continue;
      std::vector<int> others;
      for (const int sender : senders)
        if (sender != taken.value && std::find(others.begin(), others.end(), sender) == others.end())
          others.push_back(sender);
      for (const int sender : others) candidates.push_back({number, static_cast<int>(rank), sender});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.event, a.rank) < std::tie(b.event, b.rank);
  });
  std::vector<Schedule> schedules;
  if (static_cast<int>(parent.changes.size()) >= max_changes) {
    beyond_bound += candidates.size();
    return schedules;
  }
  for (const Candidate& candidate : candidates) {
    const std::vector<Event>& all = events[static_cast<std::size_t>(candidate.rank)];
    Schedule child = parent;
    std::vector<Event> prefix(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(candidate.event) + 1);
    const int was = prefix.back().value;
    prefix.back().value = candidate.sender;
    child.changes.push_back({candidate.rank, candidate.event, was, candidate.sender, prefix.back().kind});
    child.forced[candidate.rank] = std::move(prefix);
    schedules.push_back(std::move(child));
  }
  return schedules;
}

std::string key(const Schedule& schedule) {
  std::string text;
  for (const auto& [rank, events] : schedule.forced) {
    text += fmt::format("rank {}:", rank);
    for (const Event& event : events) text += ' ' + recording::event_text(event);
    text += '\n';
  }
  return text;
}

std::string schedule_text(const recording::Header& header, const std::vector<Event>* forced) {
  recording::Writer writer;
  if (forced)
    for (const Event& event : *forced) writer.append(event);
  return recording::Writer::header_text(header) + writer.take() + recording::Writer::ending_text(Ending::Free);
}


std::string_view kind_name(Kind kind) {
  return kind == Kind::Probe ? "probe" : kind == Kind::Poll ? "nonblocking probe" : "receive";
}

std::string describe(const Change& change) {
  const std::string before = change.was >= 0                      ? fmt::format("not rank {}'s", change.was)
                             : change.was == recording::kNothing ? std::string("where it found none")
                                                                 : std::string("where it took none (it never completed)");
  return fmt::format("rank {}'s {} from MPI_ANY_SOURCE at event {} {} rank {}'s message, {}", change.rank,
                     kind_name(change.kind), change.event, change.kind == Kind::Poll ? "finds" : "takes",
                     change.sender, before);
}

Outcome classify(const RunFacts& run, const Schedule& schedule, int usual_exit_status) {
  for (std::size_t rank = 0; rank < run.recordings.size(); ++rank)
    if (run.recordings[rank].ending == Ending::Diverged)
      return {Verdict::Infeasible,
              fmt::format("rank {} called otherwise than its schedule (its replay diverged)", rank)};
  const ReportReading job = run.job_report ? read_report(*run.job_report) : ReportReading{};
  std::string what = job.failure;
  for (const auto& [rank, text] : run.rank_reports) {
    if (!what.empty()) break;
    if (const std::string failed = read_report(text).failure; !failed.empty())
      what = fmt::format("rank {}: {}", rank, failed);
  }
  if (what.empty() && run.killed) what = "no end and no verdict within the time limit (killed)";
  if (what.empty() && run.exit_status != usual_exit_status)
    what = fmt::format("exit status {} (the first run: {})", run.exit_status, usual_exit_status);
  if (what.empty()) return {Verdict::Passed, {}};
  // A hang may be the schedule's: a forced receive waiting for a message
  // its sender does not send in this run.
  if (run.killed || job.deadlock) {
    for (const auto& [rank, forced] : schedule.forced) {
      const std::vector<Event> came = static_cast<std::size_t>(rank) < run.recordings.size()
                                          ? run.recordings[static_cast<std::size_t>(rank)].events()
                                          : std::vector<Event>{};
      for (std::size_t i = 0; i < forced.size(); ++i) {
        if (i < came.size() && came[i].value != recording::kUnknown) continue;
        return {Verdict::Infeasible,
                fmt::format("it hung before rank {}'s forced outcome {} ({}) came ({}): that outcome may not be "
                            "possible in this run",
                            rank, i, recording::event_text(forced[i]), what)};
      }
    }
  }
  return {Verdict::Failed, what, job.deadlock && what == job.failure};
}

}  // namespace mpisentry::offline::explore
