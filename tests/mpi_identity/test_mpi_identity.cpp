// MPI's libraries are known by what they are (the object that defines
// PMPI_Init, its Fortran bindings, what they load that the program does not,
// what appears in MPI_Init), never by their names. A program's library named
// like MPI's (libmpihelpers.so, libucs_helpers.so, libmpich_extra.so) holds a
// signal handler that is the only thing that can release a rank whose
// threads all wait: its handler is the program's, so no verdict (the correct
// twins); without it the same shape is a deadlock (the hang twins), whose
// stacks show that library's frames as the program's.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

struct Shape {
  std::string name;  // the library and how the program reaches it
  Program program;
  std::string variant;  // of the correct twin: the signal that releases
};

const std::vector<Shape> kShapes = {
    // SIGALRM's handler installed before MPI_Init, alarm().
    {"libmpihelpers.so, linked", TEST_PROGRAM(signal_release_mpihelpers), "alarm"},
    // An SA_SIGINFO handler of SIGUSR2 installed after MPI_Init, a POSIX timer.
    {"libucs_helpers.so, linked", TEST_PROGRAM(signal_release_ucs_helpers), "timer"},
    // SIGALRM's handler of a library loaded with dlopen after MPI_Init.
    {"libmpich_extra.so, loaded with dlopen", TEST_PROGRAM(signal_release_dlopen), "alarm"},
};

}  // namespace

TEST_CASE("signal_release: a handler in a program's library named like MPI's releases the waiting thread: "
          "no verdict",
          "[mpi_identity][clean][threads][.slow]") {
  for (const Shape& shape : kShapes) {
    DYNAMIC_SECTION(shape.name << ", " << shape.variant) {
      Workspace workspace;
      const JobResult plain = check_unchanged_by_checker(workspace, 2, shape.program, kDeadlockOptions,
                                                         {shape.variant, kLongComputation});
      CHECK(plain.out == "released\n");
    }
  }
}

TEST_CASE("signal_release none: no handler, the same shape is a deadlock, whose stacks show the library's frames",
          "[mpi_identity][deadlock][threads]") {
  const int receive_line = marked_lines(RELEASE_HELPERS_SOURCE, "receives").at(0);
  for (const Shape& shape : kShapes) {
    DYNAMIC_SECTION(shape.name) {
      Workspace workspace;
      const JobResult result = run_checked(workspace, 2, shape.program, kDeadlockOptions, {"none"});
      check_deadlock(result, shape.program,
                     {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                      .blocking_functions = {"worker"}});
      CHECK(result.err.find("sleep in waits that only their own process can end") !=
            std::string::npos);
      // The receive in the library, a frame of the program's like the worker's that called it.
      CHECK(any_line_matches(result.report.value_or(""),
                             frame_pattern("helpers_receive", RELEASE_HELPERS_SOURCE, receive_line)));
    }
  }
}
