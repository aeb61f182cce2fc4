// Trust: correct programs shaped like deadlocks (a rank computes while the
// others wait on requests, collectives and threads that look like cycles)
// must run to their end unchanged, and true deadlocks of the same shapes must
// be reported with the right cycle.
#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

struct CorrectRuns {
  JobResult plain;    // without the checker and without the computation
  JobResult checked;  // with the checker and the long computation
};

// Runs `program <seconds> <variant...>` twice: without the checker and with
// 0 seconds of computation (quick), then with the checker, kDeadlockOptions
// and kLongComputation (or, `timed`, kTimedDeadlockOptions and
// kTimedComputation). The program's output must not depend on the
// computation's length. The plain run must succeed.
CorrectRuns run_without_then_with(const Workspace& workspace, int ranks, const Program& program,
                                  const std::vector<std::string>& variant, bool timed = false) {
  std::vector<std::string> plain_args{"0"};
  plain_args.insert(plain_args.end(), variant.begin(), variant.end());
  std::vector<std::string> checked_args{timed ? kTimedComputation : kLongComputation};
  checked_args.insert(checked_args.end(), variant.begin(), variant.end());
  CorrectRuns runs{run_job(workspace, plain_command(ranks, program, plain_args)),
                   run_checked(workspace, ranks, program, timed ? kTimedDeadlockOptions : kDeadlockOptions,
                               checked_args)};
  INFO("without the checker:\n" << describe(runs.plain));
  REQUIRE(runs.plain.succeeded());
  return runs;
}

// The checked run is clean (no error, no global warning, no report) and
// printed what the plain run printed. `timed`: under kTimedDeadlockOptions,
// for the twins of hangs whose verdict needs a possible wait.
void check_correct(int ranks, const Program& program, const std::vector<std::string>& variant = {},
                   bool timed = false) {
  Workspace workspace;
  const CorrectRuns runs = run_without_then_with(workspace, ranks, program, variant, timed);
  check_clean_run(runs.checked, workspace);
  INFO(describe(runs.checked));
  CHECK(runs.checked.out == runs.plain.out);
}

// The checked run ended by itself with status 0 and the plain run's output,
// and no error verdict: warnings are allowed.
void check_completes_without_error(const CorrectRuns& runs) {
  INFO(describe(runs.checked));
  REQUIRE_FALSE(runs.checked.timed_out);
  CHECK(runs.checked.succeeded());
  CHECK(runs.checked.err.find("ERROR:") == std::string::npos);
  CHECK(runs.checked.out == runs.plain.out);
}

}  // namespace

// ---- Correct programs: a rank computes for twice the timeout, others wait ----

TEST_CASE("halo_late: neighbours of a late rank wait in Waitall with a 1 MB send pending", "[trust][clean]") {
  check_correct(4, TEST_PROGRAM(halo_late));
}

TEST_CASE("waitall_done: a completed request next to one from a computing rank", "[trust][clean][.slow]") {
  const std::string completion = GENERATE(as<std::string>{}, "waitall", "waitany", "waitsome", "testall", "testsome");
  INFO("rank 0 completes its requests with " << completion);
  check_correct(3, TEST_PROGRAM(waitall_done), {completion});
}

TEST_CASE("persistent_inactive: inactive persistent requests in a Waitall", "[trust][clean]") {
  check_correct(3, TEST_PROGRAM(persistent_inactive));
}

TEST_CASE("sendrecv_half: a Sendrecv with one half done waits for a computing rank", "[trust][clean]") {
  const std::string pending = GENERATE(as<std::string>{}, "send_pending", "recv_pending");
  INFO("the pending half: " << pending);
  check_correct(3, TEST_PROGRAM(sendrecv_half), {pending});
}

TEST_CASE("handle_reuse: MPI_Comm_idup's request reuses a completed receive's handle", "[trust][clean]") {
  check_correct(3, TEST_PROGRAM(handle_reuse), {"idup"});
}

TEST_CASE("handle_reuse: a generalized request completed by a thread", "[trust][clean]") {
  check_correct(2, TEST_PROGRAM(handle_reuse), {"grequest"});
}

