#include "job.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

extern char** environ;

namespace harness {
namespace {

constexpr std::chrono::milliseconds kPollInterval{20};

std::string join(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& word : words) joined += (joined.empty() ? "" : " ") + word;
  return joined;
}

bool starts_with_any(const std::string& entry, std::initializer_list<const char*> prefixes) {
  for (const char* prefix : prefixes)
    if (entry.starts_with(prefix)) return true;
  return false;
}

// The inherited environment, less the variables that configure the checker
// (a developer's shell must not change what a test sees) but for the
// mpiexec that the mpisentry command runs (scripts/openmpi's), plus `env`. In a
// sanitizer build, the sanitizer's runtime comes first in LD_PRELOAD: the
// preloaded libraries and the programs need it loaded before any other.
std::vector<std::string> job_environment(const Environment& env) {
  const std::string runtime = MPISENTRY_SANITIZER_RUNTIME;
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry)
    if (!starts_with_any(*entry, {"MPISENTRY_", "VT_", "LD_PRELOAD="}) ||
        starts_with_any(*entry, {"MPISENTRY_MPIEXEC="}))
      entries.emplace_back(*entry);
  for (const auto& [name, value] : env)
    entries.push_back(name + "=" + (name == "LD_PRELOAD" && !runtime.empty() ? runtime + ":" : "") + value);
  return entries;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

void check_spawn_call(int error, const char* what) {
  if (error != 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(error));
}

// Copies the workspace's JSON reports (report.json, report.rankN.json; other
// JSON files a test writes are not reports) into $MPISENTRY_TEST_JSON_REPORTS,
// when set: ctest's last test validates them all against
// docs/report-schema.json.
void keep_json_reports(const Workspace& workspace) {
  const char* keep_dir = std::getenv("MPISENTRY_TEST_JSON_REPORTS");
  if (keep_dir == nullptr || *keep_dir == '\0') return;
  static int kept = 0;
  std::error_code error;
  std::filesystem::create_directories(keep_dir, error);
  for (const auto& entry : std::filesystem::directory_iterator(workspace.dir(), error)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".json" || !file.starts_with(workspace.json_path().stem().string())) continue;
    const std::string name = std::to_string(::getpid()) + "-" + std::to_string(++kept) + "-" + file;
    std::filesystem::copy_file(entry.path(), std::filesystem::path(keep_dir) / name, error);
  }
}

}  // namespace

Workspace::Workspace() {
  std::string pattern = (std::filesystem::temp_directory_path() / "mpisentry-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
  dir_ = pattern;
}

Workspace::~Workspace() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string describe(const JobResult& result) {
  std::ostringstream text;
  text << "command: " << result.command << "\n";
  if (result.timed_out)
    text << "timed out and killed";
  else if (result.signal != 0)
    text << "ended by signal " << result.signal << " (" << strsignal(result.signal) << ")";
  else
    text << "exit status " << result.exit_status;
  text << " after " << result.elapsed_seconds << " s\n";
  text << "--- stderr ---\n" << result.err << "--- stdout ---\n" << result.out;
  const std::pair<const char*, const std::optional<std::string>*> reports[] = {
      {"report", &result.report}, {"JSON report", &result.report_json}, {"DOT report", &result.report_dot}};
  for (const auto& [name, report] : reports)
    if (*report) text << "--- " << name << " ---\n" << **report;
  return text.str();
}

Job::Job(const Workspace& workspace, std::vector<std::string> argv, const Environment& env, Seconds timeout)
    : workspace_(workspace), command_(join(argv)) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  check_spawn_call(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init");
  check_spawn_call(posix_spawnattr_init(&attributes), "posix_spawnattr_init");
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, workspace.stdout_path().c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, workspace.stderr_path().c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, workspace.dir().c_str());
  // Its own process group, so that a timeout or a signal reaches the whole
  // job; default signal handling and no blocked signals, whatever the test
  // runner set up for itself.
  sigset_t all_signals;
  sigset_t no_signals;
  sigfillset(&all_signals);
  sigemptyset(&no_signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigdefault(&attributes, &all_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);

  std::vector<std::string> environment = job_environment(env);
  std::vector<char*> argv_pointers = c_strings(argv);
  std::vector<char*> env_pointers = c_strings(environment);
  start_ = std::chrono::steady_clock::now();
  deadline_ = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  const int error = posix_spawnp(&pid_, argv_pointers[0], &actions, &attributes, argv_pointers.data(),
                                 env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) throw std::runtime_error("cannot start " + command_ + ": " + std::strerror(error));
}

Job::~Job() {
  if (!end_) {
    kill(-pid_, SIGKILL);
    reap(true);
  }
}

bool Job::reap(bool block) {
  if (end_) return true;
  pid_t reaped;
  do reaped = waitpid(pid_, &wait_status_, block ? 0 : WNOHANG);
  while (reaped < 0 && errno == EINTR);
  if (reaped != pid_) return false;
  end_ = std::chrono::steady_clock::now();
  // Whatever the job left behind in its group goes too.
  kill(-pid_, SIGKILL);
  return true;
}

bool Job::wait_until(const std::function<bool()>& condition, Seconds within) {
  const auto give_up = std::chrono::steady_clock::now() + within;
  while (!condition()) {
    if (reap(false)) return condition();
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

bool Job::wait_for_text(const std::filesystem::path& file, const std::string& text, Seconds within) {
  return wait_until(
      [&] {
        const std::optional<std::string> contents = read_file(file);
        return contents && contents->find(text) != std::string::npos;
      },
      within);
}

void Job::signal_group(int signal_number) {
  if (!end_) kill(-pid_, signal_number);
}

void Job::signal_leader(int signal_number) {
  if (!end_) kill(pid_, signal_number);
}

JobResult Job::finish() {
  while (!reap(false)) {
    if (std::chrono::steady_clock::now() >= deadline_) {
      timed_out_ = true;
      kill(-pid_, SIGKILL);
      reap(true);
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  JobResult result;
  result.command = command_;
  result.timed_out = timed_out_;
  if (WIFEXITED(wait_status_)) result.exit_status = WEXITSTATUS(wait_status_);
  if (WIFSIGNALED(wait_status_)) result.signal = WTERMSIG(wait_status_);
  result.elapsed_seconds = Seconds(*end_ - start_).count();
  result.out = read_file(workspace_.stdout_path()).value_or("");
  result.err = read_file(workspace_.stderr_path()).value_or("");
  result.report = read_file(workspace_.report_path());
  result.report_json = read_file(workspace_.json_path());
  result.report_dot = read_file(workspace_.dot_path());
  keep_json_reports(workspace_);
  // A sanitizer build's finding (every sanitizer's report has a line
  // "ERROR: AddressSanitizer: ..." or "SUMMARY: UndefinedBehaviorSanitizer:
  // ...") fails the test, also one whose job was meant to fail.
  INFO(describe(result));
  CHECK(result.err.find("Sanitizer:") == std::string::npos);
  return result;
}

JobResult run_job(const Workspace& workspace, std::vector<std::string> argv, const Environment& env) {
  return Job(workspace, std::move(argv), env).finish();
}

}  // namespace harness
