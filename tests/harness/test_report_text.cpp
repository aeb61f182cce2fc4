// The harness's own reading of reports, on the report shape of the brief:
// a parser that found nothing would make every scenario's checks fail, one
// that matched too much would make them pass for nothing.
#include <catch2/catch.hpp>

#include "report_text.hpp"

using namespace harness;

namespace {

const std::string kReport =
    "[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error\n"
    "[0] ERROR:    deadlock: rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv from rank 1; rank 1: MPI_Recv from rank 0)\n"
    "[0] ERROR:    [0] blocked for 3.2 s in MPI call:\n"
    "[0] ERROR:       MPI_Recv(buf=0x7ffd5b2c, count=1, datatype=MPI_INT, source=1, tag=0, comm=MPI_COMM_WORLD)\n"
    "[0] ERROR:       waits for: rank 1\n"
    "[0] ERROR:       exchange (/src/tests/programs/recv_recv.c:14)\n"
    "[0] ERROR:       halo::send_boundary(int, int) (/src/tests/programs/ssend_ring.cpp:13)\n"
    "[0] ERROR:    [ranks 1-3,5 (4 ranks)] blocked for 3.1-3.4 s in MPI call:\n"
    "[0] ERROR:       [1] MPI_Recv(..., source=0, ...)\n"
    "[0] ERROR:       [2] MPI_Barrier(comm=MPI_COMM_WORLD)\n"
    "[0] ERROR:    [ranks 6-7 (2 ranks)] blocked for 3.1 s in MPI call:\n"
    "[0] ERROR:       MPI_Barrier(comm=MPI_COMM_WORLD)\n"
    "[0] INFO: GLOBAL:DEADLOCK:HARD: found 1 time (1 error + 0 warnings), 0 reports were suppressed\n";

}  // namespace

TEST_CASE("harness: rank lists expand", "[harness]") {
  CHECK(expand_ranks("4") == std::vector<int>{4});
  CHECK(expand_ranks("0-2,5,7-8") == std::vector<int>{0, 1, 2, 5, 7, 8});
}

TEST_CASE("harness: blocked calls are read per rank, tagged or shared by the class", "[harness]") {
  const BlockedCalls blocked = parse_blocked_calls(kReport);
  CHECK(blocked.classes == std::vector<std::vector<int>>{{0}, {1, 2, 3, 5}, {6, 7}});
  CHECK(blocked.call_of.size() == 5);
  CHECK(any_line_matches(blocked.call_of.at(0), R"(MPI_Recv\(.*source=1\b)"));
  CHECK(any_line_matches(blocked.call_of.at(1), R"(MPI_Recv\(.*source=0\b)"));
  CHECK(blocked.call_of.at(2) == "MPI_Barrier(comm=MPI_COMM_WORLD)");
  CHECK(blocked.call_of.at(7) == "MPI_Barrier(comm=MPI_COMM_WORLD)");
  CHECK(blocked.longest_blocked_seconds == 3.4);
}

TEST_CASE("harness: stack frames match by function and file:line only", "[harness]") {
  CHECK(any_line_matches(kReport, frame_pattern("exchange", "/work/tests/programs/recv_recv.c", 14)));
  CHECK(any_line_matches(kReport, frame_pattern("halo::send_boundary", "/elsewhere/ssend_ring.cpp", 13)));
  CHECK(any_line_matches(kReport, frame_pattern("", "recv_recv.c", 14)));
  CHECK_FALSE(any_line_matches(kReport, frame_pattern("exchange", "recv_recv.c", 1)));
  CHECK_FALSE(any_line_matches(kReport, frame_pattern("exchange", "recv_recv.c", 141)));
  CHECK_FALSE(any_line_matches(kReport, frame_pattern("main", "recv_recv.c", 14)));
  CHECK_FALSE(any_line_matches(kReport, frame_pattern("exchange", "v_recv.c", 14)));
}

TEST_CASE("harness: marked lines are found in the test programs", "[harness]") {
  CHECK(marker_lines(SOURCE_barrier_missing).size() == 2);
  CHECK_THROWS(marker_lines("/nonexistent/program.c"));
}
