// The same program through each of the MPI's Fortran bindings. MPICH's
// `use mpi_f08` reaches MPI through PMPI_* for most routines, MPI_Init among
// them, and Open MPI's bindings for every routine, so this is where a checker
// that saw only the C API would see nothing at all.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

struct Binding {
  std::string name;
  Program program;
  // gfortran gives a call through Open MPI's `use mpi` interfaces no line of
  // its own: the frame shows the subroutine's first line.
  bool call_lines = true;
};

const std::vector<Binding> kBindings = {{"include 'mpif.h'", TEST_PROGRAM(fortran_mpif_h)},
                                        {"use mpi", TEST_PROGRAM(fortran_mpi), !MPISENTRY_BUILT_FOR_OPEN_MPI},
                                        {"use mpi_f08", TEST_PROGRAM(fortran_f08)}};

}  // namespace

TEST_CASE("fortran_bindings: a barrier against a receive, through every Fortran binding", "[deadlock][fortran]") {
  for (const Binding& binding : kBindings) {
    DYNAMIC_SECTION(binding.name) {
      Workspace workspace;
      const JobResult result = run_checked(workspace, 2, binding.program, kDeadlockOptions, {"deadlock"});
      // gfortran's names for the external subroutines: the Fortran name and '_'.
      const std::vector<std::string> functions = {"synchronize_", "wait_for_work_"};
      check_deadlock(result, binding.program,
                     {.calls = {{0, R"(MPI_Barrier\()"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                      .blocking_functions = binding.call_lines ? functions : std::vector<std::string>{},
                      .shape = binding.call_lines ? "" : "no marked line"});
      const std::string report = result.report.value_or("");
      if (!binding.call_lines)
        for (const std::string& function : functions)
          CHECK(any_line_matches(report, function + R"( \(.*/fortran_bindings\.F90:[0-9]+\))"));
      // The duplicate was made through the same binding, and seen.
      CHECK(report.find("MPI_Comm_dup #1 of MPI_COMM_WORLD") != std::string::npos);
      // The barrier was recorded once, not again by a PMPI call inside the binding.
      CHECK(report.find("its collective #1 there") != std::string::npos);
    }
  }
}

namespace {

// Processes that spin outside the job until the test ends, each killed by its pid.
class BusyLoops {
 public:
  explicit BusyLoops(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        volatile unsigned long spins = 0;
        while (true) spins = spins + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyLoops() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  BusyLoops(const BusyLoops&) = delete;
  BusyLoops& operator=(const BusyLoops&) = delete;

 private:
  std::vector<pid_t> pids_;
};

}  // namespace

// Issue 52: once in 26 runs at a load of 29 on 2 cores this deadlock got no
// verdict in 90 s. A look that ends without a verdict is judged again after
// doubling gaps (Decider): under load the verdict may be late, never absent.
TEST_CASE("fortran_bindings: the mpi_f08 deadlock while every core is kept busy", "[deadlock][fortran][load]") {
  const Binding& f08 = kBindings.back();
  const BusyLoops busy(12 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  for (int run = 0; run < 3; ++run) {
    DYNAMIC_SECTION("run " << run) {
      Workspace workspace;
      const JobResult result = run_checked(workspace, 2, f08.program, kDeadlockOptions, {"deadlock"});
      INFO(describe(result));
      REQUIRE_FALSE(result.timed_out);
      CHECK(result.failed());
      CHECK(result.report.value_or("").find("[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error") != std::string::npos);
    }
  }
}

TEST_CASE("fortran_bindings: a receive waiting for a computing rank, through every Fortran binding",
          "[clean][fortran]") {
  const std::string compute_seconds = kLongComputation;
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

TEST_CASE("fortran_bindings leak: LOCAL:*:NOT_FREED names the program's line that made each handle, through every "
          "Fortran binding",
          "[handles][fortran]") {
  for (const Binding& binding : kBindings) {
    DYNAMIC_SECTION(binding.name) {
      Workspace workspace;
      const JobResult result = run_checked(workspace, 2, binding.program, {}, {"leak"});
      INFO(describe(result));
      CHECK(result.succeeded());
      // Where MPI's binding called the C wrapper is not where the program made the handle.
      CHECK(result.err.find("libmpichfort") == std::string::npos);
      CHECK(result.err.find("libmpi_mpifh") == std::string::npos);
      for (const auto& [check, made_by, mark] : std::vector<std::tuple<std::string, std::string, std::string>>{
               {"LOCAL:COMM:NOT_FREED", "A communicator made by MPI_Comm_split", "split"},
               {"LOCAL:DATATYPE:NOT_FREED", "A datatype made by MPI_Type_vector", "vector"},
               {"LOCAL:GROUP:NOT_FREED", "A group made by MPI_Comm_group", "group"}}) {
        INFO(check);
        const std::string frame =
            binding.call_lines ? frame_pattern("leak_handles_", binding.program.source, marked_line(binding.program, mark))
                               : R"(leak_handles_ \(.*/fortran_bindings\.F90:[0-9]+\))";
        check_reported(result, {"^\\[1\\] WARNING: " + check + ": warning$", made_by, "rank 1 made it:", frame});
      }
    }
  }
}

TEST_CASE("relro_barrier: a PMPI call through a read-only GOT slot of a Fortran bindings library known by what "
          "it defines",
          "[deadlock][fortran]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(relro_barrier);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Barrier\()"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"main", "main"}});
}
