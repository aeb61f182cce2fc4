// Launch-time errors met across hosts: each rank of a job may find another
// file system and environment. Simulated on this host by Hydra's MPMD syntax,
// which gives rank 1 its own variables: every case ends by itself, with a
// message naming the rank, its host and what is wrong.
#include <unistd.h>

#include <array>
#include <climits>
#include <fstream>

#include <catch2/catch.hpp>

#include "../config/stopped_before_running.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

constexpr int kStoppedStatus = 2;

std::string host_name() {
  std::array<char, HOST_NAME_MAX + 1> name{};
  gethostname(name.data(), name.size() - 1);
  return name.data();
}

// mpisentry <options> -- mpiexec -n 1 pingpong : -n 1 -env <variable> <value> pingpong
JobResult run_with_rank1_variable(const Workspace& workspace, const std::string& variable, const std::string& value) {
  const std::string pingpong = TEST_PROGRAM(pingpong).executable;
  return run_job(workspace, with(checker_prefix(workspace, kDeadlockOptions),
                                 {"--", MPIEXEC, "-n", "1", pingpong, ":", "-n", "1", "-env", variable, value, pingpong}));
}

}  // namespace

TEST_CASE("launch: a config file missing for one rank is named with its rank and host", "[launch]") {
  Workspace workspace;
  const std::string missing = (workspace.dir() / "absent.conf").string();
  const JobResult result = run_with_rank1_variable(workspace, "MPISENTRY_CONFIG", missing);
  check_stopped_before_running(result, kStoppedStatus);
  INFO(describe(result));
  CHECK(result.err.find("[mpisentry 1] error: rank 1 (host " + host_name() + "): " + missing +
                        ": cannot read config file: No such file or directory") != std::string::npos);
  CHECK(result.err.find("bad configuration: every rank stops before the program starts, with exit status 2") !=
        std::string::npos);
}

TEST_CASE("launch: a library of another version on one rank is named with both versions and files", "[launch]") {
  Workspace workspace;
  const JobResult result = run_with_rank1_variable(workspace, "LD_PRELOAD", MPISENTRY_OTHER_VERSION_LIBRARY);
  check_stopped_before_running(result, kStoppedStatus);
  INFO(describe(result));
  CHECK(result.err.find("[mpisentry 1] error: rank 1 (host " + host_name() + ") runs mpisentry 0.0.0-other (from " +
                        MPISENTRY_OTHER_VERSION_LIBRARY + "), rank 0 runs " MPISENTRY_VERSION " (from " +
                        MPISENTRY_LIBRARY + ")") != std::string::npos);
}

TEST_CASE("launch: a rank without the library ends the job after the bound, with the likely causes", "[launch]") {
  Workspace workspace;
  const std::string missing = (workspace.dir() / "absent" / "libmpisentry.so").string();
  const JobResult result = run_with_rank1_variable(workspace, "LD_PRELOAD", missing);
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_status == kStoppedStatus);
  // ld.so's own line, which the message points to.
  CHECK(result.err.find(missing + "' from LD_PRELOAD cannot be preloaded") != std::string::npos);
  CHECK(result.err.find("[mpisentry 0] error: rank 0 (host " + host_name() +
                        "): the checker in some ranks did not answer in MPI_Init within " + kDeadlockTimeout +
                        " (DEADLOCK-TIMEOUT)") != std::string::npos);
  CHECK(result.err.find("likely causes: the mpisentry library is missing on some host") != std::string::npos);
  CHECK_FALSE(result.report.has_value());
}
