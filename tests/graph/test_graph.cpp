// The wait-for graph: deadlocks among some ranks, MPI_ANY_SOURCE, many
// ranks merged into classes, and the graph written as JSON and DOT.
#include <catch2/catch.hpp>

#include "partial_cycle.hpp"
#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

TEST_CASE("partial_cycle: three ranks deadlock while three others compute", "[graph]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(partial_cycle);
  const int compute_seconds = 5 * kDeadlockTimeoutSeconds;
  const JobResult result = run_checked(workspace, 6, program, kDeadlockOptions, {std::to_string(compute_seconds)});
  check_deadlock(result, program, partial_cycle_deadlock());
  INFO(describe(result));
  // Reported while the computing ranks still ran.
  CHECK(result.elapsed_seconds < compute_seconds);
  const std::string report = result.report.value_or("");
  CHECK(any_line_matches(report, R"(deadlock: (rank 0 -> rank 1 -> rank 2 -> rank 0|)"
                                 R"(rank 1 -> rank 2 -> rank 0 -> rank 1|rank 2 -> rank 0 -> rank 1 -> rank 2))"));
  CHECK(report.find("the other ranks still run") != std::string::npos);
}

TEST_CASE("anysource_cycle: a receive from any rank, and every rank waits", "[graph]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(anysource_cycle);
  const JobResult result = run_checked(workspace, 3, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\()"}, {1, R"(MPI_Recv\(.*source=0\b)"}, {2, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"collect_result", "wait_for_task"}});
  INFO(describe(result));
  const std::string report = result.report.value_or("");
  CHECK(report.find("deadlock: rank ") != std::string::npos);
  // All three are in the deadlock; none merely waits behind it.
  CHECK(report.find("blocked behind the deadlock") == std::string::npos);
}

TEST_CASE("barrier_missing: sixteen ranks print as two classes", "[graph]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(barrier_missing);
  constexpr int kRanks = 16;
  const JobResult result = run_checked(workspace, kRanks, program, kDeadlockOptions);
  ExpectedDeadlock expected;
  expected.blocking_functions = {"synchronize", "wait_for_work"};
  for (int rank = 0; rank < kRanks - 1; ++rank) expected.calls[rank] = R"(MPI_Barrier\()";
  expected.calls[kRanks - 1] = R"(MPI_Recv\()";
  check_deadlock(result, program, expected);
  INFO(describe(result));
  const std::string report = result.report.value_or("");
  CHECK(report.find("[ranks 0-14 (15 ranks)]") != std::string::npos);
  CHECK(parse_blocked_calls(report).classes.size() == 2);
}

TEST_CASE("report files: JSON and DOT are written when asked for", "[graph]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(recv_recv);
  std::vector<std::string> options = kDeadlockOptions;
  options.insert(options.end(), {"--report-json", workspace.json_path().string(), "--report-dot",
                                 workspace.dot_path().string()});
  const JobResult result = run_checked(workspace, 2, program, options);
  INFO(describe(result));
  CHECK(result.failed());
  REQUIRE(result.report_json.has_value());
  CHECK(any_line_matches(*result.report_json, R"("check"\s*:\s*"GLOBAL:DEADLOCK:HARD")"));
  CHECK(result.report_json->find("\"cycle\"") != std::string::npos);
  REQUIRE(result.report_dot.has_value());
  CHECK(result.report_dot->starts_with("digraph"));
}

TEST_CASE("two_cycles: two separate deadlocks are both named, and the ranks blocked behind them", "[graph]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(two_cycles);
  const JobResult result =
      run_checked(workspace, 12, program, with(kDeadlockOptions, {"--report-dot", workspace.dot_path().string()}));
  ExpectedDeadlock expected;
  expected.blocking_functions = {"pass_on_ring", "exchange_with_partner", "wait_for_result", "synchronize"};
  for (int rank = 0; rank < 3; ++rank) expected.calls[rank] = R"(MPI_Ssend\()";
  expected.calls[3] = R"(MPI_Recv\(.*source=4\b)";
  expected.calls[4] = R"(MPI_Recv\(.*source=3\b)";
  for (int rank = 5; rank < 8; ++rank) expected.calls[rank] = R"(MPI_Recv\(.*source=3\b)";
  for (int rank = 8; rank < 12; ++rank) expected.calls[rank] = R"(MPI_Barrier\()";
  check_deadlock(result, program, expected);
  INFO(describe(result));
  const std::string report = result.report.value_or("");
  // One line per deadlock, each with its reasons.
  CHECK(count_occurrences(report, "deadlock: rank ") == 2);
  CHECK(any_line_matches(report, R"(deadlock: rank 0 -> rank 1 -> rank 2 -> rank 0 \(rank 0: MPI_Ssend)"));
  CHECK(any_line_matches(report, R"(deadlock: rank 3 -> rank 4 -> rank 3 \(rank 3: MPI_Recv)"));
  CHECK(any_line_matches(report, R"(blocked behind the deadlocks: ranks 5-11$)"));
  CHECK(any_line_matches(report, R"(rule: each rank of each cycle waits)"));
  REQUIRE(result.report_json.has_value());
  CHECK(result.report_json->find(R"("cycles":[{"ranks":[0,1,2],"cycle":[0,1,2,0]},{"ranks":[3,4],"cycle":[3,4,3]}])") !=
        std::string::npos);
  REQUIRE(result.report_dot.has_value());
  const std::string& dot = *result.report_dot;
  CHECK(dot.find("subgraph cluster_deadlock1 {\n    label=\"deadlock 1\";\n    color=\"red\";\n    r0; r1; r2;\n  }") !=
        std::string::npos);
  CHECK(dot.find("subgraph cluster_deadlock2 {\n    label=\"deadlock 2\";\n    color=\"red\";\n    r3; r4;\n  }") !=
        std::string::npos);
  CHECK(any_line_matches(dot, R"(^  r3 -> r4 \[.*color="red"\];$)"));
  CHECK(any_line_matches(dot, R"(^  r5 \[label=.*color="orange"\];$)"));
  CHECK_FALSE(any_line_matches(dot, R"(^  r5 -> r3 \[.*color="red")"));
}
