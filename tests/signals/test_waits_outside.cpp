// Threads waiting outside MPI in the blocking system calls programs make
// (waits_outside.c), while the checker takes their stacks for an OUTSIDE_MPI
// warning, a dump and a HARD report: every call gives the result, errno and
// time it gives without the checker, so stdout and the exit status are the
// plain run's, and the report still names each call's line.
#include <signal.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

constexpr int kRanks = 3;

struct CallClass {
  std::string name;
  std::vector<std::string> calls;  // the marks "waits [call]", in function wait_<call>
};

const CallClass kSockets{"sockets", {"recv_timeout", "recvfrom_timeout", "recv", "recvfrom", "accept"}};
const CallClass kPolls{"polls", {"poll", "ppoll", "select", "epoll_wait", "epoll_pwait2"}};
const CallClass kSleeps{"sleeps", {"nanosleep", "clock_nanosleep"}};
const CallClass kProcess{"process", {"sem_timedwait", "cond_timedwait", "sigwaitinfo"}};
const CallClass kPipes{"pipes", {"pipe_read", "waitpid"}};

// DEADLOCK-WARNING 2 s: ranks 1 and 2 wait for rank 0 longer than that.
const std::vector<std::string> kWarningOptions = {"--deadlock-warning", "2s", "--deadlock-timeout", "3s"};
// No warning: the dump alone takes the stacks.
const std::vector<std::string> kDumpOptions = {"--dump-signal", "SIGUSR1"};
// How long the job runs before the dump is asked for: rank 0 is in its calls.
constexpr Seconds kBeforeDump{1.5};
constexpr Seconds kDumpTime{15};
const std::string kDumpHeadline = "[0] INFO: DUMP:";
// How long the plain run of the hang twin runs before it is ended: rank 0
// has printed all it prints before the deadlock.
constexpr Seconds kPlainHang{3};

std::string shape_and_trigger(const std::string& shape, const std::string& trigger) {
  return "shape " + shape + ", during " + trigger;
}

// Each call's line, in wait_<call>, on a stack line of `report`: every one
// when the calls wait at once (`all`), else at least one.
void check_calls_named(const std::string& report, const Program& program, const CallClass& calls, bool all) {
  int named = 0;
  for (const std::string& call : calls.calls) {
    const std::vector<int> lines = marked_lines(program.source, "waits [" + call + "]");
    REQUIRE(lines.size() == 1);
    const bool found = any_line_matches(report, frame_pattern("wait_" + call, program.source, lines[0]));
    INFO("the report names " << call << "'s line " << lines[0]);
    if (all) CHECK(found);
    named += found ? 1 : 0;
  }
  CHECK(named >= 1);
}

// The pid that `rank` printed on stderr ("pid RANK PID").
pid_t rank_pid(const std::string& err, int rank) {
  const std::regex line("^pid " + std::to_string(rank) + R"( (\d+)$)");
  std::istringstream lines(err);
  for (std::string text; std::getline(lines, text);) {
    std::smatch match;
    if (std::regex_match(text, match, line)) return static_cast<pid_t>(std::stol(match[1]));
  }
  return 0;
}

