// What the scenarios share: the programs and tools under test, the commands
// that run them, and the checks on deadlock reports and clean runs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "job.hpp"

namespace harness {

// A test program: its executable and its source (for the marked lines).
struct Program {
  std::string executable;
  std::string source;
};

// The build passes PROGRAM_<name> and SOURCE_<name> for every test program.
#define TEST_PROGRAM(name) ::harness::Program{PROGRAM_##name, SOURCE_##name}

// The line of the program's source marked "mpisentry: <mark>", which must be
// the only one so marked.
int marked_line(const Program& program, const std::string& mark);

// The deadlock tests run with the defaults: DEADLOCK-TIMEOUT auto reports a
// deadlock proven whatever the time as soon as two looks confirm it.
inline const std::vector<std::string> kDeadlockOptions = {};
// For a program whose erroneous arguments are made on purpose, where MPI's own errors are what a test is about:
// the argument checks, on by default, would report them first.
inline const std::vector<std::string> kArgumentChecksOff = {"--check", "LOCAL:ARGUMENT:** OFF"};
// An explicit DEADLOCK-TIMEOUT (ITC's meaning: no HARD verdict before it),
// for the verdicts that need waits only some MPI implementations make and
// for what the tests time against it; the programs' computation times are
// multiples of it.
inline constexpr int kDeadlockTimeoutSeconds = 3;
inline const std::string kDeadlockTimeout = std::to_string(kDeadlockTimeoutSeconds) + "s";
inline const std::vector<std::string> kTimedDeadlockOptions = {"--deadlock-timeout", kDeadlockTimeout};
// How long the correct programs' busy rank computes, in seconds, under the
// defaults: long past the moment a proven verdict may be taken (0.4 s after
// the ranks block, reported within about a second), so that a checker that
// took waiting for a busy rank as a deadlock would report one while it
// computes.
inline const std::string kLongComputation = "3";
// The same under kTimedDeadlockOptions: twice the timeout.
inline const std::string kTimedComputation = std::to_string(2 * kDeadlockTimeoutSeconds);
// The most a detected deadlock may take from the job's start to its end.
inline constexpr double kDeadlockJobSeconds = 30;

// Whether the MPI has MPI 4.0's functions; Open MPI 4.1 has not, and there
// the test programs that call them end with status 77 (lacks_mpi4 in
// support.c).
inline constexpr bool kMpi4 = MPISENTRY_MPI_VERSION >= 4;
// For a test case of MPI 4.0's `functions`: false, with a warning that names
// them, where the MPI lacks them.
bool mpi_has(const std::string& functions);

// What Open MPI's mpiexec needs on these machines: the settings of
// scripts/openmpi.env.
Environment open_mpi_settings();

// mpisentry <options> --report-file <workspace report> --report-json
// <workspace JSON>: the checker's part of every checked command line, before
// the job's. Every JSON report is checked against the schema (job.cpp).
std::vector<std::string> checker_prefix(const Workspace& workspace, const std::vector<std::string>& options);
// checker_prefix, then -n <ranks> <program> <args>
std::vector<std::string> checked_command(const Workspace& workspace, int ranks, const Program& program,
                                         const std::vector<std::string>& options,
                                         const std::vector<std::string>& args = {});
// Runs checked_command to its end.
JobResult run_checked(const Workspace& workspace, int ranks, const Program& program,
                      const std::vector<std::string>& options, const std::vector<std::string>& args = {});
// mpiexec -n <ranks> <program> <args>, without the checker.
std::vector<std::string> plain_command(int ranks, const Program& program, const std::vector<std::string>& args = {});

// The library preloaded, configured through the environment, with the report
// files of checker_prefix.
Environment preload_environment(const Workspace& workspace);

struct ExpectedDeadlock {
  std::string check = "GLOBAL:DEADLOCK:HARD";
  // Rank -> a regex that rank's blocked call must match.
  std::map<int, std::string> calls;
  // The function holding each marked line of the program's source, in
  // order; an empty name accepts any function (Fortran's main program).
  std::vector<std::string> blocking_functions;
  // Only the marked lines tagged "[shape]" count, when not empty.
  std::string shape = "";
  // When not empty: the ranks of the report's cycle (check_cycle).
  std::vector<int> cycle = {};
  // Words of the rule that fired, which the report must hold.
  std::string rule = "";
};

// The job failed by itself soon after the start, rank 0's verdict is on
// stderr and in the report, every expected call is there and the stacks show
// each marked line of the program in its function; the cycle, when given,
// and the rule's words.
void check_deadlock(const JobResult& result, const Program& program, const ExpectedDeadlock& expected);

// What a test program says it does, in lines of its source that carry
// "mpisentry-expect:", beside the lines it marks "mpisentry: blocks":
//   mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD   how many ranks it needs, the verdict
//   mpisentry-expect: rank 0 MPI_Recv\(.*source=1\b  a regex that rank's blocked call matches
//   mpisentry-expect: blocks in exchange other        the function of each marked line, in order;
//                                                     "*" for any (Fortran's main program)
//   mpisentry-expect: cycle 0 2                       the ranks of the report's cycle
//   mpisentry-expect: rule every rank is blocked      words of the rule the report gives
//   mpisentry-expect: args 0 deadlock                 the program's arguments for its hang
// Throws std::runtime_error naming the file and line of a line it cannot read.
struct ProgramExpectation {
  int ranks = 0;
  std::vector<std::string> args;
  ExpectedDeadlock deadlock;
};
ProgramExpectation expectation_of(const Program& program);

// The one body of the deadlock tests: runs the program under the checker
// with `options` and the ranks it asks for, and checks the deadlock it
// expects (check_deadlock). Returns the run, for what a test checks beyond.
JobResult check_expected_deadlock(const Program& program, const std::vector<std::string>& options = kDeadlockOptions);

// The job ended with `exit_status`, with neither error nor global warning on
// stderr and no file written beyond the captured output.
void check_clean_run(const JobResult& result, const Workspace& workspace, int exit_status = 0);

// Runs the program without the checker, then with it and `options`: the
// checked run must be clean, with the same exit status and stdout. Returns
// the unchecked run, for checks of what the program did.
JobResult check_unchanged_by_checker(const Workspace& workspace, int ranks, const Program& program,
                                     const std::vector<std::string>& options,
                                     const std::vector<std::string>& args = {});

// A job that ends by itself (a crash, an early exit) can end differently
// from run to run without the checker too: Hydra's status is that of the rank
// it sees end first. Runs `plain` (the job without the checker) until one run
// ends as `checked` did, at most a few times, and fails when none does.
void check_ending_possible_without_checker(const Workspace& workspace, const std::vector<std::string>& plain,
                                           const JobResult& checked);

// The report's line "deadlock: rank a -> rank b -> ... (reasons)", or "".
std::string cycle_line(const std::string& report);

// The report's cycle goes through exactly `ranks` (in some rotation) and
// names no other rank.
void check_cycle(const JobResult& result, const std::vector<int>& ranks);

// `options` followed by `more`.
std::vector<std::string> with(std::vector<std::string> options, const std::vector<std::string>& more);

// A consistency finding: each pattern matches a line of stderr and a line of
// the report file.
void check_reported(const JobResult& result, const std::vector<std::string>& patterns);

}  // namespace harness
