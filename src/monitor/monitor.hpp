// The monitor: one background thread per rank that exchanges stuck status
// with the other ranks over a private communicator and decides when to
// report. The runtime creates and starts it in MPI_Init and stops it in
// MPI_Finalize.
#pragma once

#include <mpi.h>

#include <string>

#include "config/settings.hpp"
#include "monitor/report_paths.hpp"
#include "signals/signals.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {

// After PMPI_Init_thread gave MPI_THREAD_MULTIPLE and the start-up
// handshake made `comm`, the monitors' private communicator, collective over
// it: agrees on the report files, which it returns (REPORT-FILE, or a name
// made from the job, and REPORT-JSON and REPORT-DOT, made absolute by rank 0:
// the same on every rank). `program_thread_level`: the level the program was
// told it has, against which its threads' calls are checked. `settings`
// outlives the monitor.
const ReportPaths& create(const config::Settings& settings, int program_thread_level, MPI_Comm comm);
// Once the signal handlers are in place.
void start_thread();

// Written to, one byte, to wake the monitor thread (a dump was requested).
int wake_fd();
// The signal handlers' dump writer (signals::DumpWriter): this rank's call
// and stack in the report; for SIGTERM and SIGINT, returns once every rank's
// is there or at a deadline.
void write_signal_dump(const signals::Ending& ending, const stacks::RawStack& stack);
// From exit() when MPI_Init ran and MPI_Finalize did not: the rank's exit is
// reported to every rank, then checking ends. Returns once the report is
// written, or after a limit.
void exit_without_finalize(int status);

// In MPI_Finalize, before PMPI_Finalize: waits until every rank is finalizing,
// stops the thread after the same last round on every rank, frees the
// private communicator.
void stop();

}  // namespace mpisentry::monitor
