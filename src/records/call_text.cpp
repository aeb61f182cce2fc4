#include "records/call_text.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mpisentry {
namespace {

template <typename Handle>
std::string handle_text(Handle handle) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &handle, std::min(sizeof(handle), sizeof(bits)));
  return fmt::format("{:#x}", bits);
}

}  // namespace

namespace {

struct PredefinedOp {
  MPI_Op op;
  const char* name;
};
const PredefinedOp kPredefinedOps[] = {
    {MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},   {MPI_SUM, "MPI_SUM"},       {MPI_PROD, "MPI_PROD"},
    {MPI_LAND, "MPI_LAND"}, {MPI_BAND, "MPI_BAND"}, {MPI_LOR, "MPI_LOR"},       {MPI_BOR, "MPI_BOR"},
    {MPI_LXOR, "MPI_LXOR"}, {MPI_BXOR, "MPI_BXOR"}, {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"},
    {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"},
};
constexpr int kPredefinedOpCount = static_cast<int>(sizeof(kPredefinedOps) / sizeof(kPredefinedOps[0]));

}  // namespace

int predefined_op_index(MPI_Op op) {
  for (int i = 0; i < kPredefinedOpCount; ++i)
    if (kPredefinedOps[i].op == op) return i;
  return -1;
}

const char* predefined_op_name_at(int index) {
  return index >= 0 && index < kPredefinedOpCount ? kPredefinedOps[index].name : "";
}

std::string predefined_op_name(MPI_Op op) {
  if (op == MPI_OP_NULL) return "";
  const int index = predefined_op_index(op);
  return index >= 0 ? predefined_op_name_at(index) : "a user-defined operation";
}

namespace {

const char* peer_role(CallShape shape) {
  switch (shape) {
    case CallShape::Send:
    case CallShape::SendReceive: return "dest";
    case CallShape::Receive:
    case CallShape::Probe: return "source";
    case CallShape::Rooted: return "root";
    default: return "peer";
  }
}

}  // namespace

std::string_view thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

std::optional<comms::Info> communicator_of(const CallRecord& call) {
  const std::uint64_t id = call.comm_id != 0 ? call.comm_id : comms::id_of(call.comm);
  return id == 0 ? std::nullopt : comms::info(id);
}

CallText::CallText() {
  for (MPI_Datatype type :
       {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
        MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
        MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_PACKED,
        MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
        MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
        MPI_CHARACTER, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION}) {
    char name[MPI_MAX_OBJECT_NAME] = {};
    int length = 0;
    if (type != MPI_DATATYPE_NULL && PMPI_Type_get_name(type, name, &length) == MPI_SUCCESS && length > 0)
      builtin_types_.emplace(type, std::string(name, static_cast<std::size_t>(length)));
  }
}

std::string CallText::datatype_name(MPI_Datatype datatype) const {
  if (datatype == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  const auto found = builtin_types_.find(datatype);
  return found != builtin_types_.end() ? found->second : handle_text(datatype);
}

std::string CallText::arguments(const CallRecord& call, const std::vector<RequestView>& requests) const {
  const auto tag_text = [](int tag) { return tag == MPI_ANY_TAG ? std::string("MPI_ANY_TAG") : std::to_string(tag); };
  const std::optional<comms::Info> info = communicator_of(call);
  const auto peer_text = [&](int rank) {
    if (rank == MPI_ANY_SOURCE) return std::string("MPI_ANY_SOURCE");
    if (rank == MPI_PROC_NULL) return std::string("MPI_PROC_NULL");
    if (rank == MPI_ROOT) return std::string("MPI_ROOT");
    if (call.comm == MPI_COMM_WORLD || !info) return std::to_string(rank);
    const std::optional<int> world = info->world_rank(rank);
    return world ? fmt::format("{} (world {})", rank, *world) : std::to_string(rank);
  };
  const auto buffer = [&] {
    const std::string buf = call.buffer == MPI_IN_PLACE ? "MPI_IN_PLACE" : fmt::format("{}", call.buffer);
    return fmt::format("buf={}, count={}, datatype={}", buf, call.count, datatype_name(call.datatype));
  };
  const std::string comm = "comm=" + (call.comm == MPI_COMM_WORLD ? std::string("MPI_COMM_WORLD")
                                      : call.comm == MPI_COMM_SELF ? std::string("MPI_COMM_SELF")
                                      : call.comm == MPI_COMM_NULL ? std::string("MPI_COMM_NULL")
                                      : info                       ? fmt::format("{} ({})", handle_text(call.comm), info->name)
                                                                   : handle_text(call.comm));
  // Only collectives store an operation.
  const auto op = [&] { return call.op == MPI_OP_NULL ? std::string() : ", op=" + predefined_op_name(call.op); };
  switch (call.shape) {
    case CallShape::Send:
    case CallShape::Receive:
      return fmt::format("{}, {}={}, tag={}, {}", buffer(), peer_role(call.shape), peer_text(call.peer),
                         tag_text(call.tag), comm);
    case CallShape::Probe: return fmt::format("source={}, tag={}, {}", peer_text(call.peer), tag_text(call.tag), comm);
    case CallShape::SendReceive:
      return fmt::format("{}, dest={}, sendtag={}, source={}, recvtag={}, {}", buffer(), peer_text(call.peer),
                         tag_text(call.tag), peer_text(call.source), tag_text(call.recv_tag), comm);
    case CallShape::MatchedReceive: return buffer();
    case CallShape::Collective:
      return call.datatype == MPI_DATATYPE_NULL ? comm : fmt::format("{}{}, {}", buffer(), op(), comm);
    case CallShape::Rooted: return fmt::format("{}{}, root={}, {}", buffer(), op(), peer_text(call.peer), comm);
    case CallShape::Neighborhood: return comm;
    case CallShape::FileCollective:
    case CallShape::FileAccess: {
      std::string text = "fh=" + (call.file.handle == MPI_FILE_NULL ? std::string("MPI_FILE_NULL") : handle_text(call.file.handle));
      if (call.file.handle != MPI_FILE_NULL && info) text += fmt::format(" ({})", info->name);
      if (call.file.offset >= 0) text += fmt::format(", offset={}", call.file.offset);
      return call.datatype == MPI_DATATYPE_NULL ? text : fmt::format("{}, {}", text, buffer());
    }
    case CallShape::Connection:
      return call.comm == MPI_COMM_NULL ? "" : fmt::format("root={}, {}", peer_text(call.peer), comm);
    case CallShape::Requests: {
      constexpr std::size_t kListed = 4;
      std::vector<std::string> listed;
      for (std::size_t i = 0; i < std::min(requests.size(), kListed); ++i) {
        const RequestView& request = requests[i];
        if (request.handle == MPI_REQUEST_NULL) {
          listed.emplace_back("MPI_REQUEST_NULL");
          continue;
        }
        std::string text = request.known ? format(request.started, {})
                                         : handle_text(request.handle) + " (a request mpisentry did not see start)";
        if (request.state == RequestState::Complete) text += " [complete]";
        listed.push_back(std::move(text));
      }
      if (static_cast<std::size_t>(call.request_count) > listed.size())
        listed.push_back(fmt::format("... {} more", static_cast<std::size_t>(call.request_count) - listed.size()));
      if (call.request_count == 1 && !listed.empty()) return "request=" + listed.front();
      return fmt::format("count={}, requests=[{}]", call.request_count, fmt::join(listed, ", "));
    }
    case CallShape::Window: return window_arguments(call, info);
    case CallShape::Opaque:
    case CallShape::Finalize:
    case CallShape::None: return call.comm == MPI_COMM_NULL ? "" : comm;
  }
  return "";
}

std::string CallText::window_arguments(const CallRecord& call, const std::optional<comms::Info>& info) const {
  const auto rank_text = [&](int rank) {
    const std::optional<int> world = info ? info->world_rank(rank) : std::nullopt;
    return !world || info->id == comms::kWorldId ? std::to_string(rank) : fmt::format("{} (world {})", rank, *world);
  };
  const auto assertion_text = [&] {
    std::vector<std::string> modes;
    int rest = call.window.assertion;
    for (const auto& [bit, mode] : {std::pair{MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK"}, {MPI_MODE_NOSTORE, "MPI_MODE_NOSTORE"},
                                    {MPI_MODE_NOPUT, "MPI_MODE_NOPUT"}, {MPI_MODE_NOPRECEDE, "MPI_MODE_NOPRECEDE"},
                                    {MPI_MODE_NOSUCCEED, "MPI_MODE_NOSUCCEED"}}) {
      if ((rest & bit) == 0) continue;
      modes.emplace_back(mode);
      rest &= ~bit;
    }
    if (rest != 0 || modes.empty()) modes.push_back(std::to_string(rest));
    return fmt::format("assert={}", fmt::join(modes, "|"));
  };
  const auto group_text = [&](const char* label) {
    std::vector<std::string> members;
    for (int i = 0; i < std::min(call.window.group_size, kCopiedRequests); ++i)
      members.push_back(call.window.group[i] == MPI_UNDEFINED ? "MPI_UNDEFINED" : rank_text(call.window.group[i]));
    if (call.window.group_size > kCopiedRequests) members.push_back(fmt::format("... {} more", call.window.group_size - kCopiedRequests));
    return fmt::format("{}=[{}]", label, fmt::join(members, ", "));
  };
  const std::string window =
      "win=" + (call.window.handle == MPI_WIN_NULL ? std::string("MPI_WIN_NULL")
                : info                      ? fmt::format("{} (on {})", handle_text(call.window.handle), info->name)
                                            : handle_text(call.window.handle) + " (a window mpisentry does not know)");
  // The call's own group, or the one its epoch's start named (targets of
  // MPI_Win_complete, origins of MPI_Win_wait); its lock type, target and
  // assertion where it has them.
  const FunctionInfo& function = function_info(call.function);
  std::vector<std::string> parts;
  if (function.arguments & kGroupArgument)
    parts.push_back(group_text("group"));
  else if (function.synchronizes == WindowSync::Targets)
    parts.push_back(group_text("targets"));
  else if (function.synchronizes == WindowSync::Origins)
    parts.push_back(group_text("origins"));
  if (function.arguments & kLockTypeArgument)
    parts.push_back(call.window.lock_type == MPI_LOCK_EXCLUSIVE ? "lock_type=MPI_LOCK_EXCLUSIVE"
                    : call.window.lock_type == MPI_LOCK_SHARED  ? "lock_type=MPI_LOCK_SHARED"
                                                                : fmt::format("lock_type={}", call.window.lock_type));
  if (function.synchronizes == WindowSync::Target) parts.push_back("rank=" + rank_text(call.peer));
  if (function.arguments & kAssertionArgument) parts.push_back(assertion_text());
  parts.push_back(window);
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string CallText::format(const CallRecord& call, const std::vector<RequestView>& requests) const {
  return fmt::format("{}({})", function_info(call.function).name, arguments(call, requests));
}

}  // namespace mpisentry
