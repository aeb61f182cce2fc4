// The same program through each of MPICH's Fortran bindings. `use mpi_f08`
// reaches MPI through PMPI_* for most routines, MPI_Init among them, so this
// is where a checker that saw only the C API would see nothing at all.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "scenario.hpp"

using namespace harness;

namespace {

struct Binding {
  std::string name;
  Program program;
};

const std::vector<Binding> kBindings = {{"include 'mpif.h'", TEST_PROGRAM(fortran_mpif_h)},
                                        {"use mpi", TEST_PROGRAM(fortran_mpi)},
                                        {"use mpi_f08", TEST_PROGRAM(fortran_f08)}};

}  // namespace

TEST_CASE("fortran_bindings: a barrier against a receive, through every Fortran binding", "[deadlock][fortran]") {
  for (const Binding& binding : kBindings) {
    DYNAMIC_SECTION(binding.name) {
      Workspace workspace;
      const JobResult result = run_checked(workspace, 2, binding.program, kDeadlockOptions, {"deadlock"});
      // gfortran's names for the external subroutines: the Fortran name and '_'.
      check_deadlock(result, binding.program,
                     {.calls = {{0, R"(MPI_Barrier\()"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                      .blocking_functions = {"synchronize_", "wait_for_work_"}});
      const std::string report = result.report.value_or("");
      // The duplicate was made through the same binding, and seen.
      CHECK(report.find("MPI_Comm_dup #1 of MPI_COMM_WORLD") != std::string::npos);
      // The barrier was recorded once, not again by a PMPI call inside the binding.
      CHECK(report.find("its collective #1 there") != std::string::npos);
    }
  }
}

TEST_CASE("fortran_bindings: a receive waiting for a computing rank, through every Fortran binding",
          "[clean][fortran]") {
  const std::string compute_seconds = std::to_string(2 * kDeadlockTimeoutSeconds);
  for (const Binding& binding : kBindings) {
    DYNAMIC_SECTION(binding.name) {
      Workspace workspace;
      const JobResult result =
          run_checked(workspace, 2, binding.program, kDeadlockOptions, {"imbalance", compute_seconds});
      check_clean_run(result, workspace);
      // The checker ran: MPI_Init went through it.
      CHECK(result.err.find("checking 2 ranks") != std::string::npos);
    }
  }
}

TEST_CASE("relro_barrier: a PMPI call through a read-only GOT slot of an MPICH Fortran library", "[deadlock][fortran]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(relro_barrier);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Barrier\()"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"main", "main"}});
}