TEST_CASE("bcast_leaf: a leaf leaves MPI_Bcast before a later rank enters it", "[trust][clean]") {
  // Unsafe by the standard: a warning (GLOBAL:DEADLOCK:UNSAFE) is allowed,
  // an error is not.
  Workspace workspace;
  check_completes_without_error(run_without_then_with(workspace, 3, TEST_PROGRAM(bcast_leaf), {}));
}

TEST_CASE("collective_sequence: consecutive collectives while a rank computes", "[trust][clean]") {
  const std::string collectives = GENERATE(as<std::string>{}, "reduce_bcast", "split");
  INFO("collectives: " << collectives);
  check_correct(3, TEST_PROGRAM(collective_sequence), {collectives});
}

TEST_CASE("partition_thread: a wait on a partitioned send whose last partition another thread readies after "
          "computing",
          "[trust][clean]") {
  check_correct(2, TEST_PROGRAM(partition_thread));
}

TEST_CASE("comm_thread: a thread waits in MPI while the main thread computes", "[trust][clean]") {
  // crossed: on both ranks a thread waits for the other rank's computing
  // main thread, past the timeout; neither rank is stuck.
  const std::string role = GENERATE(as<std::string>{}, "listener", "thread_recv", "crossed");
  INFO("the thread's role: " << role);
  check_correct(2, TEST_PROGRAM(comm_thread), {role});
}

TEST_CASE("slow_op: every rank waits for an Iallreduce whose user operation sleeps", "[trust][clean]") {
  // A warning after DEADLOCK-WARNING is allowed, an abort is not.
  Workspace workspace;
  check_completes_without_error(run_without_then_with(workspace, 2, TEST_PROGRAM(slow_op), {}));
}

TEST_CASE("bad_input: null requests, null peers, zero counts, MPI_COMM_NULL and returned errors as without the checker",
          "[trust][clean]") {
  // 4 ranks are more than the test machine's cores: the wrappers then wait
  // patiently (nonblocking calls and tests) by default. "default" leaves
  // MPISENTRY_PATIENT_WAITS unset.
  const int ranks = GENERATE(2, 4);
  const std::string patient_waits = GENERATE(as<std::string>{}, "default", "on", "off");
  INFO(ranks << " ranks, MPISENTRY_PATIENT_WAITS " << patient_waits);
  const Program program = TEST_PROGRAM(bad_input);
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(ranks, program));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  CHECK(plain.out.find("Recv of 4 ints into 1: MPI_ERR_TRUNCATE\n") != std::string::npos);
  CHECK(plain.out.find("rank 99 in Send: MPI_ERR_RANK") != std::string::npos);
  CHECK(plain.out.find("on MPI_COMM_NULL: Barrier MPI_ERR_COMM, Bcast MPI_ERR_COMM, Send MPI_ERR_COMM") !=
        std::string::npos);
  Environment env;
  if (patient_waits != "default") env.emplace_back("MPISENTRY_PATIENT_WAITS", patient_waits);
  // Its erroneous calls are made on purpose: LOCAL:ARGUMENT reports them (tests/arguments), off here, where MPI's
  // own errors must reach the program unchanged.
  const JobResult checked = run_job(
      workspace, checked_command(workspace, ranks, program, with(kDeadlockOptions, kArgumentChecksOff)), env);
  check_clean_run(checked, workspace);
  INFO(describe(checked));
  CHECK(checked.out == plain.out);
}

// ---- True deadlocks of the same shapes ----

// Each program's ranks, blocked calls, blocking functions and cycle are
// written in the program (expectation_of in scenario.hpp).

TEST_CASE("waitall_cycle: the pending request of a Waitall is in a cycle, the other is done", "[trust][deadlock]") {
  // The completed receive's source, rank 1, is in no cycle.
  check_expected_deadlock(TEST_PROGRAM(waitall_cycle));
}

TEST_CASE("sendrecv_cycle: the 1 MB send half of a Sendrecv is in a cycle, the receive half is done",
          "[trust][deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(sendrecv_cycle));
}

