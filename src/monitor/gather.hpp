// Every rank's state at rank 0, in one gather over the monitors' channel:
// for a look at the ranks, and with the stacks for a report, symbolized
// once for all ranks by rank 0.
#pragma once

#include <string>
#include <vector>

#include "monitor/channel.hpp"
#include "monitor/local_view.hpp"
#include "model/snapshot.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {

struct Gathered {
  std::vector<RankSnapshot> ranks;
  std::vector<std::vector<std::string>> frames;  // stacks::serialize'd, by rank and thread
};

// Collective over the channel. With `with_stacks` also where each rank's
// threads are. At rank 0; empty elsewhere, and empty when a rank's part
// cannot be read (said in the log).
Gathered gather_ranks(const LocalView& local, Channel& channel, bool with_stacks);

// Rank 0: each thread's gathered frames, symbolized, into its snapshot.
void symbolize_into(Gathered& gathered, stacks::Symbolizer& symbolizer, Channel& channel);

}  // namespace mpisentry::monitor
