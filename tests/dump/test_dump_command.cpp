// `mpisentry dump PID` on running jobs: it sends the job's DUMP-SIGNAL to
// mpiexec when mpiexec passes it on (SIGUSR1), else to the ranks themselves
// (SIGUSR2, which ends hydra's mpiexec); the job writes one report and goes
// on. Without a dump signal, or on a process that is no job, it says why and
// sends nothing.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "scenario.hpp"

using namespace harness;

namespace {

constexpr int kUsageError = 2;
// Rank 0's computation after "ready": time for the dump command, a monitor
// round and rank 0's writing, on a loaded machine.
const std::string kComputeSeconds = "15";
// How long the report may take to show the dump once the command has run.
constexpr Seconds kDumpTime{12};
const std::string kDumpHeader = "[0] INFO: DUMP:";

JobResult run_dump(const std::vector<std::string>& words) {
  Workspace workspace;
  std::vector<std::string> command = {MPISENTRY_LAUNCHER, "dump"};
  command.insert(command.end(), words.begin(), words.end());
  return run_job(workspace, command);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A process that is no MPI job, with `env`, once it runs `sleep` itself:
// during the exec, its command name changes before its environment shows.
class Sleeper {
 public:
  explicit Sleeper(const Environment& env) : job_(workspace_, {"sleep", "30"}, env, Seconds{60}) {
    const auto proc_file = [&](const char* name) {
      return read_file("/proc/" + std::to_string(job_.pid()) + "/" + name).value_or("");
    };
    REQUIRE(job_.wait_until([&] { return proc_file("comm") == "sleep\n" && !proc_file("environ").empty(); },
                            Seconds{10}));
  }
  std::string pid() const { return std::to_string(job_.pid()); }

 private:
  Workspace workspace_;
  Job job_;
};

}  // namespace

TEST_CASE("dump command: a running job writes one report and goes on", "[dump][.slow]") {
  const std::string signal = GENERATE(as<std::string>{}, "SIGUSR1", "SIGUSR2");
  INFO("--dump-signal " << signal);
  Workspace workspace;
  Job job(workspace, checked_command(workspace, 2, TEST_PROGRAM(dump_requests), {"--dump-signal", signal},
                                     {kComputeSeconds}));
  REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
  const JobResult dump = run_dump({std::to_string(job.pid())});
  const bool dumped = job.wait_for_text(workspace.report_path(), kDumpHeader, kDumpTime);
  const JobResult result = job.finish();
  INFO("the dump command:\n" << describe(dump) << "\nthe job:\n" << describe(result));
  CHECK(dump.succeeded());
  // SIGUSR1 to mpiexec, which passes it on (Open MPI's passes SIGUSR2 on too);
  // else to each of the 2 ranks.
  CHECK(contains(dump.out, signal == "SIGUSR1" || MPISENTRY_BUILT_FOR_OPEN_MPI
                               ? "sent " + signal + " to process " + std::to_string(job.pid())
                               : "sent SIGUSR2 to 2 ranks on this host"));
  CHECK(contains(dump.out, workspace.report_path().string()));
  CHECK(result.succeeded());
  CHECK(dumped);
  CHECK(contains(result.report.value_or(""), kDumpHeader));
}

TEST_CASE("dump command: a job without a dump signal is told so and goes on unharmed", "[dump]") {
  Workspace workspace;
  Job job(workspace, checked_command(workspace, 2, TEST_PROGRAM(dump_requests), {}, {"2"}));
  REQUIRE(job.wait_for_text(workspace.stdout_path(), "ready", kJobTimeout));
  const JobResult dump = run_dump({std::to_string(job.pid())});
  const JobResult result = job.finish();
  INFO("the dump command:\n" << describe(dump) << "\nthe job:\n" << describe(result));
  CHECK(dump.exit_status == kUsageError);
  const std::string mpiexec = MPISENTRY_BUILT_FOR_OPEN_MPI ? "orterun" : "mpiexec.hydra";
  CHECK(contains(dump.err, "process " + std::to_string(job.pid()) + " (" + mpiexec + "): the job has DUMP-SIGNAL off"));
  CHECK(contains(dump.err, "--dump-signal SIGUSR1"));
  CHECK(result.succeeded());
  CHECK_FALSE(contains(result.report.value_or(""), "DUMP"));
}

TEST_CASE("dump command: bad usage, no such process, a process not started by mpisentry", "[dump]") {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{}, {"abc"}, {"1", "2"}, {"--pid", "1"}}) {
    const JobResult usage = run_dump(words);
    INFO(describe(usage));
    CHECK(usage.exit_status == kUsageError);
    CHECK(contains(usage.err, "mpisentry dump: "));
    CHECK(contains(usage.err, "PID"));
  }

  // Process IDs stay below pid_max.
  std::string pid_max;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  REQUIRE_FALSE(pid_max.empty());
  const JobResult missing = run_dump({pid_max});
  INFO(describe(missing));
  CHECK(missing.exit_status == kUsageError);
  CHECK(contains(missing.err, "process " + pid_max + ": no such process"));

  const Sleeper foreign_process(Environment{});
  const JobResult foreign = run_dump({foreign_process.pid()});
  INFO(describe(foreign));
  CHECK(foreign.exit_status == kUsageError);
  CHECK(contains(foreign.err, "process " + foreign_process.pid() + " (sleep): was not started by mpisentry"));
  CHECK(contains(foreign.err, "scancel --signal=USR1"));
}

TEST_CASE("dump command: bad settings, and no rank to send the signal to", "[dump]") {
  const Sleeper bad_settings(Environment{{"MPISENTRY_DUMP_SIGNAL", "SIGFOO"}});
  const JobResult bad = run_dump({bad_settings.pid()});
  INFO(describe(bad));
  CHECK(bad.exit_status == kUsageError);
  CHECK(contains(bad.err, "process " + bad_settings.pid() + " (sleep): its settings: MPISENTRY_DUMP_SIGNAL: "
                                                               "DUMP-SIGNAL \"SIGFOO\": not a signal"));

  const Sleeper no_ranks(Environment{{"MPISENTRY_DUMP_SIGNAL", "SIGUSR1"}});
  const JobResult nothing_sent = run_dump({no_ranks.pid()});
  INFO(describe(nothing_sent));
  CHECK(nothing_sent.exit_status == kUsageError);
  CHECK(contains(nothing_sent.err, "no rank of the job runs below it on this host"));
}
