#include "checks/lifecycle.hpp"

#include "checks/arguments/arguments.hpp"
#include "checks/buffer_overlaps/buffer_overlaps.hpp"
#include "checks/collectives/collectives.hpp"
#include "checks/handles/handles.hpp"
#include "checks/message_races/message_races.hpp"
#include "checks/message_types/message_types.hpp"
#include "checks/partitions/partitions.hpp"
#include "checks/pending/pending.hpp"
#include "checks/receive_buffers/receive_buffers.hpp"
#include "checks/requests/requests.hpp"
#include "checks/rma/rma.hpp"
#include "checks/thread_levels/thread_levels.hpp"
#include "findings/findings.hpp"
#include "trackers/checksums.hpp"
#include "trackers/message_channel.hpp"
#include "trackers/owned_buffers.hpp"
#include "trackers/requests.hpp"

namespace mpisentry::checks {

namespace {

struct Part {
  const char* name;
  void (*start)(const StartContext&);
  void (*finish)();
};

#define MPISENTRY_NO_FINISH nullptr
#define MPISENTRY_PART(name, start, finish) Part{#name, start, finish},
constexpr Part kParts[] = {
#include "checks/lifecycle.def"
};
#undef MPISENTRY_PART
#undef MPISENTRY_NO_FINISH

}  // namespace

void start(const config::Settings& settings, int world_rank, int thread_level) {
  start_findings(settings, world_rank);
  if (!any_on()) return;
  const StartContext context{settings, thread_level == MPI_THREAD_MULTIPLE, thread_level};
  for (const Part& part : kParts) part.start(context);
}

bool finish() {
  // Each finish does nothing when its part never started.
  for (const Part& part : kParts)
    if (part.finish) part.finish();
  return finish_findings();
}

}  // namespace mpisentry::checks
