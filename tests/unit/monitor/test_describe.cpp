// Whom a blocked call waits for (derive_waits), one test per call shape:
// definite waits hold in every conforming MPI implementation, possible waits
// only where MPI synchronizes. No MPI is called: the communicators come from
// a lookup and the requests' states are given.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fake_handles.hpp"
#include "monitor/describe.hpp"

using namespace mpisentry;
using namespace mpisentry::monitor;
using Catch::Matchers::Contains;

namespace {

using Ranks = std::vector<int>;

// A job of 4 ranks; the thread under test is in world rank `me`.
constexpr int me = 1;

// Handles the lookup knows (blocking point-to-point calls carry no comm_id,
// so the lookup goes by handle); their ids are what requests' starts carry.
const MPI_Comm reversed_comm = test::fake_handle<MPI_Comm>(0x44000001);
const MPI_Comm inter_comm = test::fake_handle<MPI_Comm>(0x44000002);
const MPI_Comm untracked_comm = test::fake_handle<MPI_Comm>(0x44000003);
const MPI_Comm accepted_comm = test::fake_handle<MPI_Comm>(0x44000004);
constexpr std::uint64_t world_id = comms::kWorldId;
constexpr std::uint64_t reversed_id = 71;  // world ranks in reverse order: comm rank r is world rank 3 - r
constexpr std::uint64_t inter_id = 72;     // local group {0, 1}, remote group {2, 3}
constexpr std::uint64_t file_id = 73;      // a file opened on MPI_COMM_WORLD
constexpr std::uint64_t accepted_id = 74;  // MPI_Comm_accept's: the remote process is outside the job

std::optional<comms::Info> lookup(const CallRecord& call) {
  const auto is = [&](std::uint64_t id, MPI_Comm handle) { return call.comm_id == id || call.comm == handle; };
  if (is(world_id, MPI_COMM_WORLD)) return comms::Info{world_id, {0, 1, 2, 3}, {}, false, true, "MPI_COMM_WORLD"};
  if (is(reversed_id, reversed_comm)) return comms::Info{reversed_id, {3, 2, 1, 0}, {}, false, true, "the reversed comm"};
  if (is(inter_id, inter_comm)) return comms::Info{inter_id, {0, 1}, {2, 3}, true, true, "the inter comm"};
  if (call.comm_id == file_id) return comms::Info{file_id, {0, 1, 2, 3}, {}, false, true, "the file"};
  if (is(accepted_id, accepted_comm))
    return comms::Info{accepted_id, {0, 1, 2, 3}, {MPI_UNDEFINED}, true, true, "the accepted comm"};
  return std::nullopt;
}

CallRecord point_to_point(FunctionId function, CallShape shape, int peer, int tag = 5, MPI_Comm comm = MPI_COMM_WORLD) {
  CallRecord call;
  call.function = function;
  call.shape = shape;
  call.peer = peer;
  call.tag = tag;
  call.comm = comm;
  call.count = 1;
  call.datatype = MPI_INT;
  return call;
}
CallRecord send(FunctionId function, int dest, MPI_Comm comm = MPI_COMM_WORLD) {
  return point_to_point(function, CallShape::Send, dest, 5, comm);
}
CallRecord recv(int source, MPI_Comm comm = MPI_COMM_WORLD) {
  return point_to_point(FunctionId::Recv, CallShape::Receive, source, 5, comm);
}
CallRecord sendrecv(int dest, int source) {
  CallRecord call = point_to_point(FunctionId::Sendrecv, CallShape::SendReceive, dest, 5);
  call.source = source;
  call.recv_tag = 6;
  return call;
}

// A request's start as the wrappers remember it: with its communicator's id.
CallRecord started(CallRecord call, FunctionId function) {
  call.function = function;
  call.comm_id = lookup(call) ? lookup(call)->id : 0;
  return call;
}
CallRecord isend(int dest) { return started(send(FunctionId::Isend, dest), FunctionId::Isend); }
CallRecord irecv(int source) { return started(recv(source), FunctionId::Irecv); }

RequestView request(const CallRecord& start, RequestState state, int handle) {
  return {test::fake_handle<MPI_Request>(handle), true, start, state};
}
RequestView incomplete(const CallRecord& start, int handle) { return request(start, RequestState::Incomplete, handle); }
RequestView complete(const CallRecord& start, int handle) { return request(start, RequestState::Complete, handle); }
RequestView null_request() { return {MPI_REQUEST_NULL, false, {}, RequestState::Unknown}; }
// The request table has no entry for it (started before it was seen, or overwritten).
RequestView not_in_table(int handle) { return {test::fake_handle<MPI_Request>(handle), false, {}, RequestState::Unknown}; }
// Not in the table: whatever `started` holds is not this request's start.
RequestView stale(const CallRecord& start, int handle) {
  return {test::fake_handle<MPI_Request>(handle), false, start, RequestState::Incomplete};
}
// Known, but not asked: the signal-dump thread never asks MPI.
RequestView not_asked(const CallRecord& start, int handle) { return request(start, RequestState::Unknown, handle); }

// A Wait-family call over `views`' handles.
CallRecord on_requests(FunctionId function, const std::vector<RequestView>& views, int count = -1) {
  CallRecord call;
  call.function = function;
  call.shape = CallShape::Requests;
  call.request_count = count < 0 ? static_cast<int>(views.size()) : count;
  for (std::size_t i = 0; i < std::min<std::size_t>(views.size(), kCopiedRequests); ++i)
    call.requests[i] = views[i].handle;
  return call;
}

Waits waits(const CallRecord& call, const std::vector<RequestView>& views = {}, int rank = me) {
  return derive_waits(call, views, rank, lookup);
}

// A collective of `function` on `comm` (the `sequence`-th there), `count`
// elements, root `root` for the rooted ones.
CallRecord collective(FunctionId function, std::int64_t count, std::uint64_t comm_id = world_id,
                      std::uint64_t sequence = 3, int root = MPI_PROC_NULL) {
  CallRecord call;
  call.function = function;
  call.shape = root == MPI_PROC_NULL ? CallShape::Collective : CallShape::Rooted;
  call.peer = root;
  call.count = count;
  call.datatype = count > 0 ? MPI_INT : MPI_DATATYPE_NULL;
  call.comm_id = comm_id;
  call.comm = comm_id == world_id ? MPI_COMM_WORLD : comm_id == reversed_id ? reversed_comm : inter_comm;
  call.sequence = sequence;
  return call;
}
CallRecord rooted(FunctionId function, int root, std::int64_t count = 4, std::uint64_t comm_id = world_id) {
  CallRecord call = collective(function, count, comm_id, 3, root);
  call.shape = CallShape::Rooted;
  return call;
}

void check_no_wait(const Waits& w) {
  CHECK(w.mode == WaitMode::None);
  CHECK(w.definite.empty());
  CHECK(w.possible.empty());
}

}  // namespace

