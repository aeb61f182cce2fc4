// The report sink: one order, one lock, and the ranks' dump handshake.
#include "report/sink.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "log/log.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kDoneMark = "done.";  // "done.3": rank 3 wrote its dump
constexpr std::string_view kLeftMark = "left.";  // "left.3": rank 3 no longer counts marks

long this_thread_id() { return static_cast<long>(syscall(SYS_gettid)); }

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

// The report lock for one report: taken, or not when this thread holds it
// already (a report from within a report) or its holder keeps it past
// kLockWait (stopped by a crash whose dump is being written).
class Sink::Hold {
 public:
  explicit Hold(Sink& sink) : sink_(sink) {
    const long self = this_thread_id();
    if (sink_.owner_.load(std::memory_order_acquire) == self) return;
    if (!take(sink_.lock_)) return;
    sink_.owner_.store(self, std::memory_order_release);
    taken_ = true;
  }
  ~Hold() {
    if (!taken_) return;
    sink_.owner_.store(0, std::memory_order_release);
    sink_.lock_.unlock();
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  // try_lock_for(kLockWait). libstdc++ 12 waits on the steady clock with
  // pthread_mutex_clocklock, which gcc 12's ThreadSanitizer does not
  // intercept (llvm-project issue 62623, intercepted from LLVM 18 on): TSan
  // never sees the lock taken, reports its unlock as "unlock of an unlocked
  // mutex" and loses the ordering the lock gives. Under TSan the same wait
  // goes by the system clock, which libstdc++ takes with
  // pthread_mutex_timedlock, intercepted by every TSan; the lock and its
  // ordering are the same, only a jump of the wall clock would change the
  // wait.
  static bool take(std::timed_mutex& lock) {
#if defined(__SANITIZE_THREAD__)
    return lock.try_lock_until(std::chrono::system_clock::now() + kLockWait);
#else
    return lock.try_lock_for(kLockWait);
#endif
  }

  Sink& sink_;
  bool taken_ = false;
};

std::string per_rank_path(const std::string& path, int rank) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string suffix = ".rank" + std::to_string(rank);
  return has_extension ? path.substr(0, dot) + suffix + path.substr(dot) : path + suffix;
}

std::string handshake_folder(const std::string& report_file, const std::string& job) {
  struct stat status {};
  const bool exists = !report_file.empty() && stat(report_file.c_str(), &status) == 0;
  const bool regular = exists ? S_ISREG(status.st_mode) : !report_file.empty();
  if (regular && access(folder_of(report_file).c_str(), W_OK) == 0) return report_file + ".dumps";
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp && *tmp ? tmp : "/tmp";
  return base + "/mpisentry-" + job + ".dumps";
}

void remove_handshake_folder(const std::string& folder) {
  if (DIR* listing = opendir(folder.c_str())) {
    while (const dirent* entry = readdir(listing)) {
      const std::string_view name = entry->d_name;
      if (name.starts_with(kDoneMark) || name.starts_with(kLeftMark)) unlink((folder + '/' + entry->d_name).c_str());
    }
    closedir(listing);
  }
  rmdir(folder.c_str());
}

Sink::Sink(SinkSetup setup) : setup_(std::move(setup)), handshake_(report::handshake_folder(setup_.report_file, setup_.job)) {}

void Sink::step(std::string_view name) const {
  if (setup_.trace) setup_.trace(name);
}

bool Sink::put_file(const std::string& path, std::string_view contents, bool append) {
  const std::string problem = write_file(path, std::string(contents), append);
  if (problem.empty()) return true;
  log::error("{}", problem);
  return false;
}

bool Sink::write_locked(std::string_view text, std::string_view json, const std::string& json_path,
                        std::string_view dot, const CiRecord* ci) {
  bool on_file = true;
  if (!setup_.report_file.empty()) {
    on_file = put_file(setup_.report_file, text, /*append=*/true);
    step("file");
  }
  write_all(setup_.stderr_fd, text);
  step("stderr");
  if (!json.empty() && !json_path.empty()) {
    put_file(json_path, json, /*append=*/false);
    step("json");
  }
  if (!dot.empty() && !setup_.dot.empty()) {
    put_file(setup_.dot, dot, /*append=*/false);
    step("dot");
  }
  if (ci != nullptr && wants_ci()) {
    put_ci(*ci);
    step("ci");
  }
  return on_file;
}

