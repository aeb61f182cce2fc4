// The dump on SIGTERM and SIGINT: batch systems end a hung job with SIGTERM
// before SIGKILL, often before DEADLOCK-TIMEOUT. Each rank then writes its
// current call and stack on its own (the others may be gone already).
//
// The contract: the checker never keeps a signalled process alive. The dump
// takes at most kMaxDumpTime (batch systems send SIGKILL some seconds after
// SIGTERM); then the program's own handler runs, or, when it has none, the
// default action ends the process with the status it would have had without
// the checker (killed by SIGTERM). Once a termination signal has arrived the
// monitor no longer puts our handler back in front, so that a signal left
// pending (re-raised with SIG_DFL) reaches its default action.
#pragma once

#include <chrono>
#include <functional>

#include "stacks/stacks.hpp"

namespace mpisentry::monitor::termination {

inline constexpr std::chrono::milliseconds kMaxDumpTime{2000};

// Called on the dump thread, never in the handler: may allocate, symbolize
// and write files, must not call MPI (the interrupted thread may hold MPI's
// lock). The handler stops waiting for it after kMaxDumpTime.
using DumpWriter = std::function<void(int signal_number, const stacks::RawStack& stack)>;

// Once, from MPI_Init: installs the handlers and starts the dump thread.
void install(DumpWriter writer);

// From the monitor, each round: a handler that the program installed since is
// kept to be run after the dump, and ours is put back in front of it; nothing
// once a termination signal has arrived.
void keep_handlers_first();

}  // namespace mpisentry::monitor::termination
