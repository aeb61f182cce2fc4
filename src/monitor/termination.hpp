// The dump on SIGTERM and SIGINT: batch systems end a hung job with SIGTERM
// before SIGKILL, often before DEADLOCK-TIMEOUT. Each rank then writes its
// current call and stack on its own (the others may be gone already), and
// the program's own handler for the signal still runs afterwards.
#pragma once

#include <functional>

#include "stacks/stacks.hpp"

namespace mpisentry::monitor::termination {

// Called on the dump thread, never in the handler: may allocate, symbolize
// and write files, must not call MPI (the interrupted thread may hold MPI's lock).
using DumpWriter = std::function<void(int signal_number, const stacks::RawStack& stack)>;

// Once, from MPI_Init: installs the handlers and starts the dump thread.
void install(DumpWriter writer);

// From the monitor, each tick: a handler that the program installed since is
// kept to be run after the dump, and ours is put back in front of it.
void keep_handlers_first();

}  // namespace mpisentry::monitor::termination
