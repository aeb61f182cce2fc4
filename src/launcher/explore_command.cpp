// Runs the exploration of explore.hpp: each run a job of its own, in its
// own process group under a time limit, its output, report and recording in
// EXPLORE-DIR/run-K, the results in EXPLORE-DIR/explore.json after each run.
#include "launcher/explore_command.hpp"

#include "config/exit_status.hpp"

#include "offline/explore.hpp"
#include "launcher/runs.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mpisentry::launcher {
namespace {

namespace fs = std::filesystem;
using namespace offline::explore;
using recording::Recording;
using runs::shell_word;
using runs::stop_signal;

constexpr std::string_view kResultsFile = "explore.json";
constexpr std::string_view kSchema = "mpisentry-explore/1";

nlohmann::json changes_json(const std::vector<Change>& changes) {
  nlohmann::json list = nlohmann::json::array();
  for (const Change& change : changes)
    list.push_back({{"rank", change.rank},
                    {"event", change.event},
                    {"kind", kind_name(change.kind)},
                    {"was", change.was},
                    {"sender", change.sender},
                    {"text", describe(change)}});
  return list;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Passed: return "passed";
    case Verdict::Failed: return "failed";
    case Verdict::Infeasible: return "infeasible";
  }
  return "?";
}

class Exploration {
 public:
  Exploration(const ExploreJob& job, fs::path dir) : job_(job), dir_(std::move(dir)) {}

