#include "checks/partitions/partitions.hpp"

#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "trackers/thread_lock.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_partitions = false;
}

namespace {

struct Partitioned {
  int partitions = 0;
  bool sends = false;
  bool started = false;
  std::vector<bool> readied;  // a send's, in its current start
};

struct PartitionsState {
  bool wildcard = false, invalid = false, inactive = false, double_ready = false;
  SpinMutex mutex;
  std::unordered_map<MPI_Request, Partitioned> requests;
};

PartitionsState& partitions_state() {
  static PartitionsState* const instance = new PartitionsState;  // never destroyed: wrappers may run during exit
  return *instance;
}

// A request handle as reports show it (an int in MPICH, a pointer in Open MPI).
template <typename Handle>
std::string handle_text(Handle request) {
  if constexpr (std::is_pointer_v<Handle>)
    return fmt::format("{}", fmt::ptr(request));
  else
    return fmt::format("{:#x}", static_cast<std::uint32_t>(request));
}

void report_partition(report::Check check, std::string what, std::string call, const void* call_site) {
  report::Finding finding;
  finding.check = check;
  finding.summary = {std::move(what)};
  finding.parties.push_back({{world_rank()}, "call", call, call_site_stack(call_site)});
  finding.key = fmt::format("partition {} {}", finding.summary.front(), fmt::ptr(call_site));
  report(std::move(finding));
}

std::string readied_call(FunctionId function, PartitionsNamed named, MPI_Request request, int low, int high,
                         int length) {
  const char* name = function_info(function).name;
  switch (named) {
    case PartitionsNamed::One: return fmt::format("{}(partition={}, request={})", name, low, handle_text(request));
    case PartitionsNamed::Range:
      return fmt::format("{}(partition_low={}, partition_high={}, request={})", name, low, high, handle_text(request));
    case PartitionsNamed::List: break;
  }
  return fmt::format("{}(length={}, request={})", name, length, handle_text(request));
}

}  // namespace

void start_partitions(const StartContext&) {
  PartitionsState& s = partitions_state();
  s.wildcard = on(report::Check::PartitionWildcard);
  s.invalid = on(report::Check::PartitionInvalid);
  s.inactive = on(report::Check::PartitionInactive);
  s.double_ready = on(report::Check::PartitionDoubleReady);
  detail::watching_partitions = s.wildcard || s.invalid || s.inactive || s.double_ready;
}

void partitioned_init(bool receives, int partitions, int peer, int tag, const void* call_site) {
  if (!watching_partitions() || !partitions_state().wildcard || !receives) return;
  if (peer != MPI_ANY_SOURCE && tag != MPI_ANY_TAG) return;
  const bool any_source = peer == MPI_ANY_SOURCE;
  report_partition(report::Check::PartitionWildcard,
                   fmt::format("MPI_Precv_init with {}: partitioned communication matches each receive with one "
                               "sender and one tag, and allows no wildcard (MPI 4.0, section 4.2.2).",
                               any_source && tag == MPI_ANY_TAG ? "MPI_ANY_SOURCE and MPI_ANY_TAG"
                               : any_source                     ? "MPI_ANY_SOURCE"
                                                                : "MPI_ANY_TAG"),
                   fmt::format("MPI_Precv_init(partitions={}, source={}, tag={})", partitions,
                               any_source ? "MPI_ANY_SOURCE" : std::to_string(peer),
                               tag == MPI_ANY_TAG ? "MPI_ANY_TAG" : std::to_string(tag)),
                   call_site);
}

void partitioned_made(MPI_Request request, int partitions, bool sends) {
  if (!watching_partitions() || request == MPI_REQUEST_NULL) return;
  PartitionsState& s = partitions_state();
  const std::lock_guard guard(s.mutex);
  s.requests[request] = {partitions, sends, false, {}};
}

void partitioned_started(int count, const MPI_Request requests[]) {
  if (!watching_partitions() || requests == nullptr) return;
  PartitionsState& s = partitions_state();
  const std::lock_guard guard(s.mutex);
  for (int i = 0; i < count; ++i) {
    const auto found = s.requests.find(requests[i]);
    if (found == s.requests.end()) continue;
    found->second.started = true;
    if (found->second.sends) found->second.readied.assign(static_cast<std::size_t>(found->second.partitions), false);
  }
}