TEST_CASE("bcast_root_cycle: the root of a Bcast waits for a leaf in the Bcast", "[trust][deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(bcast_root_cycle));
}

TEST_CASE("reused_handle_cycle: a Wait on a reused request handle is in a cycle", "[trust][deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(reused_handle_cycle));
}

TEST_CASE("thread_cycle: every thread of both ranks waits in MPI_Recv for the other rank", "[trust][deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(thread_cycle));
}

// ---- Communicators with the same members are told apart ----
// twin_communicators: rank 1 computes first in the correct twins.

namespace {

// A hang of a program run as `program 0 <shape> bug` on `ranks` ranks: what
// the report must show, and the cycle (empty when the rule names a mismatch
// instead).
struct ShapedHang {
  std::string shape;
  int ranks = 2;
  std::map<int, std::string> calls;
  std::vector<std::string> blocking_functions;
  std::vector<int> cycle;
  std::string rule;  // a regex the rule line, or another line of the report, must match
  // The verdict rests on a wait only some MPIs make: HARD only after an
  // explicit DEADLOCK-TIMEOUT (1 minute under auto).
  bool possible_waits = false;
};

void check_shaped_hang(const Program& program, const ShapedHang& hang) {
  INFO("shape: " << hang.shape);
  Workspace workspace;
  const JobResult result = run_checked(workspace, hang.ranks, program,
                                       hang.possible_waits ? kTimedDeadlockOptions : kDeadlockOptions,
                                       {"0", hang.shape, "bug"});
  check_deadlock(result, program,
                 {.calls = hang.calls, .blocking_functions = hang.blocking_functions, .shape = hang.shape});
  if (!hang.cycle.empty()) check_cycle(result, hang.cycle);
  CHECK(any_line_matches(result.report.value_or(""), hang.rule));
}

// The hang's correct twin, `program <seconds> <shape> correct`: one rank
// computes first while the others wait.
void check_shaped_twin(const Program& program, const ShapedHang& hang) {
  INFO("shape: " << hang.shape);
  check_correct(hang.ranks, program, {hang.shape, "correct"}, hang.possible_waits);
}

const ShapedHang kTwinHangs[] = {
    {"barriers",
     2,
     {{0, R"(MPI_Barrier\(comm=.*MPI_Comm_dup #1 of MPI_COMM_WORLD)"},
      {1, R"(MPI_Barrier\(comm=.*MPI_Comm_dup #2 of MPI_COMM_WORLD)"}},
     {"barrier_on"},
     {0, 1},
     R"(rule: each rank of the cycle waits in a call that cannot return before the next rank acts)"},
    {"ssend",
     2,
     {{0, R"(MPI_Ssend\(.*comm=.*MPI_Comm_dup #1 of MPI_COMM_WORLD)"}, {1, R"(MPI_Recv\(.*comm=MPI_COMM_WORLD\))"}},
     {"send_synchronously", "receive_from_rank_0"},
     {0, 1},
     R"(rule: each rank of the cycle waits in a call that cannot return before the next rank acts)"},
    {"bcast_roots",
     2,
     {{0, R"(MPI_Bcast\(.*root=0,)"}, {1, R"(MPI_Bcast\(.*root=1,)"}},
     {"broadcast"},
     {},
     R"(rule: every rank is blocked and their calls cannot match: rank 0 is in MPI_Bcast with root 0 )"
     R"(and rank 1 in MPI_Bcast with root 1, as collective #1 of the same communicator)"},
    {"kinds",
     2,
     {{0, R"(MPI_Barrier\(comm=MPI_COMM_WORLD\))"}, {1, R"(MPI_Allreduce\(.*count=262144,.*op=MPI_SUM)"}},
     {"barrier_on", "reduce"},
     {},
     R"(rule: every rank is blocked and their calls cannot match: rank 0 is in MPI_Barrier and rank 1 in )"
     R"(MPI_Allreduce with operation MPI_SUM)"},
    // Bad input: MPI leaves the receive waiting; the checker must neither
    // crash nor give the new duplicate the freed one's identity.
    {"freed",
     2,
     {{0, R"(MPI_Comm_dup\(comm=MPI_COMM_WORLD\))"}, {1, R"(MPI_Recv\(.*comm=.*MPI_Comm_dup #1 of MPI_COMM_WORLD)"}},
     {"receive_from_rank_0", "make_another"},
     {0, 1},
     R"(MPI_Comm_dup on MPI_COMM_WORLD \(its collective #2 there\))",
     true},
};

}  // namespace

