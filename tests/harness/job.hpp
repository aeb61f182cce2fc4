// Runs one command (an MPI job) for a test: in its own process group, with
// its output captured to files in a fresh directory, and killed with its
// whole group when it outlives its time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness {

using Seconds = std::chrono::duration<double>;
inline constexpr Seconds kJobTimeout{90};

// Variables set for the job on top of the inherited environment.
using Environment = std::vector<std::pair<std::string, std::string>>;

// A fresh temporary directory for one test's files, removed at the end.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path stdout_path() const { return dir_ / "stdout.txt"; }
  std::filesystem::path stderr_path() const { return dir_ / "stderr.txt"; }
  std::filesystem::path report_path() const { return dir_ / "report.txt"; }
  std::filesystem::path json_path() const { return dir_ / "report.json"; }
  std::filesystem::path dot_path() const { return dir_ / "report.dot"; }

 private:
  std::filesystem::path dir_;
};

struct JobResult {
  std::string command;
  bool timed_out = false;
  int exit_status = -1;  // when the command exited
  int signal = 0;        // when a signal ended it
  double elapsed_seconds = 0;
  std::string out;
  std::string err;
  // The workspace's report files, when the job wrote them.
  std::optional<std::string> report;
  std::optional<std::string> report_json;
  std::optional<std::string> report_dot;

  bool succeeded() const { return !timed_out && signal == 0 && exit_status == 0; }
  // Ended by itself, with a non-zero status or by a signal.
  bool failed() const { return !timed_out && !succeeded(); }
};

// Everything about the run, for a failing test's message.
std::string describe(const JobResult& result);

// The whole file, or nothing when it does not exist.
std::optional<std::string> read_file(const std::filesystem::path& path);

class Job {
 public:
  // Starts argv (argv[0] is looked up in PATH) in workspace.dir(), stdin
  // from /dev/null, stdout and stderr to the workspace's files. Throws
  // std::runtime_error when it cannot be started.
  Job(const Workspace& workspace, std::vector<std::string> argv, const Environment& env = {},
      Seconds timeout = kJobTimeout);
  // Kills the process group when the job still runs.
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Checks `condition` every few milliseconds until it holds (true), or
  // `within` passes or the job ends without it holding (false).
  bool wait_until(const std::function<bool()>& condition, Seconds within);
  // True when `text` appears in the file within `within`.
  bool wait_for_text(const std::filesystem::path& file, const std::string& text, Seconds within);

  void signal_group(int signal_number);
  // To the job's first process alone: mpiexec, which passes SIGUSR1 on to
  // the ranks (the launcher execs it).
  void signal_leader(int signal_number);
  // False once the job has ended.
  bool running() { return !reap(false); }
  // The command's process, also after it ended.
  pid_t pid() const { return pid_; }

  // Waits for the job to end; when its time is up kills its process group.
  JobResult finish();

 private:
  bool reap(bool block);  // true once the job has ended

  const Workspace& workspace_;
  std::string command_;
  pid_t pid_ = -1;  // also the process group's id
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<std::chrono::steady_clock::time_point> end_;
  int wait_status_ = 0;
  bool timed_out_ = false;
};

// Starts the job and waits for it to end.
JobResult run_job(const Workspace& workspace, std::vector<std::string> argv, const Environment& env = {});

}  // namespace harness