TEST_CASE("a standard or synchronous send waits for its receiver, a buffered send for nothing", "[describe]") {
  for (FunctionId function : {FunctionId::Send, FunctionId::Ssend}) {
    const Waits w = waits(send(function, 2));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{2});
    CHECK(w.possible.empty());
    CHECK_THAT(w.reason, Contains("receiver, rank 2"));
    CHECK(w.messages == std::vector<PendingMessage>{{true, 2, 5, world_id, true}});
  }
  SECTION("the destination is translated to its MPI_COMM_WORLD rank") {
    CHECK(waits(send(FunctionId::Ssend, 0, reversed_comm)).definite == Ranks{3});
  }
  SECTION("a send that potential mode made synchronous says so") {
    CallRecord converted = send(FunctionId::Send, 2);
    converted.converted_send = true;
    CHECK(waits(converted).converted_send);
    CHECK_FALSE(waits(send(FunctionId::Send, 2)).converted_send);
  }
  SECTION("MPI_Bsend") { check_no_wait(waits(send(FunctionId::Bsend, 2))); }
  SECTION("to MPI_PROC_NULL") {
    const Waits w = waits(send(FunctionId::Ssend, MPI_PROC_NULL));
    check_no_wait(w);
    CHECK(w.messages.empty());
  }
}

TEST_CASE("a receive waits for its source, for any rank of the communicator from MPI_ANY_SOURCE", "[describe]") {
  SECTION("from a rank") {
    const Waits w = waits(recv(3));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{3});
    CHECK_THAT(w.reason, Contains("source, rank 3"));
    CHECK(w.messages == std::vector<PendingMessage>{{false, 3, 5, world_id, true}});
  }
  SECTION("from a rank of another communicator, by its MPI_COMM_WORLD rank") {
    const Waits w = waits(recv(1, reversed_comm));
    CHECK(w.definite == Ranks{2});
    CHECK(w.messages == std::vector<PendingMessage>{{false, 2, 5, reversed_id, true}});
  }
  SECTION("from MPI_ANY_SOURCE: OR over every member, itself included") {
    CallRecord any = recv(MPI_ANY_SOURCE);
    any.tag = MPI_ANY_TAG;
    const Waits w = waits(any);
    CHECK(w.mode == WaitMode::Any);
    CHECK(w.definite == Ranks{0, 1, 2, 3});
    CHECK_THAT(w.reason, Contains("MPI_ANY_SOURCE") && Contains("MPI_COMM_WORLD"));
    CHECK(w.messages ==
          std::vector<PendingMessage>{{false, PendingMessage::kAny, PendingMessage::kAny, world_id, true}});
  }
  SECTION("from MPI_PROC_NULL") {
    const Waits w = waits(recv(MPI_PROC_NULL));
    check_no_wait(w);
    CHECK(w.messages.empty());
  }
  SECTION("from a rank the communicator does not have") { check_no_wait(waits(recv(4))); }
}

TEST_CASE("a probe waits like a receive", "[describe]") {
  const Waits from_rank = waits(point_to_point(FunctionId::Probe, CallShape::Probe, 0));
  CHECK(from_rank.mode == WaitMode::All);
  CHECK(from_rank.definite == Ranks{0});
  CHECK_THAT(from_rank.reason, Contains("MPI_Probe"));
  const Waits any = waits(point_to_point(FunctionId::Probe, CallShape::Probe, MPI_ANY_SOURCE));
  CHECK(any.mode == WaitMode::Any);
  CHECK(any.definite == Ranks{0, 1, 2, 3});
}