TEST_CASE("twin_communicators: correct twins of the hangs below end without a report", "[trust][clean]") {
  check_shaped_twin(TEST_PROGRAM(twin_communicators),
                    GENERATE(from_range(std::begin(kTwinHangs), std::end(kTwinHangs))));
}

TEST_CASE("twin_communicators: twin duplicates, self-rooted broadcasts, a barrier against a reduction, a freed "
          "communicator",
          "[trust][deadlock]") {
  check_shaped_hang(TEST_PROGRAM(twin_communicators),
                    GENERATE(from_range(std::begin(kTwinHangs), std::end(kTwinHangs))));
}

// ---- Hangs that MPI's matching rules prove (hangs_proven) ----
// In the correct twins one rank computes first while the others wait.

namespace {

const ShapedHang kProvenHangs[] = {
    {"mixed_collective",
     2,
     {{0, R"(MPI_Allgather\()"}, {1, R"(MPI_Wait\(request=MPI_Iallgather\()"}},
     {"gather_blocking", "gather_nonblocking"},
     {},
     R"(rule: every rank is blocked and their calls cannot match: rank 0 is in MPI_Allgather and rank 1 in )"
     R"(MPI_Wait on MPI_Iallgather, as collective #1 of the same communicator)"},
    {"root_returns",
     2,
     {{0, R"(MPI_Barrier\()"}, {1, R"(MPI_Wait\(request=MPI_Ibcast\()"}},
     {"synchronize", "broadcast_nonblocking"},
     {},
     R"(rule: every rank is blocked and their calls cannot match: rank 1 is in MPI_Wait on MPI_Ibcast with root 0 )"
     R"(and rank 0 called MPI_Bcast as collective #1 of the same communicator)"},
    {"late_ibarrier",
     3,
     {{0, R"(MPI_Wait\(request=MPI_Ibarrier\()"}, {1, R"(MPI_Wait\(request=MPI_Ibarrier\()"},
      {2, R"(MPI_Recv\(.*source=0\b)"}},
     {"ibarrier_then_wait", "wait_for_rank_0"},
     {0, 2},
     R"(rule: each rank of the cycle waits in a call that cannot return before the next rank acts)"},
    {"sendrecv_tags",
     2,
     {{0, R"(MPI_Sendrecv\(.*sendtag=1\b)"}, {1, R"(MPI_Sendrecv\(.*recvtag=3\b)"}},
     {"exchange", "answer"},
     {0, 1},
     R"(rule: each rank of the cycle waits in a call that cannot return before the next rank acts)"},
    {"partition_wait",
     2,
     {{0, R"(MPI_Wait\(request=MPI_Psend_init\()"}, {1, R"(MPI_Wait\(request=MPI_Precv_init\()"}},
     {"send_partitions", "receive_partitions"},
     {0},
     R"(rank 0: MPI_Wait waits for rank 0 .*: its partitioned send has 1 partition not readied \(MPI_Pready\), )"
     R"(which only rank 0 itself can ready)"},
    {"partition_waitall",
     2,
     {{0, R"(MPI_Waitall\(count=2, requests=\[MPI_Psend_init\()"}, {1, R"(MPI_Wait\(request=MPI_Precv_init\()"}},
     {"send_partitions_and_receive", "receive_partitions_after_send"},
     {0},
     R"(rank 0: MPI_Waitall waits for rank 0 \(1 of its 2 requests still incomplete\): its partitioned send has 1 )"
     R"(partition not readied)"},
    {"partition_recv_first",
     2,
     {{0, R"(MPI_Recv\(.*source=1, tag=8)"}, {1, R"(MPI_Wait\(request=MPI_Precv_init\()"}},
     {"receive_before_last_partition", "receive_partitions_first"},
     {0, 1},
     R"(rule: each rank of the cycle waits in a call that cannot return before the next rank acts)"},
};

}  // namespace

