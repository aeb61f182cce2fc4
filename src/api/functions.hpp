// What the checker knows about each wrapped MPI function, made at build time
// from src/api/mpi_api.json by src/api/generate_api.py (see the spec's
// "about" for the meaning of its fields). Every other layer reads this table
// rather than listing functions: a large-count twin (MPI_Send_c) carries its
// base's family, pattern and wait rule, so no switch names it.
#pragma once

#include <cstddef>
#include <cstdint>

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

// How a collective's data moves between members (checks/collectives.hpp).
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

struct FunctionInfo {
  const char* name;     // "MPI_Recv"
  CallKind kind;
  Form form;
  Pattern pattern;      // Pattern::None when not a collective with a data pattern
  WaitRule waits;
  FunctionId plain;     // the function without its _c: MPI_Send for MPI_Send_c
  FunctionId family;    // the base function: MPI_Bsend for MPI_Ibsend_c and MPI_Bsend_init
  bool large_count;     // an MPI 4 _c twin
};

namespace api_detail {
inline constexpr FunctionInfo kFunctions[] = {
    {"(none)", CallKind::None, Form::Blocking, Pattern::None, WaitRule::MayWait, FunctionId::None, FunctionId::None,
     false},
#include "api/function_table.inc"
};
static_assert(sizeof(kFunctions) / sizeof(kFunctions[0]) == static_cast<std::size_t>(FunctionId::Count));
}  // namespace api_detail

constexpr const FunctionInfo& function_info(FunctionId id) {
  const auto index = static_cast<std::size_t>(id);
  return api_detail::kFunctions[index < static_cast<std::size_t>(FunctionId::Count) ? index : 0];
}

// The function, its _c twin, and its nonblocking and persistent forms.
constexpr bool in_family(FunctionId id, FunctionId base) { return function_info(id).family == base; }

}  // namespace mpisentry