TEST_CASE("a send-receive whose halves are unknown waits for either of its peers: one of them is not done",
          "[describe]") {
  SECTION("different peers: OR, and a transfer under way on either half may end it") {
    const Waits w = waits(sendrecv(2, 0));
    CHECK(w.mode == WaitMode::Any);
    CHECK(w.definite == Ranks{0, 2});
    CHECK_THAT(w.reason, Contains("send to 2") && Contains("receive from 0"));
    CHECK(w.messages == std::vector<PendingMessage>{{true, 2, 5, world_id, true}, {false, 0, 6, world_id, true}});
  }
  SECTION("the same peer both ways: that rank") {
    const Waits w = waits(sendrecv(2, 2));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{2});
  }
  SECTION("a half with MPI_PROC_NULL waits for the other half's peer") {
    const Waits w = waits(sendrecv(MPI_PROC_NULL, 3));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{3});
    CHECK_THAT(w.reason, Contains("MPI_PROC_NULL"));
  }
  SECTION("receiving from MPI_ANY_SOURCE: any member") {
    const Waits w = waits(sendrecv(2, MPI_ANY_SOURCE));
    CHECK(w.mode == WaitMode::Any);
    CHECK(w.definite == Ranks{0, 1, 2, 3});
  }
  SECTION("both halves MPI_PROC_NULL") { check_no_wait(waits(sendrecv(MPI_PROC_NULL, MPI_PROC_NULL))); }
}

TEST_CASE("MPI_Sendrecv, done as its halves, waits for its source until its receive is done, then for its receiver",
          "[describe]") {
  CallRecord call = sendrecv(2, 0);
  call.halves = Halves::ReceivePending;
  Waits w = waits(call);
  CHECK(w.mode == WaitMode::All);
  CHECK(w.definite == Ranks{0});
  CHECK_THAT(w.reason, Contains("its receive from its source, rank 0"));
  // The send may be done: a transfer under way into the receive may end the
  // call; one under way from the send cannot.
  CHECK(w.messages == std::vector<PendingMessage>{{true, 2, 5, world_id, false}, {false, 0, 6, world_id, true}});
  call.halves = Halves::SendPending;
  w = waits(call);
  CHECK(w.mode == WaitMode::All);
  CHECK(w.definite == Ranks{2});
  CHECK_THAT(w.reason, Contains("waits for its receiver, rank 2: its receive from 0 is done"));
  CHECK(w.messages == std::vector<PendingMessage>{{true, 2, 5, world_id, true}});
  SECTION("receiving from MPI_ANY_SOURCE: any member") {
    call = sendrecv(2, MPI_ANY_SOURCE);
    call.halves = Halves::ReceivePending;
    w = waits(call);
    CHECK(w.mode == WaitMode::Any);
    CHECK(w.definite == Ranks{0, 1, 2, 3});
  }
}

TEST_CASE("Wait and Waitall wait (AND) for the peers of their incomplete point-to-point requests", "[describe]") {
  const CallRecord persistent_send = started(send(FunctionId::Send_init, 3), FunctionId::Send_init);
  const CallRecord persistent_recv = started(recv(0), FunctionId::Recv_init);
  SECTION("MPI_Wait on one receive") {
    const std::vector<RequestView> views{incomplete(irecv(2), 10)};
    const Waits w = waits(on_requests(FunctionId::Wait, views), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{2});
    CHECK(w.messages == std::vector<PendingMessage>{{false, 2, 5, world_id}});
  }
  SECTION("completed, inactive, null and unreadable requests drop out; the others are all needed") {
    const std::vector<RequestView> views{
        incomplete(isend(2), 10),          complete(irecv(3), 11),
        complete(persistent_send, 12),     // an inactive persistent request
        null_request(),                    incomplete(persistent_recv, 13),
        not_in_table(14),                  not_asked(irecv(3), 15),
        stale(irecv(3), 16)};
    const Waits w = waits(on_requests(FunctionId::Waitall, views), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{0, 2});
    CHECK_THAT(w.reason, Contains("2 of its 8 requests still incomplete"));
    CHECK(w.messages == std::vector<PendingMessage>{{true, 2, 5, world_id}, {false, 0, 5, world_id}});
  }
  SECTION("an active persistent send waits like a send") {
    const std::vector<RequestView> views{incomplete(persistent_send, 12)};
    const Waits w = waits(on_requests(FunctionId::Wait, views), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{3});
  }
  SECTION("a partitioned send with partitions not readied waits for its own rank, and sends no message yet") {
    RequestView partitioned = incomplete(started(send(FunctionId::Psend_init, 3), FunctionId::Psend_init), 12);
    partitioned.unreadied_partitions = 2;
    const std::vector<RequestView> views{partitioned, incomplete(irecv(2), 10)};
    const Waits w = waits(on_requests(FunctionId::Waitall, views), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{me, 2});
    CHECK(w.messages == std::vector<PendingMessage>{{false, 2, 5, world_id}});
    CHECK_THAT(w.reason, Contains("its partitioned send has 2 partitions not readied (MPI_Pready), which only rank"));
    partitioned.unreadied_partitions = 0;  // all readied: a send to rank 3
    const std::vector<RequestView> readied{partitioned};
    CHECK(waits(on_requests(FunctionId::Wait, readied), readied).definite == Ranks{3});
  }
  SECTION("every request complete: no wait") {
    const std::vector<RequestView> views{complete(isend(2), 10), null_request(), complete(persistent_recv, 13)};
    check_no_wait(waits(on_requests(FunctionId::Waitall, views), views));
  }
  SECTION("only unreadable requests: no wait, and the reason says so") {
    const std::vector<RequestView> views{not_in_table(14), not_asked(irecv(2), 15)};
    const Waits w = waits(on_requests(FunctionId::Waitall, views), views);
    check_no_wait(w);
    CHECK_THAT(w.reason, Contains("cannot read"));
  }
  SECTION("buffered sends and MPI_PROC_NULL receives wait for nothing") {
    const std::vector<RequestView> views{incomplete(started(send(FunctionId::Ibsend, 2), FunctionId::Ibsend), 10),
                                         incomplete(irecv(MPI_PROC_NULL), 11), incomplete(irecv(3), 12)};
    const Waits w = waits(on_requests(FunctionId::Waitall, views), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{3});
  }
  SECTION("more requests than were copied: the copied ones still count") {
    const std::vector<RequestView> views{incomplete(irecv(2), 10)};
    const Waits w = waits(on_requests(FunctionId::Waitall, views, kCopiedRequests + 4), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{2});
  }
  SECTION("a receive from MPI_ANY_SOURCE alone: OR over the communicator") {
    const std::vector<RequestView> views{incomplete(irecv(MPI_ANY_SOURCE), 10)};
    const Waits w = waits(on_requests(FunctionId::Wait, views), views);
    CHECK(w.mode == WaitMode::Any);
    CHECK(w.definite == Ranks{0, 1, 2, 3});
  }
  SECTION("a request on the inter-communicator waits for the remote group") {
    const std::vector<RequestView> views{incomplete(started(recv(1, inter_comm), FunctionId::Irecv), 10)};
    const Waits w = waits(on_requests(FunctionId::Wait, views), views);
    CHECK(w.definite == Ranks{3});
  }
}

