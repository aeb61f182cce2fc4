#include "checks/arguments/arguments.hpp"

#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "records/communicators.hpp"
#include "records/handle_slots.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_arguments = false;
std::int64_t tag_ub = 32767;  // the least MPI_TAG_UB that MPI allows, until MPI_COMM_WORLD's is read
std::atomic<int> uncommitted_count{0};
std::atomic<MPI_Datatype> uncommitted[kUncommittedKept];
}

namespace {

struct ArgumentsState {
  bool rank = false, tag = false, count = false, null_handle = false, null_buffer = false, in_place = false,
       aliased = false, uncommitted = false;
  std::mutex uncommitted_mutex;  // the writers of detail::uncommitted
};

ArgumentsState& arguments_state() {
  static ArgumentsState* const instance = new ArgumentsState;  // never destroyed: wrappers may run during exit
  return *instance;
}

void report_argument(report::Check check, FunctionId function, const Argument& argument, std::string value,
                     std::string what, const void* call_site) {
  const char* name = function_info(function).name;
  report::Finding finding;
  finding.check = check;
  finding.summary = {fmt::format("{}'s {} {} {}", name, argument.name, value, what)};
  finding.parties.push_back(
      {{world_rank()}, "calls", fmt::format("{}({}={})", name, argument.name, value), call_site_stack(call_site)});
  finding.key = fmt::format("argument {} {} {}", name, argument.name, fmt::ptr(call_site));
  // MPI judges the call next, and its error handler decides what follows: a program that has MPI return
  // errors may handle this one, and the checker must not end it first.
  finding.may_end_run = false;
  report(std::move(finding));
}

// Whom a rank argument may name on `comm`: nothing when the checker does not know it.
std::optional<comms::Info> communicator_info(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return std::nullopt;
  const std::uint64_t id = comms::id_of(comm);
  return id == 0 ? std::nullopt : comms::info(id);
}

void check_rank(FunctionId function, const Argument& a, const comms::Info& info, const void* call_site) {
  const auto rank = static_cast<int>(a.value);
  const bool special =
      a.role == Argument::Role::Root
          ? info.inter && (rank == MPI_ROOT || rank == MPI_PROC_NULL)
          : rank == MPI_PROC_NULL || (a.role == Argument::Role::Source && rank == MPI_ANY_SOURCE);
  if (special) return;  // MPI_PROC_NULL and the wildcards where MPI allows them
  const std::size_t ranks = info.peers().size();
  if (rank >= 0 && static_cast<std::size_t>(rank) < ranks) return;
  const char* allowed = a.role == Argument::Role::Source                ? ", nor MPI_PROC_NULL or MPI_ANY_SOURCE"
                        : a.role == Argument::Role::Root && info.inter ? ", nor MPI_ROOT or MPI_PROC_NULL"
                        : a.role == Argument::Role::Root               ? ""
                                                                       : ", nor MPI_PROC_NULL";
  report_argument(report::Check::ArgumentRank, function, a, std::to_string(rank),
                  fmt::format("is not a rank of {}{} (0 to {}){} (MPI 4.1, section 3.2.3).", info.name,
                              info.inter ? "'s remote group" : "", static_cast<long>(ranks) - 1, allowed),
                  call_site);
}

// The size of one element of a predefined datatype; none for a derived one or MPI_DATATYPE_NULL.
std::optional<int> predefined_size(MPI_Datatype datatype) {
  if (datatype == MPI_DATATYPE_NULL) return std::nullopt;
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0, size = 0;
  if (PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_NAMED || PMPI_Type_size(datatype, &size) != MPI_SUCCESS)
    return std::nullopt;
  return size;
}

// Data in a buffer for sure: a count above 0 of a predefined datatype of a size above 0.
bool has_data(const Argument& buffer) {
  return buffer.value > 0 && predefined_size(buffer.datatype).value_or(0) > 0;
}

void check_buffer(FunctionId function, const Argument& a, const ArgumentsState& s, const void* call_site) {
  if (a.buffer == MPI_IN_PLACE && a.role == Argument::Role::Buffer && s.in_place)
    report_argument(report::Check::ArgumentInPlace, function, a, "MPI_IN_PLACE",
                    "is not allowed here: MPI_IN_PLACE may stand only for the buffers that some collectives name "
                    "for it (MPI 4.1, chapter 6).",
                    call_site);
  if (a.buffer == nullptr && s.null_buffer && has_data(a))
    report_argument(report::Check::ArgumentNullBuffer, function, a, "NULL",
                    fmt::format("is null (MPI_BOTTOM) for {} elements of a predefined datatype: MPI_BOTTOM addresses "
                                "data only through a datatype of absolute addresses.",
                                a.value),
                    call_site);
}

// Under uncommitted_mutex.
void forget_uncommitted(MPI_Datatype datatype) {
  for (std::atomic<MPI_Datatype>& slot : detail::uncommitted)
    if (slot.load(std::memory_order_relaxed) == datatype) {
      slot.store(MPI_DATATYPE_NULL, std::memory_order_relaxed);
      detail::uncommitted_count.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
}

}  // namespace

int datatype_made(int result, const MPI_Datatype* made, MPI_Datatype like) noexcept {
  ArgumentsState& s = arguments_state();
  if (result != MPI_SUCCESS || made == nullptr || !s.uncommitted) return result;
  if (like != MPI_DATATYPE_NULL && !uncommitted(like)) return result;  // a duplicate of a committed type
  const std::lock_guard lock(s.uncommitted_mutex);
  for (std::atomic<MPI_Datatype>& slot : detail::uncommitted)
    if (slot.load(std::memory_order_relaxed) == MPI_DATATYPE_NULL) {
      slot.store(*made, std::memory_order_relaxed);
      detail::uncommitted_count.fetch_add(1, std::memory_order_relaxed);
      break;
    }
  return result;
}

void datatype_committed(MPI_Datatype datatype) noexcept {
  if (!uncommitted(datatype)) return;
  const std::lock_guard lock(arguments_state().uncommitted_mutex);
  forget_uncommitted(datatype);
}

void datatype_gone(MPI_Datatype datatype) noexcept { datatype_committed(datatype); }

void start_arguments(const StartContext&) {
  ArgumentsState& s = arguments_state();
  s.rank = on(report::Check::ArgumentRank);
  s.tag = on(report::Check::ArgumentTag);
  s.count = on(report::Check::ArgumentCount);
  s.null_handle = on(report::Check::ArgumentNullHandle);
  s.null_buffer = on(report::Check::ArgumentNullBuffer);
  s.in_place = on(report::Check::ArgumentInPlace);
  s.aliased = on(report::Check::ArgumentAliased);
  s.uncommitted = on(report::Check::ArgumentUncommitted);
  for (std::atomic<MPI_Datatype>& slot : detail::uncommitted) slot.store(MPI_DATATYPE_NULL, std::memory_order_relaxed);
  detail::watching_arguments =
      s.rank || s.tag || s.count || s.null_handle || s.null_buffer || s.in_place || s.aliased || s.uncommitted;
  int* tag_ub = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found) == MPI_SUCCESS && found && tag_ub)
    detail::tag_ub = *tag_ub;
}

