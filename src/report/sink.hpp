// The report sink: every report of the checker reaches its readers here, in
// one order, under one lock.
//
//  - The order: the report file first, written and flushed to disk (fsync),
//    as the job may be killed at any moment; then stderr; then JSON and DOT
//    (REPORT-JSON, REPORT-DOT), each replaced by the latest report; then the
//    CI reports (REPORT-JUNIT, REPORT-SARIF), which hold every report of the
//    run: the report's record is appended to the run's records, which every
//    rank shares (a file beside the CI reports, locked with flock while a
//    rank appends and remakes the reports from it, at most kLockWait).
//  - The report lock: one report at a time in a process, so that the
//    monitor's reports, a rank's signal dump and the consistency checks'
//    findings never interleave. A report made while the same thread holds the
//    lock (a report from within a report) is written without it; a thread
//    that cannot have the lock within kLockWait (its holder was stopped by a
//    crash, whose dump is being written) writes without it too. Nothing
//    waits for the lock for ever.
//  - A failing write gives one error naming the path and the reason; the
//    report still goes to the other places.
//  - The dump handshake (SIGTERM, SIGINT: each rank writes its own dump, and
//    the launcher kills every rank as soon as one exits): after writing its
//    dump a rank marks it done with a file of its own in the handshake folder
//    the ranks share, and waits by counting the marks, never by reading the
//    report back. The folder is the report file's name with ".dumps" when
//    the report file is a regular one (or not yet written), so that ranks on
//    several nodes of a shared file system see each other; otherwise (the
//    report goes to /dev/stderr, a pipe) a folder for the job under $TMPDIR
//    or /tmp, which only the ranks of one node share. The last rank to stop
//    waiting removes it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace mpisentry::report {

struct CiRecord;

// The sink's paths, given once at start-up.
struct SinkSetup {
  std::string report_file;  // REPORT-FILE or the name made from the job; empty: stderr only
  std::string json;         // REPORT-JSON; empty: none
  std::string dot;          // REPORT-DOT; empty: none
  std::string html;         // REPORT-HTML; empty: none
  std::string junit;        // REPORT-JUNIT; empty: none
  std::string sarif;        // REPORT-SARIF; empty: none
  int rank = 0;             // MPI_COMM_WORLD rank
  int ranks = 1;            // MPI_COMM_WORLD size: the marks the dump handshake waits for
  // Names the handshake folder when the report file is not a regular file;
  // the same on every rank of the job, unique to it.
  std::string job;
  int stderr_fd = 2;  // tests write elsewhere
  // Tests: told each step of a report as it is done ("file", "stderr",
  // "json", "dot", "ci", "html", "mark"), with the report lock held when it is.
  std::function<void(std::string_view step)> trace;
};

class Sink {
 public:
  // The longest a report waits for another thread's report to finish.
  static constexpr std::chrono::milliseconds kLockWait{500};

  explicit Sink(SinkSetup setup);

  // A report of the job: text to the report file and stderr, `json` and
  // `dot` (when not empty, and their paths are set) to REPORT-JSON and
  // REPORT-DOT, `ci` (when not null) to the CI reports. True when the report
  // file has it (or there is none).
  bool write(std::string_view text, std::string_view json = {}, std::string_view dot = {},
             const CiRecord* ci = nullptr);
  // Whether REPORT-JUNIT or REPORT-SARIF is set: the reports' records are
  // wanted.
  bool wants_ci() const { return !setup_.junit.empty() || !setup_.sarif.empty(); }
  // The report's page to REPORT-HTML, when set: after write(), since making
  // the page takes longer than anything write() does.
  void write_page(std::string_view html);

  // A rank's own report when a signal ends it: as write() (`ci` too), its JSON to
  // REPORT-JSON with ".rankN" before the extension, then this rank's dump is
  // marked done for wait_for_dumps(). A rank that will not wait (a crash
  // ends it at once) marks its dump only where ranks already wait, and
  // leaves: a crash alone leaves no handshake folder behind.
  bool write_rank_dump(std::string_view text, std::string_view json, bool will_wait = true,
                       const CiRecord* ci = nullptr);
  // A report that each rank makes of its own (GLOBAL:RANK:LOST): as
  // write_rank_dump, without the dump's mark.
  bool write_rank_report(std::string_view text, std::string_view json, const CiRecord* ci = nullptr);

  // Until every rank has marked its dump done, or `deadline`. Returns how
  // many marks it saw last.
  std::size_t wait_for_dumps(std::chrono::steady_clock::time_point deadline);
  // How many ranks have marked their dumps done.
  std::size_t dumps_done() const;

  const std::string& handshake_folder() const { return handshake_; }

 private:
  class Hold;  // the report lock, taken or not
  bool write_locked(std::string_view text, std::string_view json, const std::string& json_path,
                    std::string_view dot, const CiRecord* ci);
  bool put_file(const std::string& path, std::string_view contents, bool append);
  void put_ci(const CiRecord& record);
  void step(std::string_view name) const;
  std::size_t count_marks(std::string_view prefix) const;
  bool mark(std::string_view prefix, bool create_folder = true);
  void leave_handshake();

  SinkSetup setup_;
  std::string handshake_;
  std::timed_mutex lock_;
  std::atomic<long> owner_{0};  // kernel thread id of the lock's holder; 0: none
  std::atomic<bool> handshake_broken_{false};  // this rank could not mark its dump: nobody waits
};

// "report.json" -> "report.rank3.json": a rank's own report beside the job's.
std::string per_rank_path(const std::string& path, int rank);

// Where the ranks of a job mark their dumps done (see above).
std::string handshake_folder(const std::string& report_file, const std::string& job);
// Removes a handshake folder and the marks in it (one an earlier job left).
void remove_handshake_folder(const std::string& folder);

// The file of the run's records that REPORT-JUNIT and REPORT-SARIF are
// made from: hidden beside the first of them that is set, ".NAME.records".
std::string ci_records_path(const std::string& junit, const std::string& sarif);
// Once, on rank 0, before any rank can report: removes the records an
// earlier run left and writes the CI reports of a run with no report, so
// that a clean run leaves them so and a run that never started the checker
// leaves none. Errors are logged, naming the path.
void start_ci_reports(const std::string& junit, const std::string& sarif);

// The process's sink, from MPI_Init on; start_sink once, before any report.
void start_sink(SinkSetup setup);
// Null before start_sink.
Sink* sink();

}  // namespace mpisentry::report
