// The consistency checks' start and finish: the findings' sink, then the
// trackers and analyses of checks/lifecycle.def.
#pragma once

#include "config/settings.hpp"

namespace mpisentry::checks {

// From MPI_Init, once the settings are known and the report sink is open;
// `thread_level`: the level the program was given. Collective
// over MPI_COMM_WORLD.
void start(const config::Settings& settings, int world_rank, int thread_level);

// In MPI_Finalize, once every rank is there: every part's finish, then the
// summary (finish_findings). Returns, on every rank, whether some rank
// found what ERROR-EXITCODE counts.
bool finish();

}  // namespace mpisentry::checks
