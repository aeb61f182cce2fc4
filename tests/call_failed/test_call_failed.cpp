// LOCAL:MPI:CALL_FAILED and the findings' limits (CHECK-MAX-ERRORS): real
// jobs of bad_input, which makes erroneous calls under MPI_ERRORS_RETURN and
// prints what MPI returned.
#include <catch2/catch.hpp>

#include <regex>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kCallFailedOn = {"--check", "LOCAL:MPI:CALL_FAILED ON"};
// MPI_Error_string's words for the truncated receive and the send to rank 99.
const std::string kTruncated = MPISENTRY_BUILT_FOR_OPEN_MPI ? "MPI_ERR_TRUNCATE: message truncated" : "Message truncated";
const std::string kInvalidRank = MPISENTRY_BUILT_FOR_OPEN_MPI
                                     ? "MPI_ERR_RANK: invalid rank"
                                     : "Invalid rank has value 99 but must be nonnegative and less than 2";

}  // namespace

TEST_CASE("call_failed: every erroneous call is reported with its arguments and MPI's words, and the program goes on",
          "[consistency][call_failed]") {
  const Program program = TEST_PROGRAM(bad_input);
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(2, program));
  REQUIRE(plain.succeeded());
  const JobResult checked = run_checked(workspace, 2, program, with(kCallFailedOn, {"--check-max-errors", "0"}));
  INFO(describe(checked));
  REQUIRE(checked.succeeded());
  CHECK(checked.out == plain.out);
  REQUIRE(checked.report.has_value());
  const std::string& report = *checked.report;
  // The truncated receive on rank 0, the sends to rank 99 on both ranks, the calls on MPI_COMM_NULL.
  CHECK(count_occurrences(report, "] ERROR: LOCAL:MPI:CALL_FAILED: error\n") >= 8);
  CHECK(report.find("[0] ERROR:       MPI_Recv(buf=") != std::string::npos);
  CHECK(report.find(kTruncated) != std::string::npos);
  CHECK(report.find("[1] ERROR:       MPI_Send(buf=") != std::string::npos);
  CHECK(report.find("dest=99, tag=0") != std::string::npos);
  CHECK(report.find(kInvalidRank) != std::string::npos);
  CHECK(report.find("MPI_Barrier(comm=MPI_COMM_NULL)") != std::string::npos);
  CHECK(report.find("erroneous_calls (") != std::string::npos);
  CHECK(report.find("null_communicator (") != std::string::npos);
  // Rank 0's summary, over both ranks.
  CHECK(std::regex_search(report, std::regex(R"(\[0\] INFO: LOCAL:MPI:CALL_FAILED: found \d+ times \(\d+ errors \+ 0 warnings\), 0 reports were suppressed\n)")));
  CHECK(checked.err.find("] ERROR: LOCAL:MPI:CALL_FAILED: error") != std::string::npos);
}

TEST_CASE("call_failed: at CHECK-MAX-ERRORS 1, the default, the job ends after the first error's call returns",
          "[consistency][call_failed]") {
  const Program program = TEST_PROGRAM(bad_input);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, 2, program, kCallFailedOn);
  INFO(describe(checked));
  REQUIRE(checked.failed());
  REQUIRE(checked.report.has_value());
  // Rank 0's first error is the truncated receive; rank 1's the send to rank 99.
  CHECK(checked.report->find("limit CHECK-MAX-ERRORS reached => aborting") != std::string::npos);
  CHECK(checked.out.find("rank 99 in Send") == std::string::npos);
  CHECK(count_occurrences(*checked.report, "LOCAL:MPI:CALL_FAILED: error\n") <= 2);
}

TEST_CASE("call_failed: a program whose calls all succeed under MPI_ERRORS_RETURN is not reported",
          "[consistency][call_failed][clean]") {
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(errors_return), with(kCallFailedOn, kDeadlockOptions));
  CHECK(plain.out == "calls that returned an error: 0\n");
}

TEST_CASE("call_failed: a receive that fails inside a Waitall reaches the program's error handler once, as without "
          "the checker",
          "[call_failed][clean]") {
  // The checker runs a wait as its own loop of tests, and asks MPI about
  // requests between them: none of that may raise a request's error to the
  // handler (MPI_Request_get_status would, with the receive's own class).
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 3, TEST_PROGRAM(wait_error_handler), kDeadlockOptions, {"1"});
  CHECK(plain.out.find("the handler was called 1 times") != std::string::npos);
}

TEST_CASE("call_failed: past CHECK-MAX-REPORTS a rank's reports are counted, not printed",
          "[consistency][call_failed]") {
  const Program program = TEST_PROGRAM(bad_input);
  Workspace workspace;
  const JobResult checked = run_checked(
      workspace, 2, program,
      with(with(kCallFailedOn, kArgumentChecksOff), {"--check-max-errors", "0", "--check-max-reports", "3"}));
  INFO(describe(checked));
  REQUIRE(checked.succeeded());
  REQUIRE(checked.report.has_value());
  // Each rank prints 3 reports; the summary counts what the others would have been.
  CHECK(count_occurrences(*checked.report, "LOCAL:MPI:CALL_FAILED: error\n") == 6);
  CHECK(std::regex_search(*checked.report, std::regex(R"(\[0\] INFO: Found \d+ problems \(\d+ errors \+ 0 warnings\), [1-9]\d* reports were suppressed\.)")));
}