void partitions_readied(FunctionId function, PartitionsNamed named, MPI_Request request, int low, int high,
                        const int list[], int length, const void* call_site) {
  if (!watching_partitions()) return;
  PartitionsState& s = partitions_state();
  std::vector<int> partitions;
  if (named == PartitionsNamed::List) {
    if (list != nullptr)
      for (int i = 0; i < length; ++i) partitions.push_back(list[i]);
  } else {
    for (int p = low; p <= high && partitions.size() < (1u << 20); ++p) partitions.push_back(p);
  }
  std::vector<std::pair<report::Check, std::string>> found_wrong;
  {
    const std::lock_guard guard(s.mutex);
    const auto found = s.requests.find(request);
    if (found == s.requests.end()) return;
    Partitioned& p = found->second;
    if (!p.sends) {
      if (s.invalid)
        found_wrong.emplace_back(report::Check::PartitionInvalid,
                                 fmt::format("{} on a partitioned receive's request: only the sender readies "
                                             "partitions (MPI 4.0, section 4.2.3).",
                                             function_info(function).name));
    } else if (!p.started) {
      if (s.inactive)
        found_wrong.emplace_back(report::Check::PartitionInactive,
                                 fmt::format("{} on a partitioned send that was never started: MPI_Start comes "
                                             "before its partitions are readied (MPI 4.0, section 4.2.3).",
                                             function_info(function).name));
    } else {
      for (const int partition : partitions) {
        if (partition < 0 || partition >= p.partitions) {
          if (s.invalid)
            found_wrong.emplace_back(report::Check::PartitionInvalid,
                                     fmt::format("{} readies partition {} of a partitioned send of {} partitions "
                                                 "(0 to {}).",
                                                 function_info(function).name, partition, p.partitions,
                                                 p.partitions - 1));
          continue;
        }
        if (p.readied[static_cast<std::size_t>(partition)] && s.double_ready)
          found_wrong.emplace_back(report::Check::PartitionDoubleReady,
                                   fmt::format("{} readies partition {} a second time in one start of the "
                                               "partitioned send: each partition is readied once per start "
                                               "(MPI 4.0, section 4.2.3).",
                                               function_info(function).name, partition));
        p.readied[static_cast<std::size_t>(partition)] = true;
      }
    }
  }
  for (auto& [check, what] : found_wrong)
    report_partition(check, std::move(what), readied_call(function, named, request, low, high, length), call_site);
}

void partition_asked(MPI_Request request, int partition, const void* call_site) {
  if (!watching_partitions()) return;
  PartitionsState& s = partitions_state();
  std::string wrong;
  report::Check check = report::Check::PartitionInvalid;
  {
    const std::lock_guard guard(s.mutex);
    const auto found = s.requests.find(request);
    if (found == s.requests.end()) return;
    const Partitioned& p = found->second;
    if (p.sends && s.invalid) {
      wrong = "MPI_Parrived on a partitioned send's request: only the receiver asks (MPI 4.0, section 4.2.4).";
    } else if (!p.started && s.inactive) {
      check = report::Check::PartitionInactive;
      wrong = "MPI_Parrived on a partitioned receive that was never started (MPI 4.0, section 4.2.4).";
    } else if ((partition < 0 || partition >= p.partitions) && s.invalid) {
      wrong = fmt::format("MPI_Parrived asks for partition {} of a partitioned receive of {} partitions (0 to {}).",
                          partition, p.partitions, p.partitions - 1);
    }
  }
  if (!wrong.empty())
    report_partition(check, std::move(wrong),
                     fmt::format("MPI_Parrived(request={}, partition={})", handle_text(request), partition), call_site);
}

void partitioned_freed(MPI_Request request) {
  if (!watching_partitions()) return;
  PartitionsState& s = partitions_state();
  const std::lock_guard guard(s.mutex);
  s.requests.erase(request);
}

}  // namespace mpisentry::checks
