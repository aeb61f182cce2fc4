#include "launcher/arguments.hpp"
#include "launcher/dump.hpp"

#include <catch2/catch.hpp>

#include <csignal>

using namespace mpisentry;
using namespace mpisentry::launcher;

namespace {

using Strings = std::vector<std::string>;
using Pids = std::vector<pid_t>;

DumpArguments parse(Strings words) { return parse_dump_arguments(words); }

Strings messages(const DumpArguments& args) {
  Strings texts;
  for (const config::Problem& problem : args.errors) texts.push_back(problem.str());
  return texts;
}

ProcessState launcher_process(pid_t pid, std::string name) {
  return {.pid = pid, .name = std::move(name), .maps_checker = true, .has_rank = false,
          .disposition = Disposition::kDefault};
}

ProcessState rank_process(pid_t pid, Disposition disposition = Disposition::kCaught) {
  return {.pid = pid, .name = "app", .maps_checker = true, .has_rank = true, .disposition = disposition};
}

}  // namespace

TEST_CASE("dump: mpisentry dump PID", "[launcher][dump]") {
  const DumpArguments args = parse({"4242"});
  CHECK(args.errors.empty());
  CHECK(args.pid == 4242);
  CHECK(parse({"--help"}).help);
  CHECK(parse({"-h"}).errors.empty());
}

TEST_CASE("dump: bad usage says what is wrong", "[launcher][dump]") {
  CHECK(messages(parse({})) == Strings{"mpisentry dump: needs the PID of the job: mpisentry dump PID"});
  CHECK(messages(parse({"abc"})) ==
        Strings{"mpisentry dump: \"abc\" is not a process ID; usage: mpisentry dump PID"});
  CHECK(messages(parse({"0"})).size() == 1);
  CHECK(messages(parse({"-5"})).size() == 1);
  CHECK(messages(parse({"12x"})).size() == 1);
  CHECK(messages(parse({"99999999999"})).size() == 1);
  CHECK(messages(parse({"12", "now", "please"})) ==
        Strings{"mpisentry dump: takes one PID, and no more: \"now please\""});
  CHECK(messages(parse({"abc", "more"})).size() == 2);
}

TEST_CASE("dump: the launcher's help lists the dump command", "[launcher][dump]") {
  CHECK(usage().find("mpisentry dump PID") != std::string::npos);
  CHECK(dump_usage().starts_with("usage: mpisentry dump PID\n"));
}

TEST_CASE("dump: the environment of /proc/PID/environ", "[launcher][dump]") {
  using namespace std::string_literals;
  const Environment env = parse_environ("A=B\0EMPTY=\0C=D=E\0NOEQUALS\0A=second\0"s);
  CHECK(env == Environment{{"A", "B"}, {"EMPTY", ""}, {"C", "D=E"}});
  CHECK(parse_environ("").empty());
  CHECK(parse_environ("LAST=no terminator"s) == Environment{{"LAST", "no terminator"}});
}

TEST_CASE("dump: started by mpisentry: the library preloaded or its variables", "[launcher][dump]") {
  CHECK(started_by_mpisentry({{"LD_PRELOAD", "/opt/mpisentry/lib/libmpisentry.so"}}));
  CHECK(started_by_mpisentry({{"LD_PRELOAD", "/lib/libother.so:/p/libmpisentry.so /lib/libz.so"}}));
  CHECK(started_by_mpisentry({{"MPISENTRY_DUMP_SIGNAL", "SIGUSR1"}}));
  CHECK_FALSE(started_by_mpisentry({{"MPISENTRY_MPIEXEC", "/usr/bin/mpiexec.openmpi"}, {"MPISENTRY_LIBRARY", "/l.so"}}));
  CHECK_FALSE(started_by_mpisentry({{"LD_PRELOAD", "/usr/lib/libmpich.so"}, {"VT_CONFIG", "x.conf"}}));
  CHECK_FALSE(started_by_mpisentry({{"PATH", "/usr/bin"}, {"HOME", "/root/libmpisentry.so"}}));
}

TEST_CASE("dump: a process's disposition of the signal from /proc/PID/status", "[launcher][dump]") {
  // SIGUSR1 is 10 (bit 9, 0x200), SIGUSR2 12 (0x800), SIGRTMIN+2 36 (bit 35).
  const std::string status =
      "Name:\tapp\nSigQ:\t0/63379\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
      "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000800\nSigCgt:\t0000000800000200\nCapInh:\t0\n";
  CHECK(parse_disposition(status, SIGUSR1) == Disposition::kCaught);
  CHECK(parse_disposition(status, SIGUSR2) == Disposition::kIgnored);
  CHECK(parse_disposition(status, SIGRTMIN + 2) == Disposition::kCaught);
  CHECK(parse_disposition(status, SIGTERM) == Disposition::kDefault);
  CHECK(parse_disposition("Name:\tapp\n", SIGUSR1) == Disposition::kDefault);
}

