#include "rma_cases.hpp"

#include <catch2/catch.hpp>

#include "report_text.hpp"

namespace harness {
namespace {

constexpr int kRanks = 3;
const std::vector<std::string> kAllChecks = {"--check-all", "--check-max-errors", "0"};

}  // namespace

void check_rma_conflict(const Program& program, const std::string& mode, std::vector<std::string> patterns,
                        std::size_t reports) {
  INFO("case " << mode);
  Workspace workspace;
  const JobResult result = run_checked(workspace, kRanks, program, kAllChecks, {mode});
  CHECK(result.succeeded());
  patterns.insert(patterns.begin(), {R"(^\[1\] ERROR: GLOBAL:RMA:CONFLICT: error$)",
                                     "MPI leaves undefined the bytes, or the data read, where two accesses"});
  check_reported(result, patterns);
  CHECK(count_occurrences(result.err, "GLOBAL:RMA:CONFLICT: error") == reports);
}

void check_rma_twin(const Program& program, const std::string& mode, const std::string& not_judged) {
  INFO("case " << mode);
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(kRanks, program, {mode}));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE_FALSE(plain.timed_out);
  const JobResult checked = run_checked(workspace, kRanks, program, kAllChecks, {mode});
  check_clean_run(checked, workspace, plain.exit_status);
  INFO(describe(checked));
  CHECK(checked.out == plain.out);
  if (not_judged.empty()) {
    CHECK(checked.err.find("GLOBAL:RMA:CONFLICT") == std::string::npos);
  } else {
    CHECK(checked.err.find("GLOBAL:RMA:CONFLICT: error") == std::string::npos);
    CHECK(checked.err.find(not_judged) != std::string::npos);
  }
}

}  // namespace harness