TEST_CASE("Waitany and Waitsome wait (OR) for any incomplete request's peer, unless one is unreadable",
          "[describe]") {
  for (FunctionId function : {FunctionId::Waitany, FunctionId::Waitsome}) {
    const CallRecord persistent_recv = started(recv(0), FunctionId::Recv_init);
    SECTION(function_info(function).name) {
      SECTION("completed, inactive and null requests drop out") {
        const std::vector<RequestView> views{incomplete(isend(2), 10), complete(irecv(3), 11),
                                             complete(persistent_recv, 12), null_request(), incomplete(irecv(2), 13)};
        const Waits w = waits(on_requests(function, views), views);
        CHECK(w.mode == WaitMode::Any);
        CHECK(w.definite == Ranks{2});
        CHECK_THAT(w.reason, Contains("any of rank 2"));
      }
      SECTION("an active persistent request counts") {
        const std::vector<RequestView> views{incomplete(isend(2), 10), incomplete(persistent_recv, 12)};
        const Waits w = waits(on_requests(function, views), views);
        CHECK(w.mode == WaitMode::Any);
        CHECK(w.definite == Ranks{0, 2});
      }
      SECTION("a request not in the table: it may complete the call, so no wait") {
        const std::vector<RequestView> views{incomplete(isend(2), 10), not_in_table(11)};
        check_no_wait(waits(on_requests(function, views), views));
        const std::vector<RequestView> with_stale{incomplete(isend(2), 10), stale(irecv(2), 11)};
        check_no_wait(waits(on_requests(function, with_stale), with_stale));
      }
      SECTION("a request not asked about: no wait") {
        const std::vector<RequestView> views{incomplete(isend(2), 10), not_asked(irecv(3), 11)};
        check_no_wait(waits(on_requests(function, views), views));
      }
      SECTION("a buffered send among them: it completes on its own, so no wait") {
        const std::vector<RequestView> views{
            incomplete(isend(2), 10), incomplete(started(send(FunctionId::Ibsend, 3), FunctionId::Ibsend), 11)};
        check_no_wait(waits(on_requests(function, views), views));
      }
      SECTION("more than the copied requests: the others are unread, so no wait") {
        const std::vector<RequestView> views(kCopiedRequests, incomplete(isend(2), 10));
        CHECK(waits(on_requests(function, views), views).mode == WaitMode::Any);
        check_no_wait(waits(on_requests(function, views, kCopiedRequests + 1), views));
      }
    }
  }
}

