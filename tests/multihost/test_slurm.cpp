// Jobs under Slurm on the bed's cluster (scripts/multihost starts munge,
// slurmctld and one slurmd per host): the checker launched around srun, a
// batch script that runs it, scancel --signal for a dump, and the SIGTERM of
// a job that runs past its time limit.
#include <fstream>
#include <regex>

#include <catch2/catch.hpp>

#include "../deadlock/ssend_ring.hpp"
#include "bed.hpp"
#include "report_text.hpp"

using namespace harness;

namespace {

// A job on the bed's Slurm has been seen to reach its verdict up to 80 s
// later than under mpiexec (sbatch: 10, 42, 46 and 93 s in five runs; the
// ranks blocked all along), cause not yet found: its hard limit is wider.
constexpr Seconds kSlurmJobTimeout{240};

JobResult run_slurm_job(const Workspace& workspace, std::vector<std::string> argv) {
  return Job(workspace, std::move(argv), {}, kSlurmJobTimeout).finish();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A batch script in the workspace that runs `command` (words, each quoted),
// submitted by `sbatch --wait` with `sbatch_options`: sbatch ends with the job.
std::vector<std::string> batch_job(const Workspace& workspace, const std::vector<std::string>& sbatch_options,
                                   const std::vector<std::string>& command) {
  const std::filesystem::path script = workspace.dir() / "job.sh";
  std::ofstream out(script);
  out << "#!/bin/sh\nexec";
  for (const std::string& word : command) out << " '" << word << "'";
  out << "\n";
  out.close();
  std::vector<std::string> sbatch{"sbatch", "--wait", "--output", (workspace.dir() / "job.out").string()};
  sbatch.insert(sbatch.end(), sbatch_options.begin(), sbatch_options.end());
  sbatch.push_back(script.string());
  return sbatch;
}

std::string job_output(const Workspace& workspace) { return read_file(workspace.dir() / "job.out").value_or(""); }

// The job id sbatch printed ("Submitted batch job 12"), once it has.
std::string submitted_job(Job& job, const Workspace& workspace) {
  std::string id;
  job.wait_until(
      [&] {
        std::smatch found;
        const std::string out = read_file(workspace.stdout_path()).value_or("");
        if (std::regex_search(out, found, std::regex(R"(Submitted batch job (\d+))"))) id = found[1];
        return !id.empty();
      },
      Seconds{20});
  return id;
}

// mpisentry <options> --report-file <workspace report> --, before srun.
std::vector<std::string> checker(const Workspace& workspace, const std::vector<std::string>& options) {
  return with(checker_prefix(workspace, options), {"--"});
}

}  // namespace

TEST_CASE("slurm srun: `mpisentry -- srun` over two nodes reports a cycle as HARD", "[.slurm]") {
  const Program program = TEST_PROGRAM(ssend_ring);
  Workspace workspace;
  const JobResult result =
      run_slurm_job(workspace,
                    with(checker(workspace, kDeadlockOptions), {"srun", "-N", "2", "-n", "4", program.executable}));
  check_deadlock(result, program, ssend_ring_deadlock(4, "pass_to_right"));
}

TEST_CASE("slurm sbatch: a batch script runs the checker, which reports and ends the job", "[.slurm]") {
  const Program program = TEST_PROGRAM(ssend_ring);
  Workspace workspace;
  const JobResult result = run_slurm_job(
      workspace, batch_job(workspace, {"-N", "2", "-n", "4"},
                           with(checker(workspace, kDeadlockOptions), {"srun", program.executable})));
  INFO(describe(result) << "\n--- job output ---\n" << job_output(workspace));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.failed());  // sbatch --wait ends with the job's status
  const std::string verdict = "[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error";
  CHECK(contains(job_output(workspace), verdict));
  CHECK(contains(result.report.value_or(""), verdict));
}

TEST_CASE("slurm scancel --signal=USR1: every rank of the job step dumps, and the job goes on", "[.slurm]") {
  Workspace workspace;
  Job job(workspace, batch_job(workspace, {"-N", "2", "-n", "3"},
                               with(checker(workspace, {"--dump-signal", "SIGUSR1"}),
                                    {"srun", TEST_PROGRAM(dump_requests).executable, "15"})));
  const std::string id = submitted_job(job, workspace);
  REQUIRE_FALSE(id.empty());
  REQUIRE(job.wait_for_text(workspace.dir() / "job.out", "ready", kJobTimeout));
  Workspace scancel_workspace;
  const JobResult scancel = run_job(scancel_workspace, {"scancel", "--signal=USR1", id});
  const bool dumped = job.wait_for_text(workspace.report_path(), "[0] INFO: DUMP:", Seconds{15});
  const JobResult result = job.finish();
  INFO("scancel:\n" << describe(scancel) << "\nsbatch:\n" << describe(result) << "\n--- job output ---\n"
                    << job_output(workspace));
  CHECK(scancel.succeeded());
  CHECK(dumped);
  CHECK(result.succeeded());
  const BlockedCalls blocked = parse_blocked_calls(result.report.value_or(""));
  CHECK(blocked.call_of.contains(1));
  CHECK(blocked.call_of.contains(2));
  // Rank 0 computes (calling MPI_Test now and then) while the others wait.
  CHECK(any_line_matches(result.report.value_or(""), R"(^\[0\] INFO: +compute \()"));
}

TEST_CASE("slurm time limit: Slurm's SIGTERM at the limit gives every rank's stack, and the job ends", "[.slurm]") {
  constexpr int kRanks = 3;
  const Program program = TEST_PROGRAM(sigterm_hang);
  Workspace workspace;
  // --time=1: one minute, Slurm's shortest limit; SIGKILL follows KillWait (5 s) later.
  Job job(workspace,
          batch_job(workspace, {"-N", "2", "-n", std::to_string(kRanks), "--time=1"},
                    with(checker(workspace, {"--deadlock-timeout", "10m"}), {"srun", program.executable})),
          {}, Seconds{140});
  const JobResult result = job.finish();
  INFO(describe(result) << "\n--- job output ---\n" << job_output(workspace));
  REQUIRE_FALSE(result.timed_out);
  // Not sbatch's status: at a time limit it was 0 in one run of three.
  CHECK(contains(job_output(workspace), "DUE TO TIME LIMIT"));
  REQUIRE(result.report.has_value());
  const std::vector<int> lines = marker_lines(program.source);
  REQUIRE(lines.size() == 1);
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank);
    const std::string prefix = R"(^\[)" + std::to_string(rank) + R"(\] )";
    CHECK(any_line_matches(*result.report, prefix + R"(ERROR: .*rank )" + std::to_string(rank) +
                                               R"( \(host node[1-4], pid [1-9]\d*\) received SIGTERM)"));
    CHECK(any_line_matches(*result.report,
                           prefix + ".*" + frame_pattern("wait_for_anything", program.source, lines[0])));
  }
}
