#include "monitor/gather.hpp"

#include <exception>

#include "log/log.hpp"

namespace mpisentry::monitor {

Gathered gather_ranks(const LocalView& local, Channel& channel, bool with_stacks) {
  const RankSnapshot mine = local.describe(/*ask_threads=*/true);
  std::vector<std::string> frames;
  if (with_stacks) {
    const Channel::BoundedWork busy(&channel);
    frames = local.locate_stacks(mine);
  }
  const std::vector<std::string> parts = channel.gather(encode_gathered(mine, with_stacks, frames));
  Gathered gathered;
  try {
    for (const std::string& part : parts) {
      GatheredRank rank = decode_gathered(part, with_stacks);
      gathered.ranks.push_back(std::move(rank.snapshot));
      gathered.frames.push_back(std::move(rank.frames));
    }
  } catch (const std::exception& error) {
    log::error("cannot read the ranks' states: {}", error.what());
    gathered = {};
  }
  return gathered;
}

void symbolize_into(Gathered& gathered, stacks::Symbolizer& symbolizer, Channel& channel) {
  const Channel::BoundedWork busy(&channel);
  try {
    for (std::size_t rank = 0; rank < gathered.ranks.size() && rank < gathered.frames.size(); ++rank) {
      std::vector<ThreadSnapshot>& threads = gathered.ranks[rank].threads;
      for (std::size_t thread = 0; thread < threads.size() && thread < gathered.frames[rank].size(); ++thread)
        threads[thread].stack = symbolizer.symbolize(stacks::parse_frame_addresses(gathered.frames[rank][thread]));
    }
  } catch (const std::exception& error) {
    log::error("cannot read the ranks' stacks: {}", error.what());
  }
}

}  // namespace mpisentry::monitor
