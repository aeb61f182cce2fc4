// The potential-deadlock mode makes standard sends synchronous, so that
// programs which run only thanks to MPI's buffering deadlock at once.
#include <catch2/catch.hpp>

#include "scenario.hpp"

using namespace harness;

namespace {

const std::string kPotentialVerdictCheck = "GLOBAL:DEADLOCK:POTENTIAL";

std::vector<std::string> potential_options() {
  std::vector<std::string> options = kDeadlockOptions;
  options.push_back("--potential");
  return options;
}

}  // namespace

TEST_CASE("send_pair: head-to-head sends run cleanly without the potential mode", "[potential][clean]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(send_pair), kDeadlockOptions);
  check_clean_run(result, workspace);
}

TEST_CASE("send_pair: head-to-head sends are a potential deadlock", "[potential]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(send_pair);
  const JobResult result = run_checked(workspace, 2, program, potential_options());
  check_deadlock(result, program,
                 {.check = kPotentialVerdictCheck,
                  .calls = {{0, R"(MPI_Send\(.*dest=1\b)"}, {1, R"(MPI_Send\(.*dest=0\b)"}},
                  .blocking_functions = {"swap_values"}});
}

TEST_CASE("isend_ring: completing each send before receiving is a potential deadlock", "[potential]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(isend_ring);
  const JobResult result = run_checked(workspace, 3, program, potential_options());
  check_deadlock(result, program,
                 {.check = kPotentialVerdictCheck,
                  .calls = {{0, R"(MPI_Wait\()"}, {1, R"(MPI_Wait\()"}, {2, R"(MPI_Wait\()"}},
                  .blocking_functions = {"shift_right"}});
}

TEST_CASE("sendrecv_safe: a Sendrecv ring is clean in the potential mode", "[potential][clean]") {
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 4, TEST_PROGRAM(sendrecv_safe), potential_options());
  INFO(describe(plain));
  CHECK(plain.succeeded());
  CHECK(plain.out.starts_with("ring sum "));
}
