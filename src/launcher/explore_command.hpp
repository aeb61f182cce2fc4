// `mpisentry --explore [N]` (explore.hpp): the runs themselves.
#pragma once

#include "config/settings.hpp"

#include <string>
#include <vector>

namespace mpisentry::launcher {

struct ExploreJob {
  config::Settings settings;
  std::vector<std::string> command;           // the job, as job_command() makes it
  std::vector<std::string> replay_arguments;  // what follows `mpisentry --replay DIR` to replay one run
};

// Runs the exploration, with the job's variables already set in this
// process. Exit status 0: no failure found; 1: failures found; 2: the
// exploration could not run; 128 + N: stopped by signal N.
int run_exploration(const ExploreJob& job);

}  // namespace mpisentry::launcher
