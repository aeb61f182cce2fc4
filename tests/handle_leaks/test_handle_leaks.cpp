// LOCAL:COMM:NOT_FREED, LOCAL:GROUP:NOT_FREED, LOCAL:OP:NOT_FREED,
// LOCAL:DATATYPE:NOT_FREED, LOCAL:WIN:NOT_FREED, LOCAL:FILE:NOT_FREED and
// LOCAL:INFO:NOT_FREED: each handle left at MPI_Finalize is reported on its
// rank with the call that made it and where; the same program freeing every
// handle runs clean and unchanged with every check on.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kAllChecks = {"--check-all"};

}  // namespace

TEST_CASE("handle_leaks: every kind of handle left at MPI_Finalize is a LOCAL:*:NOT_FREED warning", "[handles]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(handle_leaks);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"leak", workspace.dir().string()});
  CHECK(result.succeeded());
  CHECK(result.out == "handles done\n");
  // kind's check, its summary, the mark of the call that made it
  const auto [check, summary, mark] = GENERATE(table<std::string, std::string, std::string>({
      {"LOCAL:COMM:NOT_FREED", R"(A communicator made by MPI_Comm_dup was never freed \(MPI_Comm_free\)\.)", "comm"},
      // MPICH and Open MPI hand out the world's group again for the second MPI_Comm_group.
      {"LOCAL:GROUP:NOT_FREED",
       R"(A group made by MPI_Comm_group was handed out 2 times and freed 1 time: )"
       R"(each must be freed \(MPI_Group_free\)\.)",
       "group"},
      {"LOCAL:OP:NOT_FREED", R"(An operation made by MPI_Op_create was never freed \(MPI_Op_free\)\.)", "op"},
      {"LOCAL:DATATYPE:NOT_FREED", R"(A datatype made by MPI_Type_vector was never freed \(MPI_Type_free\)\.)",
       "datatype"},
      {"LOCAL:FILE:NOT_FREED", R"(A file made by MPI_File_open was never closed \(MPI_File_close\)\.)", "file"},
      {"LOCAL:INFO:NOT_FREED", R"(An info object made by MPI_Info_create was never freed \(MPI_Info_free\)\.)",
       "info"},
  }));
  INFO(check);
  check_reported(result, {"^\\[1\\] WARNING: " + check + ": warning$", summary, "rank 1 made it:",
                          frame_pattern("make_handles", program.source, marked_line(program, mark)),
                          check + R"(: found 1 time \(0 errors \+ 1 warning\))"});
}

TEST_CASE("handle_leaks: the leak checks are on by default", "[handles]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(handle_leaks);
  const JobResult result = run_checked(workspace, 2, program, {}, {"leak", workspace.dir().string()});
  CHECK(result.succeeded());
  CHECK(result.out == "handles done\n");
  for (const char* kind : {"COMM", "GROUP", "OP", "DATATYPE", "FILE", "INFO"})
    check_reported(result, {std::string("^\\[1\\] WARNING: LOCAL:") + kind + ":NOT_FREED: warning$"});
  // The defaults' own checks are no news: no line names them at startup.
  CHECK(result.err.find("consistency check") == std::string::npos);
}

TEST_CASE("handle_leaks: a window left at MPI_Finalize is a LOCAL:WIN:NOT_FREED warning, on disk before MPICH aborts",
          "[handles]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(handle_leaks);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"leak_window", workspace.dir().string()});
  check_reported(result, {R"(^\[1\] WARNING: LOCAL:WIN:NOT_FREED: warning$)",
                          R"(A window made by MPI_Win_allocate was never freed \(MPI_Win_free\)\.)", "rank 1 made it:",
                          frame_pattern("make_handles", program.source, marked_line(program, "win"))});
  const std::string report = read_file(workspace.report_path()).value_or("");
  CHECK(report.find("LOCAL:WIN:NOT_FREED: warning") != std::string::npos);
  CHECK(report.find("NOT_FREED: warning") == report.rfind("NOT_FREED: warning"));
}

TEST_CASE("handle_leaks: 25 datatypes leaked at one call site are counted, 10 printed", "[handles]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(handle_leaks);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"loop", workspace.dir().string()});
  CHECK(result.succeeded());
  check_reported(result, {R"(^\[0\] WARNING: LOCAL:DATATYPE:NOT_FREED: warning$)",
                          R"(A datatype made by MPI_Type_contiguous was never freed)",
                          frame_pattern("leak_types", program.source, marked_line(program, "loop")),
                          R"(LOCAL:DATATYPE:NOT_FREED: found 25 times \(0 errors \+ 25 warnings\), )"
                          R"(15 reports were suppressed)"});
  CHECK(count_occurrences(result.err, "LOCAL:DATATYPE:NOT_FREED: warning") == 10);
}

TEST_CASE("handle_leaks: every handle freed, and the null and empty handles MPI hands out, run clean",
          "[handles][clean]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(handle_leaks);
  const std::vector<std::string> args = {"clean", workspace.dir().string()};
  check_unchanged_by_checker(workspace, 2, program, kAllChecks, args);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, args);
  INFO(describe(result));
  CHECK(result.succeeded());
  CHECK(result.err.find("NOT_FREED") == std::string::npos);
  CHECK(result.err.find("] WARNING:") == std::string::npos);
}
