// The monitor: one background thread per rank that exchanges stuck status
// with the other ranks over a private communicator and decides when to report.
// Called only from the MPI_Init*/MPI_Finalize wrappers.
#pragma once

#include <string>

#include "config/settings.hpp"

namespace mpisentry::monitor {

struct Started {
  bool running = false;         // false: MPI gave less than MPI_THREAD_MULTIPLE, nothing is checked
  bool potential_mode = false;  // standard sends are to be made synchronous
  config::Settings settings;    // when running
  std::string report_path;      // REPORT-FILE, or the name made from the job; the same on every rank
};

// After PMPI_Init_thread: reads the settings (a bad config ends the run here,
// before the program's own code), then starts the thread.
// `program_thread_level`: the level the program was told it has, against
// which its threads' calls are checked.
Started start(int granted_thread_level, int program_thread_level);

// In MPI_Finalize, before PMPI_Finalize: waits until every rank is finalizing,
// stops the thread after the same last round on every rank, frees the
// private communicator.
void stop();

// In MPI_Abort: the program ends the job on purpose; its exit is not reported.
void note_abort();

}  // namespace mpisentry::monitor
