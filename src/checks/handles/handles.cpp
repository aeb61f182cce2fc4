#include "checks/handles/handles.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "findings/findings.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::checks {

namespace detail {
bool tracking_handles = false;
}

namespace {

constexpr int kKinds = static_cast<int>(HandleKind::Info) + 1;

struct KindInfo {
  report::Check check;
  const char* one;    // "A communicator": how the report's sentence starts
  const char* freed;  // the verb, past
  const char* free_call;
};

constexpr std::array<KindInfo, kKinds> kKindInfo{{
    {report::Check::CommNotFreed, "A communicator", "freed", "MPI_Comm_free"},
    {report::Check::GroupNotFreed, "A group", "freed", "MPI_Group_free"},
    {report::Check::OpNotFreed, "An operation", "freed", "MPI_Op_free"},
    {report::Check::DatatypeNotFreed, "A datatype", "freed", "MPI_Type_free"},
    {report::Check::WinNotFreed, "A window", "freed", "MPI_Win_free"},
    {report::Check::FileNotFreed, "A file", "closed", "MPI_File_close"},
    {report::Check::InfoNotFreed, "An info object", "freed", "MPI_Info_free"},
}};

const KindInfo& info_of(HandleKind kind) { return kKindInfo[static_cast<std::size_t>(kind)]; }

// A handle no call made that a program could free.
bool never_counted(HandleKind kind, std::uint64_t key) {
  using handle_slots::key_of;
  switch (kind) {
    case HandleKind::Comm: return key == key_of(MPI_COMM_NULL);
    case HandleKind::Group: return key == key_of(MPI_GROUP_NULL) || key == key_of(MPI_GROUP_EMPTY);
    case HandleKind::Op: return key == key_of(MPI_OP_NULL);
    case HandleKind::Datatype: return key == key_of(MPI_DATATYPE_NULL);
    case HandleKind::Win: return key == key_of(MPI_WIN_NULL);
    case HandleKind::File: return key == key_of(MPI_FILE_NULL);
    case HandleKind::Info: return key == key_of(MPI_INFO_NULL);
  }
  return true;
}

struct Made {
  FunctionId function = FunctionId::None;
  const void* call_site = nullptr;
  std::uint64_t sequence = 0;  // order made, for the report
  std::int64_t handed_out = 0;
  std::int64_t freed = 0;  // less than handed_out while it is in the table
};

struct HandlesState {
  std::mutex mutex;  // constructors and frees are rare calls: one lock for all threads
  bool on[kKinds] = {};
  std::unordered_map<std::uint64_t, Made> live[kKinds];
  std::uint64_t next_sequence = 1;
};

HandlesState& handles_state() {
  static HandlesState* const instance = new HandlesState;  // never destroyed: wrappers may run during exit
  return *instance;
}

}  // namespace

void start_handles(const StartContext&) {
  HandlesState& s = handles_state();
  for (int kind = 0; kind < kKinds; ++kind) {
    s.on[kind] = on(kKindInfo[static_cast<std::size_t>(kind)].check);
    detail::tracking_handles = detail::tracking_handles || s.on[kind];
  }
}

void detail::handle_made(HandleKind kind, std::uint64_t key, FunctionId function, const void* call_site) {
  HandlesState& s = handles_state();
  if (!s.on[static_cast<int>(kind)] || never_counted(kind, key)) return;
  // Through a Fortran binding: the program's line, not the binding's.
  call_site = stacks::program_call_site(call_site);
  const std::lock_guard lock(s.mutex);
  Made& made = s.live[static_cast<int>(kind)][key];
  if (made.handed_out == 0) made = {function, call_site, s.next_sequence++, 0, 0};
  ++made.handed_out;
}

void detail::handle_freed(HandleKind kind, std::uint64_t key) {
  HandlesState& s = handles_state();
  if (!s.on[static_cast<int>(kind)]) return;
  const std::lock_guard lock(s.mutex);
  auto& live = s.live[static_cast<int>(kind)];
  const auto found = live.find(key);
  if (found == live.end()) return;  // made by a call the checker does not see
  if (++found->second.freed == found->second.handed_out) live.erase(found);
}

void finish_handles() {
  HandlesState& s = handles_state();
  for (int k = 0; k < kKinds; ++k) {
    if (!s.on[k]) continue;
    const KindInfo& kind = info_of(static_cast<HandleKind>(k));
    std::vector<Made> left;
    {
      const std::lock_guard lock(s.mutex);
      for (const auto& [key, made] : s.live[k]) left.push_back(made);
    }
    std::sort(left.begin(), left.end(), [](const Made& a, const Made& b) { return a.sequence < b.sequence; });
    for (const Made& made : left) {
      const char* made_by = function_info(made.function).name;
      report::Finding finding;
      finding.check = kind.check;
      finding.summary = {
          made.handed_out == 1
              ? fmt::format("{} made by {} was never {} ({}).", kind.one, made_by, kind.freed, kind.free_call)
              : fmt::format("{} made by {} was handed out {} times and {} {} time{}: each must be {} ({}).",
                            kind.one, made_by, made.handed_out, kind.freed, made.freed, made.freed == 1 ? "" : "s",
                            kind.freed, kind.free_call)};
      finding.parties.push_back({{world_rank()}, "made it", made_by, call_site_stack(made.call_site)});
      finding.key = fmt::format("not freed {} {}", made_by, made.call_site);
      report(std::move(finding));
    }
  }
}

}  // namespace mpisentry::checks
