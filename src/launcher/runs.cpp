#include "launcher/runs.hpp"

#include "launcher/processes.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace mpisentry::launcher::runs {
namespace {

namespace fs = std::filesystem;

std::atomic<int> stopped_by{0};

extern "C" void on_stop_signal(int signal) { stopped_by.store(signal); }

}  // namespace

void catch_stop_signals() {
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, on_stop_signal);
}

int stop_signal() { return stopped_by.load(); }

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

recording::Recording read_recording(const fs::path& dir, int rank) {
  const auto text = read_text(dir / fmt::format("rank-{}.record", rank));
  if (!text) return {};
  try {
    return recording::parse(*text);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

std::optional<std::string> prepare_directory(const fs::path& dir, std::string_view marker, std::string_view whose,
                                             std::string_view setting) {
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_empty(dir, error)) {
    if (!fs::exists(dir / marker, error))
      return fmt::format("{} holds files and is not {} (no {}): give {} another directory", dir.string(), whose,
                         marker, setting);
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) fs::remove_all(entry.path(), error);
  }
  fs::create_directories(dir, error);
  if (error) return fmt::format("cannot create {}: {}", dir.string(), error.message());
  return std::nullopt;
}

JobEnd run_job(const std::vector<std::string>& command, const Variables& variables, const fs::path& output,
               std::chrono::seconds limit, const fs::path& directory) {
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
    if (!directory.empty() && ::chdir(directory.c_str()) != 0) {
      std::fprintf(stderr, "mpisentry: cannot run in %s: %s\n", directory.c_str(), std::strerror(errno));
      std::_Exit(127);
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
    if (!killed_at && (now >= deadline || stop_signal() != 0)) {
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

offline::explore::RunFacts facts_of(const JobEnd& end, const fs::path& run_dir, const fs::path& record_dir, int ranks) {
  offline::explore::RunFacts facts;
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
  for (int rank = 0; rank < ranks; ++rank) facts.recordings.push_back(read_recording(record_dir, rank));
  return facts;
}

std::string shell_word(const std::string& word) {
  constexpr std::string_view kPlain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string::npos) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace mpisentry::launcher::runs
