// The function table that src/api/generate_api.py makes from
// src/api/mpi_api.json: the large-count twins and the nonblocking and
// persistent forms carry their base's facts, and every name is MPI's.
#include <dlfcn.h>
#include <mpi.h>

#include <set>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "api/functions.hpp"

namespace mpisentry {
namespace {

constexpr auto kCount = static_cast<std::size_t>(FunctionId::Count);

FunctionId id_of(std::size_t index) { return static_cast<FunctionId>(index); }

bool ends_with(std::string_view text, std::string_view end) {
  return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

TEST_CASE("every function is listed once, under its MPI name") {
  std::set<std::string> names;
  for (std::size_t i = 1; i < kCount; ++i) {
    const std::string name = function_info(id_of(i)).name;
    INFO(name);
    CHECK(name.rfind("MPI_", 0) == 0);
    CHECK(names.insert(name).second);
    // The MPI library has it (every wrapper forwards to PMPI_<name>). An MPI
    // older than 4.0 (Open MPI 4.1) lacks 4.0's, which the build leaves out.
    if (MPI_VERSION >= 4) CHECK(dlsym(RTLD_DEFAULT, ("P" + name).c_str()) != nullptr);
  }
  CHECK(names.size() == 380);  // 372 generated wrappers, 8 written by hand
}

TEST_CASE("a large-count twin has its base's kind, family, pattern, wait rule, completion and mode") {
  int twins = 0;
  for (std::size_t i = 1; i < kCount; ++i) {
    const FunctionInfo& info = function_info(id_of(i));
    const std::string_view name = info.name;
    INFO(name);
    if (!info.large_count) {
      CHECK(info.plain == id_of(i));
      continue;
    }
    ++twins;
    REQUIRE(ends_with(name, "_c"));
    const FunctionInfo& plain = function_info(info.plain);
    CHECK(std::string_view(plain.name) == name.substr(0, name.size() - 2));
    CHECK(!plain.large_count);
    CHECK(info.kind == plain.kind);
    CHECK(info.form == plain.form);
    CHECK(info.family == plain.family);
    CHECK(info.pattern == plain.pattern);
    CHECK(info.waits == plain.waits);
    CHECK(info.completes == plain.completes);
    CHECK(info.mode == plain.mode);
  }
  CHECK(twins == 136);
}

TEST_CASE("a function's family is a blocking base with the same pattern") {
  for (std::size_t i = 1; i < kCount; ++i) {
    const FunctionInfo& info = function_info(id_of(i));
    INFO(info.name);
    const FunctionInfo& base = function_info(info.family);
    CHECK(base.family == info.family);
    CHECK(!base.large_count);
    CHECK(info.pattern == base.pattern);
    // A form whose base is not wrapped (MPI_Rput: MPI_Put) is its own family.
    if (info.family != info.plain) CHECK(base.form == Form::Blocking);
  }
  CHECK(function_info(FunctionId::Ialltoallw_c).family == FunctionId::Alltoallw);
  CHECK(function_info(FunctionId::Neighbor_allgather_init_c).family == FunctionId::Neighbor_allgather);
  CHECK(function_info(FunctionId::Irecv).family == FunctionId::Recv);
}

// The functions whose `member` is `value`, by name.
template <typename Member, typename Value>
std::set<std::string> named_where(Member member, Value value) {
  std::set<std::string> names;
  for (std::size_t i = 1; i < kCount; ++i)
    if (function_info(id_of(i)).*member == value) names.insert(function_info(id_of(i)).name);
  return names;
}

TEST_CASE("a send's mode is its family's: the Bsend family buffered, the Ssend family synchronous") {
  CHECK(named_where(&FunctionInfo::mode, SendMode::Buffered) ==
        std::set<std::string>{"MPI_Bsend", "MPI_Bsend_c", "MPI_Ibsend", "MPI_Ibsend_c", "MPI_Bsend_init",
                              "MPI_Bsend_init_c"});
  CHECK(named_where(&FunctionInfo::mode, SendMode::Synchronous) ==
        std::set<std::string>{"MPI_Ssend", "MPI_Ssend_c", "MPI_Issend", "MPI_Issend_c", "MPI_Ssend_init",
                              "MPI_Ssend_init_c"});
  CHECK(function_info(FunctionId::Rsend).mode == SendMode::Standard);
}

TEST_CASE("what a call on requests completes: one, all, any or some, and MPI_Request_get_status nothing") {
  CHECK(named_where(&FunctionInfo::completes, Completes::One) == std::set<std::string>{"MPI_Wait", "MPI_Test"});
  CHECK(named_where(&FunctionInfo::completes, Completes::All) == std::set<std::string>{"MPI_Waitall", "MPI_Testall"});
  CHECK(named_where(&FunctionInfo::completes, Completes::Any) == std::set<std::string>{"MPI_Waitany", "MPI_Testany"});
  CHECK(named_where(&FunctionInfo::completes, Completes::Some) ==
        std::set<std::string>{"MPI_Waitsome", "MPI_Testsome"});
  CHECK(function_info(FunctionId::Request_get_status).completes == Completes::None);
}

TEST_CASE("whom a window synchronization may wait for, and which window arguments its text shows") {
  CHECK(named_where(&FunctionInfo::synchronizes, WindowSync::Members) ==
        std::set<std::string>{"MPI_Win_fence", "MPI_Win_free"});
  CHECK(named_where(&FunctionInfo::synchronizes, WindowSync::Origins) ==
        std::set<std::string>{"MPI_Win_wait", "MPI_Win_test"});
  CHECK(named_where(&FunctionInfo::synchronizes, WindowSync::Targets) ==
        std::set<std::string>{"MPI_Win_start", "MPI_Win_complete"});
  CHECK(named_where(&FunctionInfo::synchronizes, WindowSync::Target) ==
        std::set<std::string>{"MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_flush", "MPI_Win_flush_local"});
  CHECK(named_where(&FunctionInfo::synchronizes, WindowSync::AllTargets) ==
        std::set<std::string>{"MPI_Win_lock_all", "MPI_Win_unlock_all", "MPI_Win_flush_all",
                              "MPI_Win_flush_local_all"});
  // MPI_Win_post exposes to its group but waits for nobody; MPI_Win_sync only orders memory.
  CHECK(function_info(FunctionId::Win_post).synchronizes == WindowSync::None);
  CHECK(function_info(FunctionId::Win_sync).synchronizes == WindowSync::None);
  CHECK(function_info(FunctionId::Win_start).arguments == (kGroupArgument | kAssertionArgument));
  CHECK(function_info(FunctionId::Win_lock).arguments == (kLockTypeArgument | kAssertionArgument));
  CHECK(function_info(FunctionId::Win_fence).arguments == kAssertionArgument);
  CHECK(function_info(FunctionId::Win_complete).arguments == 0);
}

TEST_CASE("the calls that take a matched message have a message argument") {
  std::set<std::string> with_message;
  for (std::size_t i = 1; i < kCount; ++i)
    if (function_info(id_of(i)).arguments & kMessageArgument) with_message.insert(function_info(id_of(i)).name);
  CHECK(with_message == std::set<std::string>{"MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv", "MPI_Mrecv_c", "MPI_Imrecv",
                                              "MPI_Imrecv_c"});
}

TEST_CASE("a function is found by its MPI name, and a name of none is FunctionId::None") {
  CHECK(function_named("MPI_Bsend_init_c") == FunctionId::Bsend_init_c);
  CHECK(function_named("MPI_Recv") == FunctionId::Recv);
  CHECK(function_named("MPI_Recv ") == FunctionId::None);
  CHECK(function_named("MPI_No_such_call") == FunctionId::None);
  CHECK(function_named("(none)") == FunctionId::None);
}

TEST_CASE("persistent requests are made by the _init functions") {
  for (std::size_t i = 1; i < kCount; ++i) {
    const FunctionInfo& info = function_info(id_of(i));
    INFO(info.name);
    const std::string_view name = info.name;
    const bool makes_request = name.find("_init") != std::string_view::npos && name != "MPI_Session_init";
    CHECK((info.form == Form::Persistent) == makes_request);
  }
}

TEST_CASE("the collectives' patterns and wait rules") {
  CHECK(function_info(FunctionId::Bcast_c).pattern == Pattern::Bcast);
  CHECK(function_info(FunctionId::Iallreduce).pattern == Pattern::Reduce);
  CHECK(function_info(FunctionId::Reduce_scatter_block_init_c).pattern == Pattern::ReduceScatter);
  CHECK(function_info(FunctionId::Ineighbor_alltoallw).pattern == Pattern::Neighborhood);
  CHECK(function_info(FunctionId::Comm_dup).pattern == Pattern::None);
  CHECK(function_info(FunctionId::Send).pattern == Pattern::None);
  // Wait rules belong to the blocking calls, their _c twins and their
  // nonblocking and persistent forms (a wait on one, or on a start of one,
  // waits as the blocking call).
  std::set<std::string> ruled;
  for (std::size_t i = 1; i < kCount; ++i) {
    const FunctionInfo& info = function_info(id_of(i));
    if (info.waits == WaitRule::MayWait) continue;
    if (info.form == Form::Nonblocking || info.form == Form::Persistent) {
      INFO(info.name);
      CHECK(info.waits == function_info(info.family).waits);
      continue;
    }
    ruled.insert(info.name);
  }
  CHECK(function_info(FunctionId::Ibarrier).waits == WaitRule::EveryMember);
  CHECK(function_info(FunctionId::Iscan_c).waits == WaitRule::EarlierMembers);
  CHECK(function_info(FunctionId::Barrier_init).waits == WaitRule::EveryMember);
  CHECK(ruled == std::set<std::string>{
                     "MPI_Barrier", "MPI_Comm_split", "MPI_Comm_split_type", "MPI_Intercomm_merge",
                     "MPI_Dist_graph_create", "MPI_Allreduce", "MPI_Allreduce_c", "MPI_Allgather", "MPI_Allgather_c",
                     "MPI_Alltoall", "MPI_Alltoall_c", "MPI_Reduce_scatter_block", "MPI_Reduce_scatter_block_c",
                     "MPI_Bcast", "MPI_Bcast_c", "MPI_Scatter", "MPI_Scatter_c", "MPI_Scatterv", "MPI_Scatterv_c",
                     "MPI_Gather", "MPI_Gather_c", "MPI_Reduce", "MPI_Reduce_c", "MPI_Scan", "MPI_Scan_c",
                     "MPI_Exscan", "MPI_Exscan_c"});
  CHECK(function_info(FunctionId::Gather_c).waits == WaitRule::RootNeedsAll);
  CHECK(function_info(FunctionId::Scatterv_c).waits == WaitRule::Root);
}

TEST_CASE("kinds") {
  CHECK(function_info(FunctionId::Send_c).kind == CallKind::Blocking);
  CHECK(function_info(FunctionId::Testsome).kind == CallKind::Polling);
  CHECK(function_info(FunctionId::Isend_c).kind == CallKind::Nonblocking);
  CHECK(function_info(FunctionId::Send_init).kind == CallKind::Nonblocking);
  CHECK(function_info(FunctionId::Comm_free).kind == CallKind::Blocking);
  CHECK(function_named("MPI_Finalize") == FunctionId::Finalize);
  CHECK(function_named("MPI_Init") == FunctionId::None);
}

}  // namespace
}  // namespace mpisentry