  int run() {
    say(fmt::format("exploring `{}` in {}: up to {} runs, up to {} changed receives or probes a run", command_text(),
                    dir_.string(), job_.settings.explore_runs, job_.settings.explore_changes));
    std::vector<Schedule> stack;
    stack.push_back({});
    std::set<std::string> seen;
    while (!stack.empty() && runs_ < job_.settings.explore_runs && stop_signal() == 0) {
      Schedule schedule = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(key(schedule)).second) continue;
      const std::vector<Recording> recordings = explore_one(schedule);
      if (recordings.empty()) break;  // the first run left no recording to explore from
      std::vector<Schedule> opened = children(schedule, recordings, job_.settings.explore_changes, beyond_bound_);
      if (runs_ == 1) first_run_points_ = opened.size() + beyond_bound_;
      for (auto it = opened.rbegin(); it != opened.rend(); ++it) stack.push_back(std::move(*it));
      left_ = stack.size();
      write_results(false);
    }
    left_ = stack.size();
    write_results(true);
    return summarize();
  }

 private:
  std::string command_text() const {
    std::string text;
    for (const std::string& word : job_.command) text += (text.empty() ? "" : " ") + shell_word(word);
    return text;
  }

  void say(const std::string& line) const { std::cerr << "mpisentry: explore: " << line << std::endl; }

  // Runs `schedule` as run runs_ and classifies it; its recordings by rank.
  std::vector<Recording> explore_one(const Schedule& schedule) {
    const int number = runs_++;
    const fs::path run_dir = dir_ / fmt::format("run-{}", number);
    const fs::path record_dir = run_dir / "record";
    const fs::path schedule_dir = run_dir / "schedule";
    fs::create_directories(run_dir);
    // The first run replays nothing; the others, their schedule.
    if (number > 0) {
      fs::create_directories(schedule_dir);
      for (int rank = 0; rank < ranks_; ++rank) {
        const auto forced = schedule.forced.find(rank);
        std::ofstream(schedule_dir / fmt::format("rank-{}.record", rank))
            << schedule_text(headers_[static_cast<std::size_t>(rank)],
                             forced == schedule.forced.end() ? nullptr : &forced->second);
      }
    }
    const runs::Variables variables = {
        {"MPISENTRY_RECORD", record_dir.string()},
        {"MPISENTRY_REPLAY", number > 0 ? schedule_dir.string() : std::string()},
        {"MPISENTRY_REPORT_FILE", (run_dir / "report.txt").string()},
        {"MPISENTRY_REPORT_JSON", (run_dir / "report.json").string()},
    };
    const auto limit = std::chrono::duration_cast<std::chrono::seconds>(
                           config::any_verdict_after(job_.settings.deadlock_timeout) + job_.settings.deadlock_warning) +
                       std::chrono::seconds(30);
    const runs::JobEnd end = runs::run_job(job_.command, variables, run_dir / "output.txt", limit);

    if (number == 0) {
      const Recording first = runs::read_recording(record_dir, 0);
      ranks_ = first.header.ranks;
      if (ranks_ == 0) {
        say(fmt::format("the first run wrote no recording (it ended before MPI_Init, or is not an MPI program); "
                        "exit status {}, output in {}",
                        end.exit_status, (run_dir / "output.txt").string()));
        return {};
      }
    }
    const RunFacts facts = runs::facts_of(end, run_dir, record_dir, ranks_);
    for (int rank = 0; rank < ranks_ && number == 0; ++rank) {
      // Each rank's schedules need its header: its command line may differ (MPMD).
      const recording::Header& header = facts.recordings[static_cast<std::size_t>(rank)].header;
      if (header.ranks != ranks_) {
        say(fmt::format("rank {} wrote no recording in the first run (see {}): nothing to explore", rank,
                        (run_dir / "output.txt").string()));
        return {};
      }
      headers_.push_back(header);
    }
    const Outcome outcome = classify(facts, schedule, usual_exit_status_);
    if (number == 0 && outcome.verdict == Verdict::Passed) usual_exit_status_ = end.exit_status;
    if (outcome.verdict == Verdict::Infeasible) ++infeasible_;

    std::string change = number == 0 ? "as it runs" : describe(schedule.changes.back());
    if (schedule.changes.size() > 1) change += fmt::format(", {} changes in all", schedule.changes.size());
    say(fmt::format("run {} ({} of at most {}; {} schedules waiting): {}: {}{} ({:.1f} s)", number, runs_,
                    job_.settings.explore_runs, left_, change, verdict_name(outcome.verdict),
                    outcome.what.empty() ? "" : ", " + outcome.what, end.seconds));
    nlohmann::json entry = {{"run", number},
                            {"verdict", verdict_name(outcome.verdict)},
                            {"what", outcome.what},
                            {"changes", changes_json(schedule.changes)},
                            {"exit_status", end.exit_status},
                            {"seconds", end.seconds},
                            {"directory", run_dir.string()}};
    if (outcome.verdict == Verdict::Failed) {
      entry["replay"] = replay_command(record_dir);
      failures_.push_back(entry);
    }
    runs_json_.push_back(std::move(entry));
    return facts.recordings;
  }

  std::string replay_command(const fs::path& record_dir) const {
    std::string text = "mpisentry --replay " + shell_word(record_dir.string());
    for (const std::string& word : job_.replay_arguments) text += ' ' + shell_word(word);
    return text;
  }

  void write_results(bool finished) const {
    const nlohmann::json results = {
        {"schema", kSchema},
        {"command", job_.command},
        {"finished", finished},
        {"interrupted", stop_signal() != 0},
        {"runs", runs_},
        {"run_limit", job_.settings.explore_runs},
        {"change_limit", job_.settings.explore_changes},
        {"first_run_alternatives", first_run_points_},
        {"infeasible", infeasible_},
        {"left_unexplored", {{"by_run_limit", left_}, {"by_change_limit", beyond_bound_}}},
        {"complete", complete()},
        {"failures", failures_},
        {"run_results", runs_json_}};
    const fs::path path = dir_ / kResultsFile;
    const fs::path temporary = dir_ / fmt::format("{}.part", kResultsFile);
    std::ofstream(temporary, std::ios::trunc) << results.dump(1) << '\n';
    std::error_code error;
    fs::rename(temporary, path, error);
  }

  // Every matching found was tried: nothing left by a limit or a stop.
  bool complete() const { return left_ == 0 && beyond_bound_ == 0 && stop_signal() == 0 && runs_ > 0; }

  int summarize() const {
    if (static_cast<int>(headers_.size()) != ranks_ || ranks_ == 0) return config::kCommandFailedStatus;
    say(fmt::format("{} runs; the first run's receives and probes from MPI_ANY_SOURCE had {} other senders' messages to try; "
                    "{} schedules could not be followed (a forced sender did not send, or the run went otherwise)",
                    runs_, first_run_points_, infeasible_));
    if (stop_signal() != 0) say("stopped by a signal: the exploration is not complete");
    if (left_ > 0) say(fmt::format("not explored: {} schedules waiting when the run limit ({}) was reached (EXPLORE)",
                                   left_, job_.settings.explore_runs));
    if (beyond_bound_ > 0)
      say(fmt::format("not explored: {} schedules that would change more than {} receives or probes (EXPLORE-CHANGES)",
                      beyond_bound_, job_.settings.explore_changes));
    if (failures_.empty()) {
      say(complete() ? "no failure under any matching tried, and every other sender the runs showed was tried"
                     : "no failure in the runs made; the exploration is NOT complete (see above)");
    } else {
      say(fmt::format("{} failing run{}:", failures_.size(), failures_.size() == 1 ? "" : "s"));
      for (const nlohmann::json& failure : failures_) {
        say(fmt::format("  run {}: {}", failure["run"].get<int>(), failure["what"].get<std::string>()));
        for (const nlohmann::json& change : failure["changes"]) say("    where " + change["text"].get<std::string>());
        say(fmt::format("    output and report: {}; replay: {}", failure["directory"].get<std::string>(),
                        failure["replay"].get<std::string>()));
      }
    }
    say(fmt::format("results: {}", (dir_ / kResultsFile).string()));
    if (stop_signal() != 0) return 128 + stop_signal();
    return failures_.empty() ? 0 : 1;
  }

  const ExploreJob& job_;
  fs::path dir_;
  int runs_ = 0;
  int ranks_ = 0;
  int usual_exit_status_ = 0;
  std::vector<recording::Header> headers_;
  std::size_t first_run_points_ = 0;
  std::size_t beyond_bound_ = 0;
  std::size_t left_ = 0;
  std::size_t infeasible_ = 0;
  nlohmann::json failures_ = nlohmann::json::array();
  nlohmann::json runs_json_ = nlohmann::json::array();
};

}  // namespace

int run_exploration(const ExploreJob& job) {
  const fs::path dir = fs::absolute(job.settings.explore_dir.empty() ? "mpisentry-explore" : job.settings.explore_dir);
  if (const auto problem = runs::prepare_directory(dir, kResultsFile, "an exploration's", "EXPLORE-DIR")) {
    std::cerr << "mpisentry: EXPLORE-DIR: " << *problem << '\n';
    return config::kCommandFailedStatus;
  }
  runs::catch_stop_signals();
  try {
    return Exploration(job, dir).run();
  } catch (const std::exception& failure) {
    std::cerr << "mpisentry: explore: " << failure.what() << '\n';
    return config::kCommandFailedStatus;
  }
}

}  // namespace mpisentry::launcher