TEST_CASE("a wait on a nonblocking collective waits as its blocking twin would, apart from its other requests",
          "[describe]") {
  const CallRecord ibarrier = collective(FunctionId::Ibarrier, 0);
  const CallRecord iallreduce = collective(FunctionId::Iallreduce, 4, world_id, 4);
  const auto started_as = [](const char* function, std::uint64_t sequence, int root, Ranks definite, Ranks possible) {
    return StartedCollective{{world_id, sequence, function, root, ""}, RankSet(definite), RankSet(possible)};
  };
  SECTION("MPI_Wait on MPI_Ibarrier: every other member, none of them as a plain wait") {
    const std::vector<RequestView> views{incomplete(ibarrier, 10)};
    const Waits w = waits(on_requests(FunctionId::Wait, views), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite.empty());
    CHECK(w.started_collectives == std::vector<StartedCollective>{started_as("MPI_Ibarrier", 3, -1, {0, 2, 3}, {})});
    CHECK_THAT(w.reason, Contains("MPI_Ibarrier on MPI_COMM_WORLD (its collective #3 there) cannot complete"));
  }
  SECTION("MPI_Waitall over two collectives and a receive: all of them") {
    const std::vector<RequestView> views{incomplete(ibarrier, 10), incomplete(iallreduce, 11),
                                         incomplete(irecv(2), 12), complete(collective(FunctionId::Ibarrier, 0), 13)};
    const Waits w = waits(on_requests(FunctionId::Waitall, views), views);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{2});
    CHECK(w.started_collectives == std::vector<StartedCollective>{started_as("MPI_Ibarrier", 3, -1, {0, 2, 3}, {}),
                                                                  started_as("MPI_Iallreduce", 4, -1, {0, 2, 3}, {})});
    CHECK_THAT(w.reason, Contains("3 of its 4 requests still incomplete"));
  }
  SECTION("an MPI_Ibcast leaf: its root definitely, the other leaves possibly") {
    const std::vector<RequestView> views{incomplete(rooted(FunctionId::Ibcast, 0), 10)};
    const Waits w = waits(on_requests(FunctionId::Wait, views), views);
    CHECK(w.started_collectives == std::vector<StartedCollective>{started_as("MPI_Ibcast", 3, 0, {0}, {2, 3})});
  }
  SECTION("MPI_Waitany: any of the receive's source or the collective's members") {
    const std::vector<RequestView> views{incomplete(ibarrier, 10), incomplete(irecv(2), 11)};
    const Waits w = waits(on_requests(FunctionId::Waitany, views), views);
    CHECK(w.mode == WaitMode::Any);
    CHECK(w.definite == Ranks{2});
    CHECK(w.started_collectives.size() == 1);
  }
  SECTION("MPI_Waitany over a collective that waits for no member definitely: it may complete, no wait") {
    const std::vector<RequestView> views{incomplete(collective(FunctionId::Iallreduce, 0), 10),
                                         incomplete(irecv(2), 11)};
    check_no_wait(waits(on_requests(FunctionId::Waitany, views), views));
  }
  SECTION("a persistent collective's start waits as its blocking base, matched by its own count of starts") {
    CallRecord started = collective(FunctionId::Barrier_init, 0);
    started.persistent = {777, 3};
    const std::vector<RequestView> one{incomplete(started, 10)};
    const Waits w = waits(on_requests(FunctionId::Wait, one), one);
    CHECK(w.mode == WaitMode::All);
    REQUIRE(w.started_collectives.size() == 1);
    CHECK(w.started_collectives[0].call.comm_id == 777u);
    CHECK(w.started_collectives[0].call.sequence == 3u);
    CHECK(w.reason.find("a persistent collective, in its start #3") != std::string::npos);
  }
  SECTION("an opaque call's or an unasked request reads nothing") {
    CallRecord file_read;
    file_read.function = FunctionId::File_iread;
    file_read.shape = CallShape::Opaque;
    for (const RequestView& view : {incomplete(file_read, 11), not_asked(ibarrier, 12)}) {
      const std::vector<RequestView> one{view};
      const Waits w = waits(on_requests(FunctionId::Wait, one), one);
      check_no_wait(w);
      CHECK(w.started_collectives.empty());
    }
  }
}

TEST_CASE("Barrier and Allreduce with data wait definitely for every other member", "[describe]") {
  for (const CallRecord& call : {collective(FunctionId::Barrier, 0), collective(FunctionId::Allreduce, 4)}) {
    const Waits w = waits(call);
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{0, 2, 3});
    CHECK(w.possible.empty());
    CHECK_THAT(w.reason, Contains("every member") && Contains("#3"));
    CHECK(w.collective.comm_id == world_id);
    CHECK(w.collective.sequence == 3);
    CHECK(w.collective.function == function_info(call.function).name);
    CHECK(w.collective.root == -1);
  }
  SECTION("an Allreduce of no data may return at once: possible waits only") {
    const Waits w = waits(collective(FunctionId::Allreduce, 0));
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0, 2, 3});
    CHECK_THAT(w.reason, Contains("only where MPI makes it synchronize"));
  }
  SECTION("the operation is recorded for matching by name; user-defined ones are not told apart") {
    CallRecord sum = collective(FunctionId::Allreduce, 4);
    sum.op = MPI_SUM;
    CallRecord max = sum;
    max.op = MPI_MAX;
    CHECK(waits(sum).collective.op == "MPI_SUM");
    CHECK(waits(max).collective.op == "MPI_MAX");
    CHECK(waits(collective(FunctionId::Barrier, 0)).collective.op.empty());  // MPI_OP_NULL
    CallRecord user = sum;
    user.op = test::fake_handle<MPI_Op>(0x98000000);
    CallRecord other_user = sum;
    other_user.op = test::fake_handle<MPI_Op>(0x98000001);
    CHECK(waits(user).collective.op == "a user-defined operation");
    CHECK(waits(user).collective.op == waits(other_user).collective.op);
  }
}

TEST_CASE("a Bcast leaf waits definitely for its root and possibly for the others, the root only possibly",
          "[describe]") {
  SECTION("leaf") {
    const Waits w = waits(rooted(FunctionId::Bcast, 2));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{2});
    CHECK(w.possible == Ranks{0, 3});
    CHECK_THAT(w.reason, Contains("root, rank 2"));
    CHECK(w.collective.root == 2);
    CHECK(w.collective.function == "MPI_Bcast");
  }
  SECTION("leaf on a communicator whose root is another world rank") {
    const Waits w = waits(rooted(FunctionId::Bcast, 0, 4, reversed_id));
    CHECK(w.definite == Ranks{3});
    CHECK(w.collective.root == 3);
  }
  SECTION("root") {
    const Waits w = waits(rooted(FunctionId::Bcast, me));
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0, 2, 3});
    CHECK(w.collective.root == me);
  }
  SECTION("leaf of a Bcast of no data: possible waits only") {
    const Waits w = waits(rooted(FunctionId::Bcast, 2, 0));
    CHECK(w.mode == WaitMode::None);
    CHECK(w.possible == Ranks{0, 2, 3});
  }
}

