// LOCAL:ARGUMENT:*: a rank, tag, count or null handle that MPI defines as
// erroneous is reported before the call, with the argument, the call and its
// place, and the call is then made (MPICH fails it and aborts the job: the
// report is in the report file first); the arguments MPI allows at the
// edges (MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ANY_TAG in a receive,
// MPI_TAG_UB, a count of 0, MPI_ROOT over an inter-communicator) are not
// reported, and the program runs as without the checker. With the
// defaults: the checks are on by default, in the wrappers' fast body.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

TEST_CASE("arguments: erroneous arguments are LOCAL:ARGUMENT, before the call", "[arguments]") {
  // case, check, summary
  const auto [mode, check, summary] = GENERATE(table<std::string, std::string, std::string>({
      {"dest", "RANK",
       R"(MPI_Send's dest 2 is not a rank of MPI_COMM_WORLD \(0 to 1\), nor MPI_PROC_NULL \(MPI 4.1, section 3.2.3\)\.)"},
      {"source", "RANK", R"(MPI_Recv's source -3 is not a rank of MPI_COMM_WORLD \(0 to 1\), nor MPI_PROC_NULL or )"
                         R"(MPI_ANY_SOURCE)"},
      {"tag", "TAG", R"(MPI_Send's tag -5 is not a tag: tags are 0 to MPI_TAG_UB \([0-9]+\) \(MPI 4.1)"},
      {"any_tag", "TAG", R"(MPI_Send's tag MPI_ANY_TAG is not a tag: tags are 0 to MPI_TAG_UB)"},
      {"count", "COUNT", R"(MPI_Send's count -1 is negative \(MPI 4.1, section 3.2.2\)\.)"},
      {"datatype", "NULL_HANDLE", R"(MPI_Send's datatype MPI_DATATYPE_NULL names no datatype)"},
      {"comm", "NULL_HANDLE", R"(MPI_Send's comm MPI_COMM_NULL names no communicator)"},
      {"op", "NULL_HANDLE", R"(MPI_Reduce's op MPI_OP_NULL names no operation)"},
      {"root", "RANK", R"(MPI_Bcast's root 4 is not a rank of MPI_COMM_WORLD \(0 to 1\) \(MPI 4.1, section 3.2.3\)\.)"},
      {"proc_null_root", "RANK", R"(MPI_Bcast's root -1 is not a rank of MPI_COMM_WORLD \(0 to 1\) \(MPI 4.1)"},
      {"null_buffer", "NULL_BUFFER",
       R"(MPI_Send's buf NULL is null \(MPI_BOTTOM\) for 1 elements of a predefined datatype)"},
      {"uncommitted", "UNCOMMITTED",
       R"(MPI_Send's datatype 0x[0-9a-f]+ is a derived datatype that was not committed: MPI_Type_commit it)"},
      {"put_datatype", "NULL_HANDLE", R"(MPI_Put's origin_datatype MPI_DATATYPE_NULL names no datatype)"},
      {"in_place", "IN_PLACE", R"(MPI_Allreduce's recvbuf MPI_IN_PLACE is not allowed here)"},
      {"aliased", "ALIASED", R"(MPI_Allreduce's recvbuf 0x[0-9a-f]+ is its sendbuf too: a call's buffers must not )"
                             R"(overlap \(MPI 4.1, section 2.3\))"},
      {"sub_dest", "RANK", R"(MPI_Send's dest 1 is not a rank of MPI_Comm_split #1 of MPI_COMM_SELF \(0 to 0\))"},
  }));
  INFO("case " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(arguments);
  const JobResult result = run_checked(workspace, 2, program, {}, {mode});
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.report.has_value());
  // In the collectives (op, root) both ranks report, and the first that MPICH fails may end the job.
  for (const std::string& pattern : {R"(^\[[01]\] ERROR: LOCAL:ARGUMENT:)" + check + ": error$", summary,
                                     frame_pattern("misuse", program.source, marked_line(program, mode))}) {
    INFO("pattern: " << pattern);
    CHECK(any_line_matches(*result.report, pattern));
  }
  const std::size_t reports = count_occurrences(*result.report, "ERROR: LOCAL:ARGUMENT:" + check + ": error");
  CHECK(reports >= 1u);
  const bool both_ranks = mode == "op" || mode == "root" || mode == "proc_null_root" || mode == "in_place" ||
                          mode == "aliased";
  CHECK(reports <= (both_ranks ? 2u : 1u));
}

TEST_CASE("arguments: a program that has MPI return errors gets MPI's error and goes on", "[arguments]") {
  // CHECK-MAX-ERRORS 1, the default: the finding is an error, but MPI's error handler decides what follows.
  Workspace workspace;
  const Program program = TEST_PROGRAM(arguments);
  const JobResult result = run_checked(workspace, 2, program, {}, {"returned"});
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.succeeded());
  CHECK(result.out.find("arguments returned: MPI_ERR_RANK yes") != std::string::npos);
  REQUIRE(result.report.has_value());
  CHECK(count_occurrences(*result.report, "ERROR: LOCAL:ARGUMENT:RANK: error") == 1u);
  CHECK(any_line_matches(*result.report, frame_pattern("misuse", program.source, marked_line(program, "returned"))));
}

TEST_CASE("arguments: the arguments MPI allows at the edges are not reported", "[arguments][clean]") {
  Workspace workspace;
  const auto options = GENERATE(as<std::vector<std::string>>{}, std::vector<std::string>{},
                                std::vector<std::string>{"--check-all", "--check-max-errors", "0"});
  INFO("options " << options.size());
  const JobResult result = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(arguments), options, {"valid"});
  INFO(describe(result));
  CHECK(result.out.find("received 7, broadcast 84, from MPI_BOTTOM 6") != std::string::npos);
}
