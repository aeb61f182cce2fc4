// PATIENT-WAITS on and off: the same verdicts and the same program behaviour
// on both paths, whatever the machine's core count would choose (auto).
// INJECT-DELAYS: delays at random calls change no verdict.
#include <catch2/catch.hpp>

#include "scenario.hpp"

using namespace harness;

namespace {

std::vector<std::string> with_patient_waits(const std::string& mode, std::vector<std::string> options = kDeadlockOptions) {
  options.insert(options.end(), {"--patient-waits", mode});
  return options;
}

}  // namespace

TEST_CASE("patient waits on and off: recv_recv deadlocks", "[patient][deadlock]") {
  const std::string mode = GENERATE(as<std::string>{}, "on", "off");
  INFO("PATIENT-WAITS " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(recv_recv);
  const JobResult result = run_checked(workspace, 2, program, with_patient_waits(mode));
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"exchange"}});
}

TEST_CASE("patient waits on and off: irecv_wait deadlocks", "[patient][deadlock]") {
  const std::string mode = GENERATE(as<std::string>{}, "on", "off");
  INFO("PATIENT-WAITS " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(irecv_wait);
  const JobResult result = run_checked(workspace, 2, program, with_patient_waits(mode));
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Wait\()"}, {1, R"(MPI_Wait\()"}}, .blocking_functions = {"await_reply"}});
}

TEST_CASE("patient waits on and off: pingpong and sendrecv_safe run unchanged", "[patient][clean]") {
  const std::string mode = GENERATE(as<std::string>{}, "on", "off");
  INFO("PATIENT-WAITS " << mode);
  {
    Workspace workspace;
    const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(pingpong), with_patient_waits(mode));
    CHECK(plain.out.starts_with("checksum "));
  }
  {
    Workspace workspace;
    const JobResult plain =
        check_unchanged_by_checker(workspace, 4, TEST_PROGRAM(sendrecv_safe), with_patient_waits(mode));
    CHECK(plain.out.starts_with("ring sum "));
  }
}

TEST_CASE("patient waits on and off: errors, null requests and MPI_PROC_NULL as without the checker",
          "[patient][clean]") {
  const std::string mode = GENERATE(as<std::string>{}, "on", "off");
  INFO("PATIENT-WAITS " << mode);
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(recv_errors), with_patient_waits(mode));
  INFO(describe(plain));
  CHECK(plain.succeeded());
  CHECK(plain.out.find("MPI_Recv of 2 ints into 1: MPI_ERR_TRUNCATE\nnext MPI_Recv: MPI_SUCCESS, value 42\n") !=
        std::string::npos);
  CHECK(plain.out.find("MPI_Sendrecv of 2 ints into 1: MPI_ERR_TRUNCATE\n") != std::string::npos);
}

TEST_CASE("injected delays: the deadlock is still found, a correct run stays clean", "[patient][delays]") {
  const std::string mode = GENERATE(as<std::string>{}, "on", "off");
  INFO("PATIENT-WAITS " << mode);
  const std::vector<std::string> delays = {"--inject-delays", "7,30,50l"};
  {
    Workspace workspace;
    const Program program = TEST_PROGRAM(recv_recv);
    std::vector<std::string> options = with_patient_waits(mode);
    options.insert(options.end(), delays.begin(), delays.end());
    check_deadlock(run_checked(workspace, 2, program, options), program,
                   {.calls = {{0, R"(MPI_Recv\()"}, {1, R"(MPI_Recv\()"}}, .blocking_functions = {"exchange"}});
  }
  {
    Workspace workspace;
    std::vector<std::string> options = with_patient_waits(mode);
    options.insert(options.end(), delays.begin(), delays.end());
    check_unchanged_by_checker(workspace, 4, TEST_PROGRAM(sendrecv_safe), options);
  }
}