TEST_CASE("a Gather or Reduce root waits definitely for every member, a leaf only possibly", "[describe]") {
  for (FunctionId function : {FunctionId::Gather, FunctionId::Reduce}) {
    const Waits root = waits(rooted(function, me));
    CHECK(root.mode == WaitMode::All);
    CHECK(root.definite == Ranks{0, 2, 3});
    CHECK(root.possible.empty());
    CHECK_THAT(root.reason, Contains("root needs the data of every member"));
    const Waits leaf = waits(rooted(function, 0));
    CHECK(leaf.mode == WaitMode::None);
    CHECK(leaf.definite.empty());
    CHECK(leaf.possible == Ranks{0, 2, 3});
    CHECK(leaf.collective.root == 0);
  }
}

TEST_CASE("a Scan waits definitely for the ranks before it, possibly for those after", "[describe]") {
  SECTION("in MPI_COMM_WORLD") {
    const Waits w = waits(collective(FunctionId::Scan, 4));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{0});
    CHECK(w.possible == Ranks{2, 3});
    CHECK_THAT(w.reason, Contains("ranks before it"));
  }
  SECTION("in communicator order, not world order") {
    // World rank 1 is rank 2 of the reversed communicator: after world ranks 3 and 2.
    const Waits w = waits(collective(FunctionId::Scan, 4, reversed_id));
    CHECK(w.definite == Ranks{2, 3});
    CHECK(w.possible == Ranks{0});
  }
  SECTION("the first rank waits definitely for nobody") {
    const Waits w = waits(collective(FunctionId::Scan, 4), {}, 0);
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{1, 2, 3});
  }
}

TEST_CASE("Alltoallv and Comm_dup wait only possibly, Comm_split definitely", "[describe]") {
  for (FunctionId function : {FunctionId::Alltoallv, FunctionId::Comm_dup}) {
    const Waits w = waits(collective(function, 0));
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0, 2, 3});
  }
  const Waits split = waits(collective(FunctionId::Comm_split, 0));
  CHECK(split.mode == WaitMode::All);
  CHECK(split.definite == Ranks{0, 2, 3});
  CHECK(split.collective.function == "MPI_Comm_split");
}

TEST_CASE("on an inter-communicator, peers are ranks of the remote group", "[describe]") {
  // World rank 1 is in the local group {0, 1}; the remote group is {2, 3}.
  SECTION("a receive from remote rank 0") { CHECK(waits(recv(0, inter_comm)).definite == Ranks{2}); }
  SECTION("a send to remote rank 1") { CHECK(waits(send(FunctionId::Ssend, 1, inter_comm)).definite == Ranks{3}); }
  SECTION("from MPI_ANY_SOURCE: any rank of the remote group") {
    const Waits w = waits(recv(MPI_ANY_SOURCE, inter_comm));
    CHECK(w.mode == WaitMode::Any);
    CHECK(w.definite == Ranks{2, 3});
  }
  SECTION("a remote rank past the remote group's size") { check_no_wait(waits(recv(2, inter_comm))); }
  SECTION("a Bcast leaf waits for its root in the remote group") {
    const Waits w = waits(rooted(FunctionId::Bcast, 1, 4, inter_id));
    CHECK(w.definite == Ranks{3});
    CHECK(w.collective.root == 3);
  }
  SECTION("the other ranks of the root's group take no part") {
    check_no_wait(waits(rooted(FunctionId::Bcast, MPI_PROC_NULL, 4, inter_id)));
  }
  SECTION("a Barrier waits definitely for the remote group only") {
    // MPI: "A process may return from the call before all processes in its own group have entered the call."
    const Waits w = waits(collective(FunctionId::Barrier, 0, inter_id));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{2, 3});
    CHECK(w.possible == Ranks{0});
  }
  SECTION("a Gather root (MPI_ROOT) needs the data of the remote group, not of its own group") {
    const Waits w = waits(rooted(FunctionId::Gather, MPI_ROOT, 4, inter_id));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.collective.root == me);
    CHECK(w.definite == Ranks{2, 3});
  }
}

TEST_CASE("a call on a communicator the lookup does not know waits for nothing", "[describe]") {
  check_no_wait(waits(recv(0, untracked_comm)));
  check_no_wait(waits(send(FunctionId::Ssend, 0, untracked_comm)));
  CallRecord barrier = collective(FunctionId::Barrier, 0);
  barrier.comm = untracked_comm;
  barrier.comm_id = 0;
  const Waits w = waits(barrier);
  check_no_wait(w);
  CHECK(w.collective.comm_id == 0);
  CHECK_THAT(w.reason, Contains("does not track"));
  const std::vector<RequestView> views{incomplete(started(recv(0, untracked_comm), FunctionId::Irecv), 10)};
  check_no_wait(waits(on_requests(FunctionId::Wait, views), views));
}

