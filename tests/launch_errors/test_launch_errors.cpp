// Launch-time errors met across hosts: each rank of a job may find another
// file system and environment, and the monitors may find no way to each
// other. Simulated on this host by Hydra's MPMD syntax,
// which gives rank 1 its own variables: every case ends by itself, with a
// message naming the rank, its host and what is wrong.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
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
// (Open MPI's mpiexec: -x <variable>=<value>)
JobResult run_with_rank1_variable(const Workspace& workspace, const std::string& variable, const std::string& value) {
  const std::string pingpong = TEST_PROGRAM(pingpong).executable;
  const std::vector<std::string> rank1_variable =
      MPISENTRY_BUILT_FOR_OPEN_MPI ? std::vector<std::string>{"-x", variable + "=" + value}
                                   : std::vector<std::string>{"-env", variable, value};
  std::vector<std::string> line = {"--", MPIEXEC, "-n", "1", pingpong, ":", "-n", "1"};
  line.insert(line.end(), rank1_variable.begin(), rank1_variable.end());
  line.push_back(pingpong);
  return run_job(workspace, with(checker_prefix(workspace, kTimedDeadlockOptions), line));
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

namespace {

// A TCP port that this test holds open: no rank can listen on it.
class HeldPort {
 public:
  HeldPort() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t length = sizeof(address);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(listen(fd_, 1) == 0);
    REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
  }
  ~HeldPort() { close(fd_); }
  std::string port() const { return std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// The program runs as without the checker, which says what it does not check.
void check_unchecked_run(const JobResult& result, const JobResult& plain) {
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_status == 0);
  CHECK(result.out == plain.out);
  CHECK(result.err.find("[mpisentry 0] error: the monitor threads cannot reach each other (said above): this run has "
                        "no deadlock checks (GLOBAL:DEADLOCK:HARD, POTENTIAL, NO_PROGRESS, OUTSIDE_MPI), no dump on "
                        "DUMP-SIGNAL and no report of a rank that exits without MPI_Finalize; the other checks go on") !=
        std::string::npos);
  CHECK(result.err.find("checking 2 ranks") == std::string::npos);
  CHECK_FALSE(result.report.has_value());
}

}  // namespace

TEST_CASE("launch: MONITOR-PORTS all taken: rank 0 says so, the program runs without deadlock checks",
          "[launch][channel]") {
  Workspace workspace;
  const HeldPort held;
  const Program program = TEST_PROGRAM(pingpong);
  const JobResult plain = run_job(workspace, plain_command(2, program));
  const JobResult result =
      run_job(workspace, checked_command(workspace, 2, program, with(kDeadlockOptions, {"--monitor-ports", held.port()})));
  check_unchecked_run(result, plain);
  CHECK(result.err.find("[mpisentry 0] error: rank 0 (host " + host_name() + "): cannot listen on any port of "
                        "MONITOR-PORTS " + held.port() + ": Address already in use: its children in the monitors' tree "
                        "(ranks 1) cannot connect to it") != std::string::npos);
}

TEST_CASE("launch: MONITOR-INTERFACES names no interface of the host: said, and the program runs unchecked",
          "[launch][channel]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(pingpong);
  const JobResult plain = run_job(workspace, plain_command(2, program));
  const JobResult result = run_job(
      workspace, checked_command(workspace, 2, program, with(kDeadlockOptions, {"--monitor-interfaces", "nosuch0"})));
  check_unchecked_run(result, plain);
  CHECK(result.err.find("[mpisentry 0] error: rank 0 (host " + host_name() + "): no interface of MONITOR-INTERFACES "
                        "nosuch0 is up with an IPv4 address") != std::string::npos);
}

namespace {

// The other MPI than this build's, by Debian's names for its commands.
#if MPISENTRY_BUILT_FOR_OPEN_MPI
constexpr const char* kOtherMpicc = "mpicc.mpich";
constexpr const char* kOtherMpiexec = "mpiexec.mpich";
constexpr const char* kBuiltFor = "Open MPI";
constexpr const char* kOtherMpi = "MPICH";
#else
constexpr const char* kOtherMpicc = "mpicc.openmpi";
constexpr const char* kOtherMpiexec = "mpiexec.openmpi";
constexpr const char* kBuiltFor = "MPICH";
constexpr const char* kOtherMpi = "Open MPI";
#endif

// A program of the other MPI, built in the workspace; empty when that MPI is
// not installed.
std::string other_mpi_program(const Workspace& workspace) {
  if (run_job(workspace, {"sh", "-c", std::string("command -v ") + kOtherMpicc}).exit_status != 0) return {};
  const std::string source = (workspace.dir() / "init_finalize.c").string();
  const std::string program = (workspace.dir() / "init_finalize").string();
  std::ofstream(source) << "#include <mpi.h>\n"
                           "int main(int argc, char** argv) { MPI_Init(&argc, &argv); return MPI_Finalize(); }\n";
  const JobResult built = run_job(workspace, {kOtherMpicc, "-o", program, source});
  INFO(describe(built));
  REQUIRE(built.succeeded());
  return program;
}

}  // namespace

TEST_CASE("launch: a program of the other MPI gets no library of this one's", "[launch]") {
  Workspace workspace;
  const std::string program = other_mpi_program(workspace);
  if (program.empty()) {
    WARN(kOtherMpicc << " is not installed: a program of " << kOtherMpi << " is not tried");
    return;
  }
  const Environment open_mpi_env = open_mpi_settings();

  SECTION("the mpisentry command looks for the library of the program's MPI and says it has none") {
    const JobResult result = run_job(workspace, {MPISENTRY_LAUNCHER, "-n", "2", program}, open_mpi_env);
    INFO(describe(result));
    CHECK(result.exit_status == kStoppedStatus);
    CHECK(result.err.find("mpisentry: " + program + " loads " + kOtherMpi + " (") != std::string::npos);
    CHECK(result.err.find("), and no libmpisentry.so for " + std::string(kOtherMpi) + " was found; tried:") !=
          std::string::npos);
  }
  SECTION("preloaded by hand, the library says which MPI it is built for and ends every rank before main") {
    Environment env = open_mpi_env;
    env.emplace_back("LD_PRELOAD", MPISENTRY_LIBRARY);
    const JobResult result = run_job(workspace, {kOtherMpiexec, "-n", "2", program}, env);
    INFO(describe(result));
    REQUIRE_FALSE(result.timed_out);
    CHECK(result.signal == 0);
    CHECK(result.exit_status != 0);
    CHECK(result.err.find(std::string("error: this libmpisentry.so is built for ") + kBuiltFor +
                          ", but the program loads " + kOtherMpi + " (") != std::string::npos);
    CHECK(result.err.find("Segmentation") == std::string::npos);
  }
}
