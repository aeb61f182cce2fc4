#include "checks/collectives/collectives.hpp"

#include <sched.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "checks/collectives/match.hpp"
#include "findings/findings.hpp"
#include "trackers/signature.hpp"
#include "log/log.hpp"
#include "records/call_text.hpp"
#include "records/communicators.hpp"

namespace mpisentry::checks {

namespace detail {
bool collective_checking = false;
}

namespace {

struct CollectivesState {
  bool exchanging = false;  // a check that needs the other members' records is on
  bool invalid_parameter = false;
  bool comm_free = false;
  std::mutex mutex;  // guards pending
  struct Exchange;
  std::vector<std::unique_ptr<Exchange>> pending;
};

// One collective's records, sent and received.
struct CollectivesState::Exchange {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t comm_id = 0;
  int rank = 0;  // this member's rank in comm (in its local group)
  bool inter = false;
  std::vector<CollectiveRecord> mine;  // mine[j]: what this member tells peer j
  std::vector<CollectiveRecord> from;  // from[i]: what peer i told it
};
using Exchange = CollectivesState::Exchange;

CollectivesState& collectives_state() {
  static CollectivesState* const instance = new CollectivesState;  // never destroyed: wrappers may run during exit
  return *instance;
}

std::string_view kind_name(std::uint16_t kind) { return function_info(static_cast<FunctionId>(kind)).name; }

std::string call_text(const CollectiveRecord& record) {
  std::string text(kind_name(record.kind));
  if (record.kind_only) return text;
  const std::string_view op = predefined_op_name_at(record.op);  // "" for none
  if (record.rooted && !op.empty()) return fmt::format("{}(op={}, root={})", text, op, record.root);
  if (record.rooted) return fmt::format("{}(root={})", text, record.root);
  if (!op.empty()) return fmt::format("{}(op={})", text, op);
  return text;
}

std::string amount_text(const Amount& amount) {
  return fmt::format("{} byte{} ({} x {})", amount.bytes, amount.bytes == 1 ? "" : "s", amount.count, amount.type);
}

struct Peers {
  std::vector<int> world;  // world rank of each peer (the remote group's for inter)
  int me = 0;              // this member's world rank
  std::string comm;        // the communicator's name
};

Peers peers_of(const Exchange& exchange) {
  Peers peers;
  peers.me = world_rank();
  peers.comm = "a communicator";
  if (const auto info = comms::info(exchange.comm_id)) {
    peers.world = info->peers();
    peers.comm = info->name;
  }
  return peers;
}

std::string more_text(int peers, const char* what) {
  return peers > 1 ? fmt::format(" ({} ranks {})", peers, what) : std::string();
}

void report_call_mismatch(const Exchange& exchange, const Mismatch& mismatch, const Peers& peers, bool own_stack) {
  const CollectiveRecord& mine = exchange.mine.front();
  const CollectiveRecord& other = exchange.from[static_cast<std::size_t>(mismatch.first)];
  const int other_rank = world_rank_of(peers.world, mismatch.first);
  report::Finding finding;
  finding.check = mismatch.check;
  const std::string mine_text = call_text(mine), other_text = call_text(other);
  switch (mismatch.check) {
    case report::Check::CollectiveRoot:
      finding.summary.push_back(fmt::format("Different roots in {} on {}:", kind_name(mine.kind), peers.comm));
      break;
    case report::Check::CollectiveReduction:
      finding.summary.push_back(
          fmt::format("Different reduction operations in {} on {}:", kind_name(mine.kind), peers.comm));
      break;
    case report::Check::CommFreeMismatch:
      finding.summary.push_back(fmt::format("{} of {} meets another collective:",
                                            kind_name(mine.frees ? mine.kind : other.kind), peers.comm));
      break;
    default:
      finding.summary.push_back(fmt::format("Different collective operations at the same position on {}:", peers.comm));
      break;
  }
  finding.summary.push_back(fmt::format("rank {} calls {}, rank {} calls {}{}", peers.me, mine_text, other_rank,
                                        other_text, more_text(mismatch.peers, "differ")));
  finding.parties.push_back({{peers.me}, "calls", mine_text, {}});
  finding.parties.push_back({{other_rank}, "calls", other_text, {}});
  finding.key = fmt::format("{} {} {} {}", peers.comm, mine_text, other_text, mismatch.peers);
  report(std::move(finding), own_stack);
}

void report_data_mismatch(const Exchange& exchange, const Mismatch& mismatch, const Peers& peers, bool own_stack) {
  const std::size_t first = static_cast<std::size_t>(mismatch.first);
  const Amount& sent = exchange.from[first].sent;
  const Amount& expected = exchange.mine[first].expected;
  const int sender = world_rank_of(peers.world, mismatch.first);
  const std::string_view call = kind_name(exchange.mine.front().kind);
  report::Finding finding;
  finding.check = mismatch.check;
  finding.summary.push_back(fmt::format("{} of the data sent and received in {} on {} differ:",
                                        mismatch.check == report::Check::CollectiveSize ? "The sizes"
                                                                                        : "The type signatures",
                                        call, peers.comm));
  finding.summary.push_back(fmt::format("rank {} sends {}, rank {} expects {}{}", sender, amount_text(sent), peers.me,
                                        amount_text(expected), more_text(mismatch.peers, "send other data")));
  const std::string mine_text = call_text(exchange.mine.front());
  finding.parties.push_back({{peers.me}, fmt::format("expects {} from rank {}", amount_text(expected), sender),
                             mine_text, {}});
  finding.parties.push_back(
      {{sender}, fmt::format("sends {} to rank {}", amount_text(sent), peers.me), call_text(exchange.from[first]), {}});
  finding.key = fmt::format("{} {} {} {} {} {}", peers.comm, call, sent.count, sent.type, expected.count,
                            expected.type);
  report(std::move(finding), own_stack);
}

// Compares a completed exchange and reports what the checks on find.
void evaluate(const Exchange& exchange, bool own_stack) {
  std::optional<Peers> peers;
  const auto known_peers = [&]() -> const Peers& {
    if (!peers) peers = peers_of(exchange);
    return *peers;
  };
  // Every member sees every kind: the lowest reports.
  if (exchange.rank == 0)
    for (const Mismatch& mismatch : compare_calls(exchange.mine.front(), exchange.from))
      if (on(mismatch.check)) report_call_mismatch(exchange, mismatch, known_peers(), own_stack);
  if (exchange.inter) return;
  for (const Mismatch& mismatch : compare_data(exchange.mine, exchange.from))
    if (on(mismatch.check)) report_data_mismatch(exchange, mismatch, known_peers(), own_stack);
}

// Exchanges whose request completed (all of them with `drain` within
// kDrainLimit, those of `comm` only when it is not MPI_COMM_NULL) leave the
// pending list; reported by the caller, outside the lock.
std::vector<std::unique_ptr<Exchange>> take_completed(bool drain, MPI_Comm comm) {
  CollectivesState& s = collectives_state();
  std::vector<std::unique_ptr<Exchange>> completed;
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  const std::lock_guard lock(s.mutex);
  for (auto exchange = s.pending.begin(); exchange != s.pending.end();) {
    Exchange& e = **exchange;
    if (comm != MPI_COMM_NULL && e.comm != comm) {
      ++exchange;
      continue;
    }
    int done = 0;
    while (PMPI_Test(&e.request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && drain &&
           std::chrono::steady_clock::now() < limit)
      sched_yield();
    if (done) {
      completed.push_back(std::move(*exchange));
      exchange = s.pending.erase(exchange);
    } else if (drain) {
      log::debug("a collective check's exchange on a communicator did not complete within {} s: not compared",
                 std::chrono::seconds(kDrainLimit).count());
      // MPI may still write into its buffers: they are left allocated.
      (void)exchange->release();
      exchange = s.pending.erase(exchange);
    } else {
      ++exchange;
    }
  }
  return completed;
}

void evaluate_completed(bool drain, MPI_Comm comm) {
  for (const auto& exchange : take_completed(drain, comm)) evaluate(*exchange, /*own_stack=*/false);
}

// One peer's amount of `side`, `index` being the peer's rank.
class Amounts {
 public:
  Amount of(const Side& side, int index) {
    const MPI_Datatype type = side.types.at(index);
    const MPI_Count count = side.counts.at(index);
    if (type != last_type_ || count != last_count_ || !have_last_) {
      const Signature sig = signature_of(type, count);
      last_ = Amount{};
      last_.bytes = sig.bytes;
      last_.hash = sig.hash;
      last_.count = count;
      last_.present = 1;
      last_.known = sig.known;
      last_.untyped = sig.untyped;
      if (type != text_type_ || !have_text_) {
        text_ = datatype_text(type);
        text_type_ = type;
        have_text_ = true;
      }
      std::strncpy(last_.type, text_.c_str(), sizeof(last_.type) - 1);
      last_type_ = type;
      last_count_ = count;
      have_last_ = true;
    }
    return last_;
  }
  static Amount in_place() {
    Amount amount;
    amount.present = 1;
    return amount;
  }

 private:
  Amount last_;
  MPI_Datatype last_type_ = MPI_DATATYPE_NULL, text_type_ = MPI_DATATYPE_NULL;
  MPI_Count last_count_ = 0;
  bool have_last_ = false, have_text_ = false;
  std::string text_;
};

// What this member sends to peer j and expects from it, as MPI defines
// each collective's data movement.
void fill_amounts(const Collective& call, int me, int size, std::vector<CollectiveRecord>& records) {
  Amounts amounts;
  const bool send_in_place = call.send.buffer == MPI_IN_PLACE;
  const bool receive_in_place = call.receive.buffer == MPI_IN_PLACE;
  const bool is_root = me == call.root;
  for (int j = 0; j < size; ++j) {
    CollectiveRecord& r = records[static_cast<std::size_t>(j)];
    switch (call.pattern) {
      case Pattern::Bcast:
        if (is_root) r.sent = amounts.of(call.send, j);
        if (j == call.root) r.expected = amounts.of(call.receive, j);
        break;
      case Pattern::Gather:
        if (j == call.root) r.sent = is_root && send_in_place ? Amounts::in_place() : amounts.of(call.send, j);
        if (is_root) r.expected = j == me && send_in_place ? Amounts::in_place() : amounts.of(call.receive, j);
        break;
      case Pattern::Scatter:
        if (is_root) r.sent = j == me && receive_in_place ? Amounts::in_place() : amounts.of(call.send, j);
        if (j == call.root)
          r.expected = is_root && receive_in_place ? Amounts::in_place() : amounts.of(call.receive, j);
        break;
      case Pattern::Allgather:
        // In place, a member's contribution is its own block of the receive buffer.
        r.sent = send_in_place ? amounts.of(call.receive, me) : amounts.of(call.send, j);
        r.expected = amounts.of(call.receive, j);
        break;
      case Pattern::Alltoall:
        r.sent = send_in_place ? amounts.of(call.receive, j) : amounts.of(call.send, j);
        r.expected = amounts.of(call.receive, j);
        break;
      case Pattern::Reduce:
        r.sent = amounts.of(call.send, j);
        r.expected = amounts.of(call.send, j);
        break;
      case Pattern::ReduceScatter:
        r.sent = amounts.of(call.send, j);
        r.expected = amounts.of(call.send, me);
        break;
      case Pattern::None:
      case Pattern::Barrier:
      case Pattern::Neighborhood:
        break;
    }
  }
}

// INVALID_PARAMETER's look at the call alone: what is wrong, or empty.
std::string invalid_parameter(const Collective& call) {
  if (call.comm == MPI_COMM_NULL) return "comm=MPI_COMM_NULL";
  int inter = 0, size = 0, me = 0;
  PMPI_Comm_test_inter(call.comm, &inter);
  PMPI_Comm_size(call.comm, &size);
  PMPI_Comm_rank(call.comm, &me);
  if (call.reduces && call.op == MPI_OP_NULL) return "op=MPI_OP_NULL";
  if (call.root != kNoRoot) {
    if (inter) {
      int remote = 0;
      PMPI_Comm_remote_size(call.comm, &remote);
      if (call.root != MPI_ROOT && call.root != MPI_PROC_NULL && (call.root < 0 || call.root >= remote))
        return fmt::format("root={}, but the remote group has {} rank{}", call.root, remote, remote == 1 ? "" : "s");
      return {};
    }
    if (call.root < 0 || call.root >= size)
      return fmt::format("root={}, but the communicator has {} rank{}", call.root, size, size == 1 ? "" : "s");
  }
  if (inter || call.pattern == Pattern::Barrier || call.pattern == Pattern::Neighborhood) return {};
  const bool is_root = me == call.root;
  // `side`'s entries first..last-1, its count and datatype parameters named
  // `counts` and `type` ("recvcounts", "recvtype").
  const auto check_side = [](const Side& side, std::string_view counts, std::string_view type, int first,
                             int last) -> std::string {
    const bool per_rank = side.counts.ints || side.counts.large;
    for (int i = first; i < last; ++i) {
      if (const MPI_Count count = side.counts.at(i); count < 0)
        return per_rank ? fmt::format("{}[{}]={}", counts, i, count) : fmt::format("{}={}", counts, count);
      if (side.types.at(i) == MPI_DATATYPE_NULL)
        return side.types.per_rank ? fmt::format("{}s[{}]=MPI_DATATYPE_NULL", type, i)
                                   : fmt::format("{}=MPI_DATATYPE_NULL", type);
      if (!per_rank && !side.types.per_rank) break;
    }
    return {};
  };
  const bool send_in_place = call.send.buffer == MPI_IN_PLACE;
  const bool receive_in_place = call.receive.buffer == MPI_IN_PLACE;
  const bool send_per_rank = call.send.counts.ints || call.send.counts.large;
  const bool receive_per_rank = call.receive.counts.ints || call.receive.counts.large;
  const char* const sendcounts = send_per_rank ? "sendcounts" : "sendcount";
  const char* const recvcounts = receive_per_rank ? "recvcounts" : "recvcount";
  std::string found;
  switch (call.pattern) {
    case Pattern::Bcast:
    case Pattern::Reduce:
      return check_side(call.send, "count", "datatype", 0, 1);
    case Pattern::ReduceScatter:
      return check_side(call.send, send_per_rank ? "recvcounts" : "recvcount", "datatype", 0, size);
    case Pattern::Gather:
      if (!(is_root && send_in_place)) found = check_side(call.send, sendcounts, "sendtype", 0, 1);
      if (found.empty() && is_root) found = check_side(call.receive, recvcounts, "recvtype", 0, size);
      return found;
    case Pattern::Scatter:
      if (is_root) found = check_side(call.send, sendcounts, "sendtype", 0, size);
      if (found.empty() && !(is_root && receive_in_place))
        found = check_side(call.receive, recvcounts, "recvtype", 0, 1);
      return found;
    case Pattern::Allgather:
    case Pattern::Alltoall:
      if (!send_in_place) found = check_side(call.send, sendcounts, "sendtype", 0, size);
      return found.empty() ? check_side(call.receive, recvcounts, "recvtype", 0, size) : found;
    case Pattern::None:
    case Pattern::Barrier:
    case Pattern::Neighborhood:
      break;
  }
  return {};
}

void report_invalid_parameter(const Collective& call, const std::string& what) {
  const std::string_view name = function_info(call.function).name;
  report::Finding finding;
  finding.check = report::Check::CollectiveParameter;
  finding.summary.push_back(fmt::format("{} got an invalid parameter: {}", name, what));
  finding.parties.push_back({{world_rank()}, "calls", std::string(name), {}});
  finding.key = fmt::format("{} {}", name, what);
  report(std::move(finding), /*own_stack=*/true);
}

// A _c variant is exchanged as the plain one: MPI matches them.
std::uint16_t plain_kind(FunctionId function) { return static_cast<std::uint16_t>(function_info(function).plain); }

// Posts the exchange of `records` on `comm`; a blocking call waits for it and
// compares at once.
void exchange(MPI_Comm comm, std::vector<CollectiveRecord> records, bool inter, int me, bool blocking) {
  auto e = std::make_unique<Exchange>();
  e->comm = comm;
  e->comm_id = comms::id_of(comm);
  e->rank = me;
  e->inter = inter;
  e->mine = std::move(records);
  e->from.resize(e->mine.size());
  const int bytes = static_cast<int>(sizeof(CollectiveRecord));
  // Nonblocking even for blocking collectives: MPI never matches a blocking
  // collective with a nonblocking one, and a program that calls MPI_Bcast
  // where another member calls MPI_Ibcast must still get matching exchanges.
  if (PMPI_Ialltoall(e->mine.data(), bytes, MPI_BYTE, e->from.data(), bytes, MPI_BYTE, comm, &e->request) !=
      MPI_SUCCESS)
    return;
  if (blocking) {
    if (PMPI_Wait(&e->request, MPI_STATUS_IGNORE) == MPI_SUCCESS) evaluate(*e, /*own_stack=*/true);
    return;
  }
  CollectivesState& s = collectives_state();
  const std::lock_guard lock(s.mutex);
  s.pending.push_back(std::move(e));
}

struct Shape {
  int me = 0;
  int peers = 0;  // the remote group's size for an inter-communicator
  bool inter = false;
};

Shape shape_of(MPI_Comm comm) {
  Shape shape;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  shape.inter = inter != 0;
  PMPI_Comm_rank(comm, &shape.me);
  if (shape.inter)
    PMPI_Comm_remote_size(comm, &shape.peers);
  else
    PMPI_Comm_size(comm, &shape.peers);
  return shape;
}

}  // namespace

void start_collectives(const StartContext&) {
  CollectivesState& s = collectives_state();
  s.invalid_parameter = on(report::Check::CollectiveParameter);
  s.comm_free = on(report::Check::CommFreeMismatch);
  for (const report::Check check : {report::Check::CollectiveOperation, report::Check::CollectiveRoot,
                                    report::Check::CollectiveReduction, report::Check::CollectiveSize,
                                    report::Check::CollectiveDatatype, report::Check::CommFreeMismatch})
    s.exchanging = s.exchanging || on(check);
  detail::collective_checking = s.exchanging || s.invalid_parameter;
}

void check_collective(const Collective& call) {
  CollectivesState& s = collectives_state();
  if (s.invalid_parameter)
    if (const std::string what = invalid_parameter(call); !what.empty()) {
      report_invalid_parameter(call, what);
      return;
    }
  if (!s.exchanging || call.comm == MPI_COMM_NULL) return;
  evaluate_completed(/*drain=*/false, MPI_COMM_NULL);
  const Shape shape = shape_of(call.comm);
  const bool kind_only = shape.inter || call.pattern == Pattern::Neighborhood;
  CollectiveRecord common;
  common.kind = plain_kind(call.function);
  common.kind_only = kind_only;
  common.rooted = call.root != kNoRoot;
  common.root = call.root == kNoRoot ? 0 : call.root;
  common.op = call.reduces ? predefined_op_index(call.op) : -1;
  std::vector<CollectiveRecord> records(static_cast<std::size_t>(shape.peers), common);
  if (!kind_only) fill_amounts(call, shape.me, shape.peers, records);
  exchange(call.comm, std::move(records), shape.inter, shape.me,
           function_info(call.function).kind != CallKind::Nonblocking);
}

void collectives_freeing(MPI_Comm comm, FunctionId function) {
  CollectivesState& s = collectives_state();
  if (!s.exchanging || comm == MPI_COMM_NULL) return;
  evaluate_completed(/*drain=*/true, comm);
  if (!s.comm_free) return;
  const Shape shape = shape_of(comm);
  CollectiveRecord record;
  record.kind = static_cast<std::uint16_t>(function);
  record.kind_only = 1;
  record.frees = 1;
  exchange(comm, std::vector<CollectiveRecord>(static_cast<std::size_t>(shape.peers), record), shape.inter, shape.me,
           /*blocking=*/true);
}

void finish_collectives() {
  // A collective after MPI_Finalize is the program's error, which MPI must name: none is checked.
  detail::collective_checking = false;
  if (!collectives_state().exchanging) return;
  evaluate_completed(/*drain=*/true, MPI_COMM_NULL);
}

void compare_arrived_collectives() {
  if (!collectives_state().exchanging) return;
  evaluate_completed(/*drain=*/false, MPI_COMM_NULL);
}

}  // namespace mpisentry::checks