TEST_CASE("MPI_Finalize waits (AND) for ranks the analysis fills in", "[describe]") {
  CallRecord finalize;
  finalize.function = FunctionId::Finalize;
  finalize.shape = CallShape::Finalize;
  const Waits w = waits(finalize);
  CHECK(w.mode == WaitMode::All);
  CHECK(w.definite.empty());
  CHECK(w.possible.empty());
  CHECK_THAT(w.reason, Contains("MPI_Finalize"));
}

TEST_CASE("neighbourhood collectives, matched receives and opaque calls wait for nothing", "[describe]") {
  CallRecord neighbours = collective(FunctionId::Neighbor_allgather, 4);
  neighbours.shape = CallShape::Neighborhood;
  CallRecord matched;
  matched.function = FunctionId::Mrecv;
  matched.shape = CallShape::MatchedReceive;
  CallRecord opaque;
  opaque.function = FunctionId::File_iread;
  opaque.shape = CallShape::Opaque;
  for (const CallRecord& call : {neighbours, matched, opaque}) {
    const Waits w = waits(call);
    check_no_wait(w);
    CHECK_THAT(w.reason, Contains(function_info(call.function).name));
  }
}

TEST_CASE("a large-count collective waits like its int-count twin", "[describe]") {
  const std::vector<std::pair<FunctionId, FunctionId>> twins{
      {FunctionId::Bcast, FunctionId::Bcast_c},         {FunctionId::Scatter, FunctionId::Scatter_c},
      {FunctionId::Scatterv, FunctionId::Scatterv_c},   {FunctionId::Gather, FunctionId::Gather_c},
      {FunctionId::Reduce, FunctionId::Reduce_c},       {FunctionId::Allreduce, FunctionId::Allreduce_c},
      {FunctionId::Allgather, FunctionId::Allgather_c}, {FunctionId::Alltoall, FunctionId::Alltoall_c},
      {FunctionId::Scan, FunctionId::Scan_c},           {FunctionId::Exscan, FunctionId::Exscan_c},
      {FunctionId::Reduce_scatter_block, FunctionId::Reduce_scatter_block_c},
      {FunctionId::Alltoallv, FunctionId::Alltoallv_c}, {FunctionId::Gatherv, FunctionId::Gatherv_c}};
  for (const auto& [int_count, large_count] : twins) {
    // As a leaf (root 2), as the root, and unrooted.
    for (const int root : {2, me, MPI_PROC_NULL}) {
      INFO(function_info(large_count).name << " with root " << root);
      const auto call = [&](FunctionId function) {
        return root == MPI_PROC_NULL ? collective(function, 4) : rooted(function, root);
      };
      const Waits expected = waits(call(int_count));
      const Waits w = waits(call(large_count));
      CHECK(w.mode == expected.mode);
      CHECK(w.definite == expected.definite);
      CHECK(w.possible == expected.possible);
      CHECK(w.collective.function == function_info(large_count).name);
    }
  }
  SECTION("for example an MPI_Allreduce_c with data waits definitely for every other member") {
    const Waits w = waits(collective(FunctionId::Allreduce_c, 4));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{0, 2, 3});
  }
}

TEST_CASE("a collective on a file waits possibly for the members of its communicator, independent IO for nobody",
          "[describe]") {
  CallRecord write_all;
  write_all.function = FunctionId::File_write_all;
  write_all.shape = CallShape::FileCollective;
  write_all.comm_id = file_id;
  write_all.sequence = 2;
  SECTION("MPI_File_write_all: MPI may or may not make it synchronize") {
    const Waits w = waits(write_all);
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0, 2, 3});
    CHECK(w.collective.comm_id == file_id);
    CHECK(w.collective.sequence == 2);
    CHECK(w.collective.function == "MPI_File_write_all");
    CHECK_THAT(w.reason, Contains("on the file (its collective #2 there)"));
  }
  SECTION("a file the checker did not see opened (MPI_FILE_NULL): no wait") {
    write_all.comm_id = 0;
    const Waits w = waits(write_all);
    check_no_wait(w);
    CHECK(w.collective.comm_id == 0);
  }
  SECTION("MPI_File_write_at: independent") {
    CallRecord write_at;
    write_at.function = FunctionId::File_write_at;
    write_at.shape = CallShape::FileAccess;
    write_at.comm_id = file_id;
    const Waits w = waits(write_at);
    check_no_wait(w);
    CHECK(w.collective.comm_id == 0);
    CHECK_THAT(w.reason, Contains("MPI_File_write_at: independent file access waits for no other rank"));
  }
}

TEST_CASE("accept, connect, spawn and join wait for no rank of the job, yet count as their communicator's collective",
          "[describe]") {
  for (FunctionId function : {FunctionId::Comm_accept, FunctionId::Comm_connect, FunctionId::Comm_spawn,
                              FunctionId::Comm_spawn_multiple}) {
    CallRecord call = collective(function, 0, world_id, 4, 0);
    call.shape = CallShape::Connection;
    const Waits w = waits(call);
    INFO(function_info(function).name);
    check_no_wait(w);
    CHECK_THAT(w.reason, Contains("outside the job"));
    CHECK(w.collective.comm_id == world_id);
    CHECK(w.collective.sequence == 4);
    CHECK(w.collective.root == 0);
    CHECK(w.collective.function == function_info(function).name);
  }
  SECTION("MPI_Comm_join has no communicator") {
    CallRecord join;
    join.function = FunctionId::Comm_join;
    join.shape = CallShape::Connection;
    const Waits w = waits(join);
    check_no_wait(w);
    CHECK(w.collective.comm_id == 0);
  }
}

