#include "checks/buffer_overlaps/buffer_overlaps.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trackers/owned_buffers.hpp"

namespace mpisentry::checks {
namespace {

const char* verb(BufferUse use) { return use == BufferUse::Write ? "writes" : "reads"; }

std::string bytes(std::uintptr_t low, std::uintptr_t high) { return fmt::format("{} bytes at {:#x}", high - low, low); }

void report_overlap(const BufferConflict& conflict) {
  const PendingBuffer& earlier = conflict.earlier;
  const std::uintptr_t low = std::max(conflict.low, earlier.low);
  const std::uintptr_t high = std::min(conflict.high, earlier.high);
  const char* name = function_info(conflict.function).name;
  const char* earlier_name = function_info(earlier.function).name;
  report::Finding finding;
  finding.check = report::Check::MemoryOverlap;
  finding.summary = {fmt::format("{} {} {} bytes at {:#x} that {}, still pending, {}.", name, verb(conflict.use),
                                 high - low, low, earlier_name, verb(earlier.use)),
                     "MPI owns the buffer of a pending operation until the call that completes it returns; "
                     "another operation may use the same bytes only if both only read them."};
  finding.parties.push_back({{world_rank()}, fmt::format("{} them", verb(conflict.use)),
                             fmt::format("{} ({})", name, bytes(conflict.low, conflict.high)), {}});
  finding.parties.push_back({{world_rank()}, fmt::format("started earlier, {} them", verb(earlier.use)),
                             fmt::format("{} ({})", earlier_name, bytes(earlier.low, earlier.high)),
                             call_site_stack(earlier.call_site)});
  finding.key = fmt::format("overlap {} {}", earlier_name, earlier.call_site);
  report(std::move(finding), /*own_stack=*/true);
}

}  // namespace

void start_buffer_overlaps(const StartContext&) {
  if (on(report::Check::MemoryOverlap)) listen_for_buffer_conflicts(report_overlap);
}

}  // namespace mpisentry::checks
