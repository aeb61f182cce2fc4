// The monitor: one background thread per rank that exchanges stuck status
// with the other ranks over its own connections (Channel) and decides when
// to report. It calls MPI only to end the job after a fatal report
// (abort_job). The runtime creates and starts it in MPI_Init and stops it in
// MPI_Finalize.
#pragma once

#include <mpi.h>

#include <string>

#include "config/settings.hpp"
#include "monitor/report_paths.hpp"
#include "signals/signals.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {

// In MPI_Init, on the program's thread, after the start-up handshake made
// `comm`, a private duplicate of MPI_COMM_WORLD; collective over it, which it
// frees: agrees on the report files, which it returns (REPORT-FILE, or a name
// made from the job, and REPORT-JSON and REPORT-DOT, made absolute by rank 0:
// the same on every rank), and connects the monitors (Channel).
// `program_thread_level`: the level the program was told it has, against
// which its threads' calls are checked. `settings` outlives the monitor.
const ReportPaths& create(const config::Settings& settings, int program_thread_level, MPI_Comm comm);
// The monitors are connected: the deadlock checks run (else create() said
// what is not checked).
bool checks_deadlocks();
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
// stops the thread after the same last round on every rank, closes the
// monitors' connections.
void stop();

}  // namespace mpisentry::monitor