TEST_CASE("dump: a rank maps the checker and has a rank from its launcher", "[launcher][dump]") {
  const std::string rank_maps =
      "55d0c0000000-55d0c0001000 r--p 00000000 08:01 1 /home/u/app\n"
      "7f0000000000-7f0000100000 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libmpich.so.12.2.0\n"
      "7f0000200000-7f0000300000 r-xp 00000000 08:01 3 /opt/mpisentry/lib/libmpisentry.so\n"
      "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n";
  CHECK(maps_checker(rank_maps));
  CHECK_FALSE(maps_checker("7f0000000000-7f0000100000 r-xp 00000000 08:01 2 /usr/lib/libmpi.so.40\n"
                           "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n"));
  CHECK(has_rank({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  CHECK(has_rank({{"PMIX_RANK", "3"}}));
  CHECK_FALSE(has_rank({{"PMI_PORT", "host:1234"}, {"LD_PRELOAD", "libmpisentry.so"}}));

  CHECK(is_rank(rank_process(1)));
  CHECK_FALSE(is_rank(launcher_process(1, "hydra_pmi_proxy")));
  ProcessState unchecked = rank_process(1);
  unchecked.maps_checker = false;
  CHECK_FALSE(is_rank(unchecked));
}

TEST_CASE("dump: which launchers pass the signal on to the ranks", "[launcher][dump]") {
  CHECK(forwards_to_ranks("mpiexec.hydra", SIGUSR1));
  CHECK_FALSE(forwards_to_ranks("mpiexec.hydra", SIGUSR2));
  CHECK_FALSE(forwards_to_ranks("mpiexec.hydra", SIGRTMIN + 4));
  CHECK(forwards_to_ranks("srun", SIGUSR1));
  CHECK(forwards_to_ranks("srun", SIGUSR2));
  CHECK_FALSE(forwards_to_ranks("srun", SIGRTMIN));
  CHECK(forwards_to_ranks("orterun", SIGUSR1));
  CHECK(forwards_to_ranks("orterun", SIGUSR2));
  CHECK_FALSE(forwards_to_ranks("orterun", SIGRTMIN));
  CHECK_FALSE(forwards_to_ranks("bash", SIGUSR1));
  CHECK_FALSE(forwards_to_ranks("app", SIGUSR1));
}

TEST_CASE("dump: a forwarding launcher gets the signal, once", "[launcher][dump]") {
  const std::vector<ProcessState> below = {launcher_process(11, "hydra_pmi_proxy"), rank_process(12),
                                           rank_process(13)};
  const DumpPlan plan = plan_dump(launcher_process(10, "mpiexec.hydra"), below, SIGUSR1);
  CHECK(plan.forward);
  CHECK(plan.targets == Pids{10});
  CHECK(plan.unready.empty());
  const std::string message = sent_message(launcher_process(10, "mpiexec.hydra"), plan, SIGUSR1, "/w/report.txt");
  CHECK(message ==
        "sent SIGUSR1 to process 10 (mpiexec.hydra), which passes it to every rank; rank 0 writes the report to "
        "/w/report.txt");
}

TEST_CASE("dump: otherwise every rank below the launcher gets it", "[launcher][dump]") {
  // The launchers map the preloaded library too; a wrapper script between
  // them has no MPI either. None of them is signalled.
  const std::vector<ProcessState> below = {launcher_process(11, "bash"), launcher_process(12, "mpiexec.hydra"),
                                           launcher_process(13, "hydra_pmi_proxy"), rank_process(14),
                                           rank_process(15, Disposition::kIgnored)};
  const DumpPlan plan = plan_dump(launcher_process(10, "mpiexec.hydra"), below, SIGUSR2);
  CHECK_FALSE(plan.forward);
  CHECK(plan.targets == Pids{14, 15});
  CHECK(plan.unready.empty());
  CHECK(sent_message(launcher_process(10, "mpiexec.hydra"), plan, SIGUSR2, "r.txt") ==
        "sent SIGUSR2 to 2 ranks on this host (processes 14, 15) below process 10 (mpiexec.hydra), which does not "
        "pass it on; the checker carries the request on to the ranks on other hosts; rank 0 writes the report to "
        "r.txt");
  CHECK(plan_dump(launcher_process(10, "mpiexec.hydra"), below, SIGRTMIN + 4).targets == Pids{14, 15});
  // A rank named directly.
  CHECK(plan_dump(rank_process(14), {}, SIGUSR1).targets == Pids{14});
  CHECK(plan_dump(launcher_process(10, "bash"), {}, SIGUSR1).targets.empty());
}

TEST_CASE("dump: a rank that the signal would end stops the dump", "[launcher][dump]") {
  const std::vector<ProcessState> below = {rank_process(12), rank_process(13, Disposition::kDefault)};
  for (const int signal : {SIGUSR1, SIGUSR2}) {
    const DumpPlan plan = plan_dump(launcher_process(10, "mpiexec.hydra"), below, signal);
    CHECK(plan.unready == Pids{13});
  }
  const DumpPlan plan = plan_dump(launcher_process(10, "mpiexec.hydra"), below, SIGUSR1);
  CHECK(unready_message(plan, SIGUSR1) ==
        "1 rank on this host (process 13) has no handler for SIGUSR1 yet, before MPI_Init or after MPI_Finalize: "
        "the signal would end it. Nothing was sent; try again once the job runs");
}

TEST_CASE("dump: where the report will be", "[launcher][dump]") {
  CHECK(report_location("/abs/report.txt", "/job") == "/abs/report.txt");
  CHECK(report_location("out/report.txt", "/job") == "/job/out/report.txt");
  CHECK(report_location("report.txt", "") == "report.txt");
  CHECK(report_location("", "/job") ==
        "the job's report file named at start-up (mpisentry_<program>_<job ID or time-PID>.txt in /job)");
}

TEST_CASE("dump: the signal as kill and scancel take it", "[launcher][dump]") {
  CHECK(signal_word(SIGUSR1) == "USR1");
  CHECK(signal_word(SIGUSR2) == "USR2");
  CHECK(signal_word(SIGRTMIN + 2) == std::to_string(SIGRTMIN + 2));
}