// The record joins the run's records, and both CI reports are made again
// from all of them, under the records' file lock: another rank's record
// appended between the two would be missing from the reports it renames
// over this rank's.
void Sink::put_ci(const CiRecord& record) {
  const std::string records = ci_records_path(setup_.junit, setup_.sarif);
  int fd;
  do {
    fd = ::open(records.c_str(), O_CREAT | O_RDWR | O_APPEND | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    log::error("cannot write the CI reports' records \"{}\": {}", records, strerror(errno));
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + kLockWait;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EINTR) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  std::string all;
  if (put_file(records, ci_record_line(record), /*append=*/true)) {
    char buffer[1 << 16];
    for (off_t at = 0;;) {
      const ssize_t count = ::pread(fd, buffer, sizeof buffer, at);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) break;
      all.append(buffer, static_cast<std::size_t>(count));
      at += count;
    }
    const std::vector<CiRecord> run = read_ci_records(all);
    if (!setup_.junit.empty()) put_file(setup_.junit, format_junit(run), /*append=*/false);
    if (!setup_.sarif.empty()) put_file(setup_.sarif, format_sarif(run), /*append=*/false);
  }
  ::close(fd);  // and the lock with it
}

bool Sink::write(std::string_view text, std::string_view json, std::string_view dot, const CiRecord* ci) {
  const Hold hold(*this);
  return write_locked(text, json, setup_.json, dot, ci);
}

void Sink::write_page(std::string_view html) {
  if (setup_.html.empty()) return;
  const Hold hold(*this);
  put_file(setup_.html, html, /*append=*/false);
  step("html");
}

bool Sink::write_rank_report(std::string_view text, std::string_view json, const CiRecord* ci) {
  const Hold hold(*this);
  return write_locked(text, json, setup_.json.empty() ? std::string() : per_rank_path(setup_.json, setup_.rank), {},
                      ci);
}

bool Sink::write_rank_dump(std::string_view text, std::string_view json, bool will_wait, const CiRecord* ci) {
  const bool on_file = write_rank_report(text, json, ci);
  if (!will_wait) {
    if (mark(kDoneMark, /*create_folder=*/false)) leave_handshake();
  } else if (!mark(kDoneMark)) {
    const int error = errno;
    handshake_broken_.store(true, std::memory_order_release);
    log::error("cannot mark this rank's dump done in \"{}\": {}; the ranks do not wait for each other's dumps",
               handshake_, strerror(error));
  }
  step("mark");
  return on_file;
}

bool Sink::mark(std::string_view prefix, bool create_folder) {
  if (create_folder && mkdir(handshake_.c_str(), 0755) != 0 && errno != EEXIST) return false;
  const std::string path = handshake_ + '/' + std::string(prefix) + std::to_string(setup_.rank);
  int fd;
  do {
    fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::size_t Sink::count_marks(std::string_view prefix) const {
  std::size_t count = 0;
  DIR* listing = opendir(handshake_.c_str());
  if (!listing) return 0;
  while (const dirent* entry = readdir(listing))
    if (std::string_view(entry->d_name).starts_with(prefix)) ++count;
  closedir(listing);
  return count;
}

std::size_t Sink::dumps_done() const { return count_marks(kDoneMark); }

std::size_t Sink::wait_for_dumps(std::chrono::steady_clock::time_point deadline) {
  if (handshake_broken_.load(std::memory_order_acquire)) return dumps_done();
  const auto ranks = static_cast<std::size_t>(setup_.ranks);
  std::size_t done = dumps_done();
  while (done < ranks && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
    done = dumps_done();
  }
  leave_handshake();
  return done;
}

// The rank that finds every rank gone from the handshake removes the folder:
// nobody counts its marks any more.
void Sink::leave_handshake() {
  if (!mark(kLeftMark)) return;
  if (count_marks(kLeftMark) >= static_cast<std::size_t>(setup_.ranks)) remove_handshake_folder(handshake_);
}

std::string ci_records_path(const std::string& junit, const std::string& sarif) {
  const std::string& beside = junit.empty() ? sarif : junit;
  const std::size_t slash = beside.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  return beside.substr(0, name) + "." + beside.substr(name) + ".records";
}

void start_ci_reports(const std::string& junit, const std::string& sarif) {
  if (junit.empty() && sarif.empty()) return;
  const std::string records = ci_records_path(junit, sarif);
  if (::unlink(records.c_str()) != 0 && errno != ENOENT)
    log::error("cannot remove the CI reports' records \"{}\" of an earlier run: {}", records, strerror(errno));
  for (const auto& [path, text] : {std::pair{&junit, format_junit({})}, std::pair{&sarif, format_sarif({})}})
    if (!path->empty())
      if (const std::string problem = write_file(*path, text, /*append=*/false); !problem.empty())
        log::error("{}", problem);
}

namespace {
Sink* process_sink = nullptr;  // never destroyed: reports may come during exit
}

void start_sink(SinkSetup setup) {
  if (!process_sink) process_sink = new Sink(std::move(setup));
}

Sink* sink() { return process_sink; }

}  // namespace mpisentry::report