TEST_CASE("hangs_proven: correct twins of the hangs below end without a report", "[trust][clean]") {
  check_shaped_twin(TEST_PROGRAM(hangs_proven), GENERATE(from_range(std::begin(kProvenHangs), std::end(kProvenHangs))));
}

TEST_CASE("hangs_proven: a blocking collective against a nonblocking one, waited on or left, a nonblocking barrier "
          "a member never starts, a Sendrecv half nothing matches, a partitioned send not all readied",
          "[trust][deadlock]") {
  check_shaped_hang(TEST_PROGRAM(hangs_proven),
                    GENERATE(from_range(std::begin(kProvenHangs), std::end(kProvenHangs))));
}

// ---- The proof's assumptions attacked ----
// posted_operation: a wait on a peer is not definite while the peer has a
// started, incomplete operation that can end it, whatever its current call.
// The message is large and strided, so that it is still under way when a
// proven verdict could be taken (DEADLOCK-TIMEOUT auto: 0.4 s after the
// ranks block).

namespace {

const std::string kLargeMebibytes = "64";

struct PostedShape {
  std::string variant;
  int ranks;
  std::map<int, std::string> calls;  // in the hang twin
  std::vector<std::string> blocking_functions;
};

const PostedShape kPostedShapes[] = {
    {"isend", 2, {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Barrier\()"}}, {"receive_large", "sender"}},
    {"persistent", 2, {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Barrier\()"}}, {"receive_large", "sender"}},
    {"isendrecv", 2, {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Barrier\()"}}, {"receive_large", "sender"}},
    {"partitioned", 2, {{0, R"(MPI_Wait\(request=MPI_Precv_init\()"}, {1, R"(MPI_Barrier\()"}}, {"sender", "receiver"}},
    {"irecv", 2, {{0, R"(MPI_Send\(.*dest=1\b)"}, {1, R"(MPI_Barrier\()"}}, {"sender", "receiver"}},
    {"any_source",
     3,
     {{0, R"(MPI_Recv\(.*source=MPI_ANY_SOURCE)"}, {1, R"(MPI_Barrier\()"}, {2, R"(MPI_Recv\(.*source=0\b)"}},
     {"sender", "receiver", "third"}},
    {"sendrecv",
     3,
     {{0, R"(MPI_Sendrecv\(.*dest=1\b)"}, {1, R"(MPI_Barrier\()"}, {2, R"(MPI_Recv\(.*source=0\b)"}},
     {"sender", "receiver", "third"}},
    // No request is left of a buffered send: only the counts of messages
    // sent and matched say that it is in flight (and, in the hang twin,
    // that its tag is not the one the receive waits for).
    {"bsend", 2, {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Barrier\()"}}, {"receive_large", "sender"}},
    {"ibsend", 2, {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Barrier\()"}}, {"receive_large", "sender"}},
};

bool mpi4_shape(const std::string& variant) { return variant == "isendrecv" || variant == "partitioned"; }

}  // namespace

TEST_CASE("posted_operation: a large message under way behind a posted operation, its rank in another call",
          "[trust][clean][.slow]") {
  const PostedShape shape = GENERATE(from_range(std::begin(kPostedShapes), std::end(kPostedShapes)));
  INFO("variant: " << shape.variant);
  if (mpi4_shape(shape.variant) && !mpi_has("MPI_Isendrecv and MPI_Psend_init")) return;
  const Program program = TEST_PROGRAM(posted_operation);
  const std::vector<std::string> args{kLargeMebibytes, shape.variant, "match"};
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(shape.ranks, program, args));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  // The isendrecv variant keeps its type (posted_operation.c says why).
  const std::vector<std::string> options =
      shape.variant == "isendrecv" ? std::vector<std::string>{"--check", "LOCAL:DATATYPE:NOT_FREED OFF"}
                                   : kDeadlockOptions;
  const JobResult checked = run_checked(workspace, shape.ranks, program, options, args);
  check_clean_run(checked, workspace);
  INFO(describe(checked));
  CHECK(checked.out == plain.out);
}

TEST_CASE("posted_operation: 1 GiB in rendezvous behind a posted MPI_Isend and an MPI_Bsend", "[trust][clean]") {
  const std::string variant = GENERATE(as<std::string>{}, "isend", "bsend");
  INFO("variant: " << variant);
  const Program program = TEST_PROGRAM(posted_operation);
  const std::vector<std::string> args{"1024", variant, "match", "contiguous"};
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(2, program, args));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions, args);
  check_clean_run(checked, workspace);
  INFO(describe(checked));
  CHECK(checked.out == plain.out);
}

TEST_CASE("posted_operation: the same shapes, the posted operation with another tag, deadlock", "[trust][deadlock]") {
  const PostedShape shape = GENERATE(from_range(std::begin(kPostedShapes), std::end(kPostedShapes)));
  INFO("variant: " << shape.variant);
  if (mpi4_shape(shape.variant) && !mpi_has("MPI_Isendrecv and MPI_Psend_init")) return;
  const Program program = TEST_PROGRAM(posted_operation);
  Workspace workspace;
  const JobResult result =
      run_checked(workspace, shape.ranks, program, kDeadlockOptions, {kLargeMebibytes, shape.variant, "mismatch"});
  check_deadlock(result, program,
                 {.calls = shape.calls, .blocking_functions = shape.blocking_functions, .shape = shape.variant});
}

TEST_CASE("nbx_termination: a sparse exchange ended by MPI_Ibarrier while rank 0 computes", "[trust][clean]") {
  // 32 ranks on the 2 cores of the test machines: oversubscribed 16 times,
  // the others poll and wait in the nonblocking barrier while rank 0 computes.
  const int ranks = GENERATE(4, 32);
  INFO(ranks << " ranks");
  check_correct(ranks, TEST_PROGRAM(nbx_termination));
}

// silent_thread: a thread that has never called MPI when the checker looks
// may still send; asleep in a wait only its own process can end, it holds
// its rank no more than a thread blocked in MPI.

TEST_CASE("silent_thread: a thread that never called MPI computes or sleeps, then sends what the peer waits for",
          "[trust][clean][threads][.slow]") {
  const std::string maker = GENERATE(as<std::string>{}, "before_init", "after_init", "library", "openmp");
  const std::string first = GENERATE(as<std::string>{}, "compute", "sleep");
  INFO("made " << maker << ", it does first: " << first);
  check_correct(2, TEST_PROGRAM(silent_thread), {maker, first});
}

TEST_CASE("silent_thread: the same thread asleep for good on a condition variable: a deadlock",
          "[trust][deadlock][threads]") {
  const std::string maker = GENERATE(as<std::string>{}, "before_init", "after_init", "library", "openmp");
  INFO("made " << maker);
  const Program program = TEST_PROGRAM(silent_thread);
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions, {"0", maker, "never"});
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"wait_for_rank_1", "rank_1"}});
  check_cycle(result, {0, 1});
  CHECK(any_line_matches(result.report.value_or(""), R"(rule: .*on ranks? 0(,1)? the threads outside MPI sleep in )"
                                                     R"(waits that only their own process can end .*those that )"
                                                     R"(never called MPI among them)"));
}

// memory_sharer: a process that shares the rank's memory can wake its
// private futexes; one that shares a page can wake a futex there.

TEST_CASE("memory_sharer: another process wakes a thread of the rank, which then sends what the peer waits for",
          "[trust][clean][threads]") {
  const std::string waker = GENERATE(as<std::string>{}, "clone_vm", "vfork", "shared_mapping");
  INFO("woken by: " << waker);
  check_correct(2, TEST_PROGRAM(memory_sharer), {waker});
}

TEST_CASE("memory_sharer: nobody wakes the thread: a deadlock", "[trust][deadlock][threads]") {
  const Program program = TEST_PROGRAM(memory_sharer);
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions, {"0", "never"});
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"main", "main"}});
  check_cycle(result, {0, 1});
}
