#include "checks/arguments/arguments.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "records/communicators.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_arguments = false;
}

namespace {

struct ArgumentsState {
  bool rank = false, tag = false, count = false, null_handle = false;
  std::int64_t tag_ub = 32767;  // the least MPI_TAG_UB that MPI allows, until MPI_COMM_WORLD's is read
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
  if (rank == MPI_PROC_NULL || (a.role == Argument::Role::Source && rank == MPI_ANY_SOURCE)) return;
  if (a.role == Argument::Role::Root && info.inter && rank == MPI_ROOT) return;
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

}  // namespace

void start_arguments(const StartContext&) {
  ArgumentsState& s = arguments_state();
  s.rank = on(report::Check::ArgumentRank);
  s.tag = on(report::Check::ArgumentTag);
  s.count = on(report::Check::ArgumentCount);
  s.null_handle = on(report::Check::ArgumentNullHandle);
  detail::watching_arguments = s.rank || s.tag || s.count || s.null_handle;
  int* tag_ub = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found) == MPI_SUCCESS && found && tag_ub)
    s.tag_ub = *tag_ub;
}

void check_arguments(FunctionId function, std::initializer_list<Argument> arguments, const void* call_site) noexcept
try {
  const ArgumentsState& s = arguments_state();
  std::optional<comms::Info> info;
  std::optional<std::int64_t> count;  // the call's count, which comes before its datatype
  for (const Argument& a : arguments) {
    switch (a.role) {
      case Argument::Role::Comm:
        if (a.comm == MPI_COMM_NULL && s.null_handle)
          report_argument(report::Check::ArgumentNullHandle, function, a, "MPI_COMM_NULL",
                          "names no communicator (MPI 4.1, section 2.5.1).", call_site);
        if (s.rank) info = communicator_info(a.comm);
        break;
      case Argument::Role::Dest:
      case Argument::Role::Source:
      case Argument::Role::Root:
        if (s.rank && info) check_rank(function, a, *info, call_site);
        break;
      case Argument::Role::Tag:
      case Argument::Role::ReceiveTag:
        if (!s.tag || (a.value >= 0 && a.value <= s.tag_ub)) break;
        if (a.role == Argument::Role::ReceiveTag && a.value == MPI_ANY_TAG) break;
        report_argument(report::Check::ArgumentTag, function, a,
                        a.value == MPI_ANY_TAG ? std::string("MPI_ANY_TAG") : std::to_string(a.value),
                        fmt::format("is not a tag: tags are 0 to MPI_TAG_UB ({}){} (MPI 4.1, section 3.2.3).",
                                    s.tag_ub, a.role == Argument::Role::ReceiveTag ? ", or MPI_ANY_TAG" : ""),
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
