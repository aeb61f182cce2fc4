// Runs the exploration of explore.hpp: each run a job of its own, in its
// own process group under a time limit, its output, report and recording in
// EXPLORE-DIR/run-K, the results in EXPLORE-DIR/explore.json after each run.
#include "launcher/explore_command.hpp"

#include "launcher/explore.hpp"
#include "launcher/processes.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mpisentry::launcher {
namespace {

namespace fs = std::filesystem;
using namespace explore;
using recording::Recording;

constexpr std::string_view kResultsFile = "explore.json";
constexpr std::string_view kSchema = "mpisentry-explore/1";

std::atomic<int> stop_signal{0};

extern "C" void on_stop_signal(int signal) { stop_signal.store(signal); }

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A rank's recording of a run; empty when the rank wrote none or it cannot be read.
Recording read_recording(const fs::path& dir, int rank) {
  const auto text = read_text(dir / fmt::format("rank-{}.record", rank));
  if (!text) return {};
  try {
    return recording::parse(*text);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

// Leaves an earlier exploration's directory empty, refuses any other.
std::optional<std::string> prepare_directory(const fs::path& dir) {
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_empty(dir, error)) {
    if (!fs::exists(dir / kResultsFile, error))
      return fmt::format("{} holds files and is not an exploration's (no {}): give EXPLORE-DIR another directory",
                         dir.string(), kResultsFile);
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) fs::remove_all(entry.path(), error);
  }
  fs::create_directories(dir, error);
  if (error) return fmt::format("cannot create {}: {}", dir.string(), error.message());
  return std::nullopt;
}

struct JobEnd {
  int exit_status = 0;
  bool killed = false;
  double seconds = 0;
};

// Runs `command` with `variables` added, output to `output`, stdin from
// /dev/null. The job stays in the explorer's process group, so that Ctrl-C,
// or whoever ends that group, ends the run too. A job that outlives `limit`
// gets SIGTERM (mpiexec passes it to the ranks), then SIGKILL with every
// process below it.
using Variables = std::vector<std::pair<std::string, std::string>>;  // an empty value unsets

JobEnd run_job(const std::vector<std::string>& command, const Variables& variables, const fs::path& output,
               std::chrono::seconds limit) {
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start a run: fork: {}", std::strerror(errno)));
  if (pid == 0) {
    const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    for (const auto& [name, value] : variables) {
      if (value.empty())
        ::unsetenv(name.c_str());
      else
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    std::vector<char*> argv;
    for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "mpisentry: cannot run %s: %s\n", argv[0], std::strerror(errno));
    std::_Exit(127);
  }
  JobEnd end;
  int status = 0;
  const auto deadline = started + limit;
  std::optional<std::chrono::steady_clock::time_point> killed_at;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    const auto now = std::chrono::steady_clock::now();
    if (!killed_at && (now >= deadline || stop_signal.load() != 0)) {
      end.killed = now >= deadline;
      ::kill(pid, SIGTERM);
      killed_at = now;
    } else if (killed_at && now - *killed_at > std::chrono::seconds(3)) {
      for (const pid_t below : descendants(pid)) ::kill(below, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  end.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return end;
}

nlohmann::json changes_json(const std::vector<Change>& changes) {
  nlohmann::json list = nlohmann::json::array();
  for (const Change& change : changes)
    list.push_back({{"rank", change.rank},
                    {"event", change.event},
                    {"kind", change.kind == recording::Kind::Probe ? "probe" : "receive"},
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

// A word as a shell reads it back.
std::string shell_word(const std::string& word) {
  constexpr std::string_view kPlain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string::npos) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

class Exploration {
 public:
  Exploration(const ExploreJob& job, fs::path dir) : job_(job), dir_(std::move(dir)) {}

  int run() {
    say(fmt::format("exploring `{}` in {}: up to {} runs, up to {} changed receives a run", command_text(),
                    dir_.string(), job_.settings.explore_runs, job_.settings.explore_changes));
    std::vector<Schedule> stack;
    stack.push_back({});
    std::set<std::string> seen;
    while (!stack.empty() && runs_ < job_.settings.explore_runs && stop_signal.load() == 0) {
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
    const Variables variables = {
        {"MPISENTRY_RECORD", record_dir.string()},
        {"MPISENTRY_REPLAY", number > 0 ? schedule_dir.string() : std::string()},
        {"MPISENTRY_REPORT_FILE", (run_dir / "report.txt").string()},
        {"MPISENTRY_REPORT_JSON", (run_dir / "report.json").string()},
    };
    const auto limit = std::chrono::duration_cast<std::chrono::seconds>(job_.settings.deadlock_timeout +
                                                                        job_.settings.deadlock_warning) +
                       std::chrono::seconds(30);
    const JobEnd end = run_job(job_.command, variables, run_dir / "output.txt", limit);

    RunFacts facts;
    facts.exit_status = end.exit_status;
    facts.killed = end.killed;
    facts.job_report = read_text(run_dir / "report.json");
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(run_dir, error)) {
      const std::string name = entry.path().filename().string();
      int rank = 0;
      if (std::sscanf(name.c_str(), "report.rank%d.json", &rank) == 1)
        facts.rank_reports[rank] = read_text(entry.path()).value_or("");
    }
    if (number == 0) {
      const Recording first = read_recording(record_dir, 0);
      ranks_ = first.header.ranks;
      if (ranks_ == 0) {
        say(fmt::format("the first run wrote no recording (it ended before MPI_Init, or is not an MPI program); "
                        "exit status {}, output in {}",
                        end.exit_status, (run_dir / "output.txt").string()));
        return {};
      }
    }
    for (int rank = 0; rank < ranks_; ++rank) {
      facts.recordings.push_back(read_recording(record_dir, rank));
      if (number > 0) continue;
      // Each rank's schedules need its header: its command line may differ (MPMD).
      if (facts.recordings.back().header.ranks != ranks_) {
        say(fmt::format("rank {} wrote no recording in the first run (see {}): nothing to explore", rank,
                        (run_dir / "output.txt").string()));
        return {};
      }
      headers_.push_back(facts.recordings.back().header);
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
        {"interrupted", stop_signal.load() != 0},
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
  bool complete() const { return left_ == 0 && beyond_bound_ == 0 && stop_signal.load() == 0 && runs_ > 0; }

  int summarize() const {
    if (static_cast<int>(headers_.size()) != ranks_ || ranks_ == 0) return 2;
    say(fmt::format("{} runs; the first run's receives from MPI_ANY_SOURCE had {} other senders' messages to try; "
                    "{} schedules could not be followed (a forced sender did not send, or the run went otherwise)",
                    runs_, first_run_points_, infeasible_));
    if (stop_signal.load() != 0) say("stopped by a signal: the exploration is not complete");
    if (left_ > 0) say(fmt::format("not explored: {} schedules waiting when the run limit ({}) was reached (EXPLORE)",
                                   left_, job_.settings.explore_runs));
    if (beyond_bound_ > 0)
      say(fmt::format("not explored: {} schedules that would change more than {} receives (EXPLORE-CHANGES)",
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
    if (stop_signal.load() != 0) return 128 + stop_signal.load();
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
  if (const auto problem = prepare_directory(dir)) {
    std::cerr << "mpisentry: EXPLORE-DIR: " << *problem << '\n';
    return 2;
  }
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, on_stop_signal);
  try {
    return Exploration(job, dir).run();
  } catch (const std::exception& failure) {
    std::cerr << "mpisentry: explore: " << failure.what() << '\n';
    return 2;
  }
}

}  // namespace mpisentry::launcher
