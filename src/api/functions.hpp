// What the checker knows about each wrapped MPI function, made at build time
// from src/api/mpi_api.json by src/api/generate_api.py (see the spec's
// "about" for the meaning of its fields). Every other layer reads this table
// rather than listing functions: a large-count twin (MPI_Send_c) carries its
// base's family, pattern and wait rule, so no switch names it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace mpisentry {

enum class FunctionId : std::uint16_t {
  None,
#include "api/function_ids.inc"
  Count
};

enum class CallKind : std::uint8_t {
  None,
  Blocking,     // waits for other ranks; its return is progress
  Polling,      // Test/Iprobe family: progress only when it completes something
  Nonblocking,  // starts an operation
};

// Blocking (and polling) calls, nonblocking starts, persistent inits.
enum class Form : std::uint8_t { Blocking, Nonblocking, Persistent };

// How a collective's data moves between members (checks/collectives/collectives.hpp).
enum class Pattern : std::uint8_t {
  None,
  Barrier,
  Bcast,
  Gather,
  Scatter,
  Allgather,
  Alltoall,
  Reduce,
  ReduceScatter,
  Neighborhood,
};

// Which waits of a blocking collective are definite: those that hold in every
// conforming MPI implementation because the call cannot complete without
// data, or a synchronization, from those members (monitor/describe.cpp).
enum class WaitRule : std::uint8_t {
  MayWait,               // counts not known, or no data dependency: possible waits only
  EveryMember,           // Barrier, communicator splits
  EveryMemberWithData,   // a reduction or exchange with data from every member, when count > 0
  Root,                  // a Bcast/Scatter leaf needs the root's data, when count > 0
  RootNeedsAll,          // a Gather/Reduce root needs every member's data, when count > 0
  EarlierMembers,        // Scan/Exscan: rank i needs ranks 0..i-1, when count > 0
};

// How a send completes (its family's `mode` in the spec).
enum class SendMode : std::uint8_t {
  Standard,     // buffered or not, as MPI chooses (MPI_Send, MPI_Rsend, and every call that sends nothing)
  Buffered,     // MPI_Bsend, MPI_Ibsend, MPI_Bsend_init: never waits for its receive
  Synchronous,  // MPI_Ssend, MPI_Issend, MPI_Ssend_init: waits for its receive
};
// Whom a window synchronization may wait for (the spec's `synchronizes`):
// the window's members as one of its collectives (MPI_Win_fence,
// MPI_Win_free), the origins of its exposure epoch (MPI_Win_wait, _test),
// the targets of its access epoch (MPI_Win_start, _complete), the target
// rank it names (MPI_Win_lock, _unlock, _flush, _flush_local) or every
// member as a passive target (the _all forms).
enum class WindowSync : std::uint8_t { None, Members, Origins, Targets, Target, AllTargets };
// Which of these roles a function's parameters have (from the spec's
// params): the window arguments that its call text shows (CallText), and
// the message handle that a matched probe returns, taking the message.
enum Argument : std::uint8_t {
  kGroupArgument = 1,
  kLockTypeArgument = 2,
  kAssertionArgument = 4,
  kMessageArgument = 8,
};
// What a call on requests completes (frees or deactivates): one request, all
// of them, any one, or some; None for every other call, and for
// MPI_Request_get_status, which completes nothing.
enum class Completes : std::uint8_t { None, One, All, Any, Some };
struct FunctionInfo {
  const char* name;     // "MPI_Recv"
  CallKind kind;
  Form form;
  Pattern pattern;      // Pattern::None when not a collective with a data pattern
  WaitRule waits;
  Completes completes;
  SendMode mode;
  WindowSync synchronizes;
  std::uint8_t arguments;  // Argument bits
  FunctionId plain;     // the function without its _c: MPI_Send for MPI_Send_c
  FunctionId family;    // the base function: MPI_Bsend for MPI_Ibsend_c and MPI_Bsend_init
  bool large_count;     // an MPI 4 _c twin
};

namespace api_detail {
inline constexpr FunctionInfo kFunctions[] = {
    {"(none)", CallKind::None, Form::Blocking, Pattern::None, WaitRule::MayWait, Completes::None, SendMode::Standard,
     WindowSync::None, 0, FunctionId::None, FunctionId::None, false},
#include "api/function_table.inc"
};
static_assert(sizeof(kFunctions) / sizeof(kFunctions[0]) == static_cast<std::size_t>(FunctionId::Count));
}  // namespace api_detail

constexpr const FunctionInfo& function_info(FunctionId id) {
  const auto index = static_cast<std::size_t>(id);
  return api_detail::kFunctions[index < static_cast<std::size_t>(FunctionId::Count) ? index : 0];
}

// The wrapped function named `name` ("MPI_Bsend_init"); FunctionId::None
// when none is.
constexpr FunctionId function_named(std::string_view name) {
  for (std::size_t i = 1; i < std::size(api_detail::kFunctions); ++i)
    if (name == api_detail::kFunctions[i].name) return static_cast<FunctionId>(i);
  return FunctionId::None;
}

// The function, its _c twin, and its nonblocking and persistent forms.
constexpr bool in_family(FunctionId id, FunctionId base) { return function_info(id).family == base; }

}  // namespace mpisentry