void judge_arguments(FunctionId function, std::initializer_list<Argument> arguments, const void* call_site) noexcept
try {
  const ArgumentsState& s = arguments_state();
  std::optional<comms::Info> info;
  std::optional<std::int64_t> count;  // the call's count, which comes before its datatype
  const Argument* send_buffer = nullptr;
  bool moves_data = true;  // false with an MPI_PROC_NULL peer: no byte moves, nothing overlaps
  for (const Argument& a : arguments) {
    switch (a.role) {
      case Argument::Role::Buffer:
      case Argument::Role::InPlaceBuffer:
        check_buffer(function, a, s, call_site);
        if (s.aliased && send_buffer && a.buffer == send_buffer->buffer && a.buffer != nullptr &&
            a.buffer != MPI_IN_PLACE && moves_data && has_data(a) && has_data(*send_buffer))
          report_argument(report::Check::ArgumentAliased, function, a, fmt::format("{}", a.buffer),
                          fmt::format("is its {} too: a call's buffers must not overlap (MPI 4.1, section 2.3); "
                                      "MPI_IN_PLACE is the way where MPI allows one buffer.",
                                      send_buffer->name),
                          call_site);
        send_buffer = send_buffer ? send_buffer : &a;
        break;
      case Argument::Role::Comm:
        if (a.comm == MPI_COMM_NULL && s.null_handle)
          report_argument(report::Check::ArgumentNullHandle, function, a, "MPI_COMM_NULL",
                          "names no communicator (MPI 4.1, section 2.5.1).", call_site);
        if (s.rank) info = communicator_info(a.comm);
        break;
      case Argument::Role::Dest:
      case Argument::Role::Source:
      case Argument::Role::Root:
        moves_data = moves_data && a.value != MPI_PROC_NULL;
        if (s.rank && info) check_rank(function, a, *info, call_site);
        break;
      case Argument::Role::Tag:
      case Argument::Role::ReceiveTag:
        if (!s.tag || (a.value >= 0 && a.value <= detail::tag_ub)) break;
        if (a.role == Argument::Role::ReceiveTag && a.value == MPI_ANY_TAG) break;
        report_argument(report::Check::ArgumentTag, function, a,
                        a.value == MPI_ANY_TAG ? std::string("MPI_ANY_TAG") : std::to_string(a.value),
                        fmt::format("is not a tag: tags are 0 to MPI_TAG_UB ({}){} (MPI 4.1, section 3.2.3).",
                                    detail::tag_ub, a.role == Argument::Role::ReceiveTag ? ", or MPI_ANY_TAG" : ""),
                        call_site);
        break;
      case Argument::Role::Count:
        count = a.value;
        if (s.count && a.value < 0)
          report_argument(report::Check::ArgumentCount, function, a, std::to_string(a.value),
                          "is negative (MPI 4.1, section 3.2.2).", call_site);
        break;
      case Argument::Role::Datatype:
        // No data, no type: MPI_DATATYPE_NULL with a count of 0 is what MPICH's own tests send, and accepts.
        if (s.null_handle && a.datatype == MPI_DATATYPE_NULL && count.value_or(1) != 0)
          report_argument(report::Check::ArgumentNullHandle, function, a, "MPI_DATATYPE_NULL",
                          "names no datatype (MPI 4.1, section 2.5.1).", call_site);
        if (s.uncommitted && uncommitted(a.datatype))
          report_argument(report::Check::ArgumentUncommitted, function, a,
                          fmt::format("{:#x}", handle_slots::key_of(a.datatype) - 1),
                          "is a derived datatype that was not committed: MPI_Type_commit it before a call that "
                          "moves data with it (MPI 4.1, section 5.1.9).",
                          call_site);
        break;
      case Argument::Role::Op:
        if (s.null_handle && a.op == MPI_OP_NULL)
          report_argument(report::Check::ArgumentNullHandle, function, a, "MPI_OP_NULL",
                          "names no operation (MPI 4.1, section 2.5.1).", call_site);
        break;
    }
  }
} catch (...) {  // a report that cannot be made must not keep the program's call from being made
}

}  // namespace mpisentry::checks