// The correct twin: rank 0's calls end by themselves, the job with status 0.
void check_correct_twin(const CallClass& calls, const std::string& shape, const std::string& trigger) {
  INFO(shape_and_trigger(shape, trigger));
  const Program program = TEST_PROGRAM(waits_outside);
  const std::vector<std::string> args = {calls.name, shape, "correct"};
  // The plain run is the same for every trigger: run once per class and shape.
  static std::map<std::vector<std::string>, JobResult> plain_runs;
  if (!plain_runs.contains(args)) {
    Workspace plain_workspace;
    plain_runs[args] = run_job(plain_workspace, plain_command(kRanks, program, args));
  }
  const JobResult& plain = plain_runs[args];
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());

  Workspace workspace;
  JobResult checked;
  bool dumped = true;
  if (trigger == "OUTSIDE_MPI") {
    checked = run_checked(workspace, kRanks, program, kWarningOptions, args);
  } else {
    Job job(workspace, checked_command(workspace, kRanks, program, kDumpOptions, args));
    REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
    std::this_thread::sleep_for(kBeforeDump);
    // To rank 1: the kernel would give rank 0's own DUMP-SIGNAL to its main
    // thread, whose call a handler cuts short (docs/forensics.md).
    const pid_t rank_1 = rank_pid(read_file(workspace.stderr_path()).value_or(""), 1);
    REQUIRE(rank_1 > 0);
    REQUIRE(::kill(rank_1, SIGUSR1) == 0);
    dumped = job.wait_for_text(workspace.report_path(), kDumpHeadline, kDumpTime);
    checked = job.finish();
  }
  INFO("with the checker:\n" << describe(checked));
  REQUIRE_FALSE(checked.timed_out);
  CHECK(dumped);
  CHECK(checked.exit_status == plain.exit_status);
  CHECK(checked.signal == plain.signal);
  CHECK(checked.out == plain.out);
  REQUIRE(checked.report.has_value());
  CHECK(checked.report->find(trigger == "OUTSIDE_MPI" ? "GLOBAL:DEADLOCK:OUTSIDE_MPI" : kDumpHeadline) !=
        std::string::npos);
  check_calls_named(*checked.report, program, calls, shape == "threads");
}

// The hang twin: ranks 1 and 2 deadlock while rank 0 waits outside MPI; the
// checker's HARD report ends the job, and what rank 0 printed before is what
// it prints without the checker.
void check_hang_twin(const CallClass& calls, const std::string& shape) {
  INFO(shape_and_trigger(shape, "HARD"));
  const Program program = TEST_PROGRAM(waits_outside);
  const std::vector<std::string> args = {calls.name, shape, "hang"};
  Workspace plain_workspace;
  Job plain_job(plain_workspace, plain_command(kRanks, program, args), {}, kPlainHang);
  const JobResult plain = plain_job.finish();
  INFO("without the checker, ended after " << kPlainHang.count() << " s:\n" << describe(plain));
  REQUIRE(plain.timed_out);
  REQUIRE(plain.out.find("ready") != std::string::npos);

  Workspace workspace;
  const JobResult checked = run_checked(workspace, kRanks, program, kDeadlockOptions, args);
  INFO("with the checker:\n" << describe(checked));
  REQUIRE_FALSE(checked.timed_out);
  CHECK(checked.failed());
  CHECK(checked.err.find("GLOBAL:DEADLOCK:HARD") != std::string::npos);
  CHECK(checked.out == plain.out);
  REQUIRE(checked.report.has_value());
  check_calls_named(*checked.report, program, calls, shape == "threads");
}

void check_class(const CallClass& calls) {
  const std::string shape = GENERATE(as<std::string>{}, "threads", "main");
  const std::string trigger = GENERATE(as<std::string>{}, "OUTSIDE_MPI", "DUMP", "HARD");
  if (trigger == "HARD")
    check_hang_twin(calls, shape);
  else
    check_correct_twin(calls, shape, trigger);
}

}  // namespace

TEST_CASE("waits_outside sockets: recv and recvfrom with and without SO_RCVTIMEO, accept, are never cut short",
          "[signal][waits_outside][.slow]") {
  check_class(kSockets);
}

TEST_CASE("waits_outside polls: poll, ppoll, select, epoll_wait, epoll_pwait2 with timeouts are never cut short",
          "[signal][waits_outside][.slow]") {
  check_class(kPolls);
}

TEST_CASE("waits_outside sleeps: nanosleep and clock_nanosleep are never cut short", "[signal][waits_outside]") {
  check_class(kSleeps);
}

TEST_CASE("waits_outside process: sem_timedwait, pthread_cond_timedwait, sigwaitinfo are never cut short",
          "[signal][waits_outside][.slow]") {
  check_class(kProcess);
}

TEST_CASE("waits_outside pipes: a read of a pipe and waitpid are never cut short",
          "[signal][waits_outside][.slow]") {
  check_class(kPipes);
}