TEST_CASE("a receive from MPI_ANY_SOURCE that a process outside the job may complete waits for nothing",
          "[describe]") {
  check_no_wait(waits(recv(MPI_ANY_SOURCE, accepted_comm)));
  const std::vector<RequestView> views{incomplete(started(recv(MPI_ANY_SOURCE, accepted_comm), FunctionId::Irecv), 10),
                                       incomplete(irecv(2), 11)};
  check_no_wait(waits(on_requests(FunctionId::Waitany, views), views));
}

namespace {

constexpr std::uint64_t window_id = 81;  // a window on the reversed communicator

// A window call on the reversed communicator (window rank r is world rank
// 3 - r), with its epoch's group as window ranks.
CallRecord on_window(FunctionId function, const Ranks& group = {}, int target = MPI_PROC_NULL) {
  CallRecord call;
  call.function = function;
  call.shape = CallShape::Window;
  call.window.handle = test::fake_handle<MPI_Win>(0xa0000001);
  call.window.id = window_id;
  call.comm_id = reversed_id;
  call.sequence = 2;
  call.peer = target;
  call.window.group_size = static_cast<int>(group.size());
  std::copy(group.begin(), group.end(), call.window.group);
  return call;
}

}  // namespace

TEST_CASE("MPI_Win_wait and MPI_Win_test wait definitely for every origin of the exposure epoch", "[describe][rma]") {
  for (FunctionId function : {FunctionId::Win_wait, FunctionId::Win_test}) {
    const Waits w = waits(on_window(function, {0, 2}));
    CHECK(w.mode == WaitMode::All);
    CHECK(w.definite == Ranks{1, 3});  // world ranks of window ranks 2 and 0
    CHECK(w.possible.empty());
    CHECK(w.collective.comm_id == 0);
    // Each origin's MPI_Win_complete is a notice on the window, for handshakes under way.
    CHECK(w.messages == std::vector<PendingMessage>{{false, 1, 0, window_id}, {false, 3, 0, window_id}});
    CHECK_THAT(w.reason, Contains("MPI_Win_complete of every origin") && Contains("ranks 1,3"));
  }
  SECTION("a member outside the window, or an empty group, waits for no one") {
    check_no_wait(waits(on_window(FunctionId::Win_wait, {MPI_UNDEFINED})));
    check_no_wait(waits(on_window(FunctionId::Win_wait, {})));
  }
}

TEST_CASE("MPI_Win_fence and MPI_Win_free wait only possibly, as the window's numbered collective", "[describe][rma]") {
  for (FunctionId function : {FunctionId::Win_fence, FunctionId::Win_free}) {
    const Waits w = waits(on_window(function));
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0, 2, 3});
    // Counted on the window's own id, not on its communicator's.
    CHECK(w.collective == CollectiveCall{window_id, 2, function_info(function).name, -1, ""});
    CHECK_THAT(w.reason, Contains("the reversed comm") && Contains("#2"));
  }
}

TEST_CASE("MPI_Win_start and MPI_Win_complete wait only possibly, for their targets", "[describe][rma]") {
  for (FunctionId function : {FunctionId::Win_start, FunctionId::Win_complete}) {
    const Waits w = waits(on_window(function, {3}));
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0});
    CHECK(w.messages == std::vector<PendingMessage>{{true, 0, 0, window_id}});
    CHECK_THAT(w.reason, Contains("MPI_Win_post of its targets: rank 0"));
  }
}

TEST_CASE("lock, unlock and flush wait only possibly, for the target or a lock holder: any other member",
          "[describe][rma]") {
  for (FunctionId function : {FunctionId::Win_lock, FunctionId::Win_unlock, FunctionId::Win_flush,
                              FunctionId::Win_flush_local}) {
    const Waits w = waits(on_window(function, {}, 1));  // window rank 1 is world rank 2
    CHECK(w.mode == WaitMode::None);
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0, 2, 3});
    CHECK_THAT(w.reason, Contains("its target, rank 2"));
  }
  for (FunctionId function : {FunctionId::Win_lock_all, FunctionId::Win_unlock_all, FunctionId::Win_flush_all,
                              FunctionId::Win_flush_local_all}) {
    const Waits w = waits(on_window(function));
    CHECK(w.definite.empty());
    CHECK(w.possible == Ranks{0, 2, 3});
  }
  SECTION("a target outside the window waits for no one") {
    check_no_wait(waits(on_window(FunctionId::Win_lock, {}, 9)));
  }
}

TEST_CASE("MPI_Win_post, MPI_Win_sync and calls on a window mpisentry does not know wait for nothing",
          "[describe][rma]") {
  check_no_wait(waits(on_window(FunctionId::Win_post, {0, 1})));
  check_no_wait(waits(on_window(FunctionId::Win_sync)));
  CallRecord unknown = on_window(FunctionId::Win_wait, {0});
  unknown.window.id = 0;
  unknown.comm_id = 0;
  const Waits w = waits(unknown);
  check_no_wait(w);
  CHECK_THAT(w.reason, Contains("does not track"));
}
