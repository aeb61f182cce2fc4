// GLOBAL:MSG:DATATYPE:MISMATCH, GLOBAL:MSG:PENDING, LOCAL:REQUEST:NOT_FREED
// and LOCAL:REQUEST:PREMATURE_FREE: each error is reported on the rank that
// sees it, naming the calls, the ranks and both sides' values, and its
// correct twin of the same shape runs clean with every check on.
#include <algorithm>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kAllChecks = {"--check-all"};

// A clean run with every check on: no LOCAL warning either.
void check_no_finding(const JobResult& result) {
  INFO(describe(result));
  CHECK(result.err.find("] WARNING:") == std::string::npos);
  CHECK(result.err.find("] ERROR:") == std::string::npos);
  CHECK(result.err.find("GLOBAL:MSG") == std::string::npos);
  CHECK(result.err.find("LOCAL:REQUEST") == std::string::npos);
}

}  // namespace

TEST_CASE("msg_datatype: 4 x MPI_INT received as 2 x MPI_DOUBLE is a GLOBAL:MSG:DATATYPE:MISMATCH",
          "[messages][datatype]") {
  // shape, the receive's call as reported
  const auto [shape, receive] = GENERATE(table<std::string, std::string>({
      {"recv", "MPI_Recv"},
      {"anysource", "MPI_Recv"},
      {"irecv", "MPI_Irecv"},
      {"persistent", "MPI_Recv_init"},
      {"mprobe", "MPI_Mrecv"},
      {"sendrecv", "MPI_Sendrecv"},
  }));
  INFO("shape " << shape);
  Workspace workspace;
  const Program program = TEST_PROGRAM(msg_datatype);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {shape, "bad"});
  // An error: CHECK-MAX-ERRORS 1 stops the job.
  CHECK(result.failed());
  const std::string sender = shape == "sendrecv" ? R"([01])" : "0";
  const std::string receiver = shape == "sendrecv" ? R"([01])" : "1";
  check_reported(result,
                 {R"(^\[)" + receiver + R"(\] ERROR: GLOBAL:MSG:DATATYPE:MISMATCH: error$)",
                  R"(The type signature of a message from rank )" + sender + " to rank " + receiver +
                      R"( \(tag 5, MPI_COMM_WORLD\) differs between send and receive:)",
                  R"(sent as 4 x MPI_INT \(16 B\), received as 2 x MPI_DOUBLE \(16 B\)\.)",
                  R"(rank )" + receiver + R"( (received|posted) it:)",
                  receive + R"(\(count=2, datatype=MPI_DOUBLE, source=)" + sender +
                      R"(, tag=5, comm=MPI_COMM_WORLD\))",
                  R"(rank )" + sender + R"( sent it:)",
                  R"(MPI_(Send|Send_init|Sendrecv)\(count=4, datatype=MPI_INT, dest=)" + receiver +
                      R"(, tag=5, comm=MPI_COMM_WORLD\))"});
  if (shape == "recv")  // where the sender sent it, symbolized by the receiver
    check_reported(result, {frame_pattern("send_values", program.source, marked_line(program, "sends"))});
  if (shape == "irecv")  // where the receive was posted, and where it completed
    check_reported(result, {R"(rank 1 completed the receive:)",
                            frame_pattern("receive_values", program.source, marked_line(program, "posts")),
                            frame_pattern("receive_values", program.source, marked_line(program, "completes"))});
}

TEST_CASE("msg_datatype: receives of the same type signature are not reported", "[messages][datatype][clean]") {
  // 4 x MPI_INT, also as contiguous(4, MPI_INT), as a vector of 2 blocks of 2
  // MPI_INT (another layout), into a larger buffer, from MPI_ANY_SOURCE with
  // MPI_ANY_TAG, Irecv + Waitall(MPI_STATUSES_IGNORE), persistent, Mrecv and
  // Sendrecv; 2 x MPI_2INT received as 4 x MPI_INT; and an Irecv whose type
  // is freed before its wait (reading it then crashed MPICH).
  const std::string shape =
      GENERATE("recv", "contiguous", "vector", "larger", "anysource", "irecv", "reversed", "persistent", "mprobe",
               "sendrecv", "pairs", "freed");
  INFO("shape " << shape);
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(msg_datatype), kAllChecks,
                                                     {shape, "good"});
  CHECK(plain.out == "done\n");
  check_no_finding(run_checked(workspace, 3, TEST_PROGRAM(msg_datatype), {"--check", "GLOBAL:MSG:** ON"},
                               {shape, "good"}));
}

TEST_CASE("msg_stream: a mismatch is found while the program runs, from a full batch of records or at the tick",
          "[messages][datatype]") {
  // many: message 150 of 200, whose record comes in the third batch of 64;
  // few: message 2 of 3, whose record only the monitor's tick sends.
  const std::string messages = GENERATE("many", "few");
  INFO("messages " << messages);
  Workspace workspace;
  const Program program = TEST_PROGRAM(msg_stream);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {messages, "bad"});
  CHECK(result.failed());
  check_reported(result, {R"(^\[1\] ERROR: GLOBAL:MSG:DATATYPE:MISMATCH: error$)",
                          R"(sent as 4 x MPI_INT \(16 B\), received as 2 x MPI_DOUBLE \(16 B\)\.)",
                          R"(rank 1 received it:)",
                          frame_pattern("receive_one", program.source, marked_line(program, "receives"))});
  // Found during the 2 s of ping-pong, which CHECK-MAX-ERRORS 1 ended.
  CHECK(result.out.find("ping-pong over") == std::string::npos);
}

TEST_CASE("msg_stream: a long stream of matching messages is not reported", "[messages][datatype][clean]") {
  const std::string messages = GENERATE("many", "few");
  INFO("messages " << messages);
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(msg_stream), kAllChecks, {messages, "good"});
  CHECK(plain.out == "ping-pong over\n");
}

TEST_CASE("msg_datatype: 2 x MPI_2INT received as 2 x MPI_DOUBLE is a GLOBAL:MSG:DATATYPE:MISMATCH",
          "[messages][datatype]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(msg_datatype), kAllChecks, {"pairs", "bad"});
  CHECK(result.failed());
  check_reported(result, {R"(^\[1\] ERROR: GLOBAL:MSG:DATATYPE:MISMATCH: error$)",
                          R"(sent as 2 x MPI_2INT \(16 B\), received as 2 x MPI_DOUBLE \(16 B\)\.)",
                          R"(MPI_Send\(count=2, datatype=MPI_2INT, dest=1, tag=5, comm=MPI_COMM_WORLD\))"});
}

// Every communicator constructor that mpisentry wraps, but those that join
// separate jobs (MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_spawn): the
// constructor in msg_comms, the communicator's name in reports.
const std::vector<std::pair<std::string, std::string>> kConstructors = {
    {"dup", "MPI_Comm_dup #1 of MPI_COMM_WORLD"},
    {"dup_with_info", "MPI_Comm_dup_with_info #1 of MPI_COMM_WORLD"},
    {"idup", "MPI_Comm_idup #1 of MPI_COMM_WORLD"},
    {"idup_with_info", "MPI_Comm_idup_with_info #1 of MPI_COMM_WORLD"},
    {"idup_twice", "MPI_Comm_idup #2 of MPI_COMM_WORLD"},
    {"split", "MPI_Comm_split #1 of MPI_COMM_WORLD"},
    {"split_type", "MPI_Comm_split_type #1 of MPI_COMM_WORLD"},
    {"create", "MPI_Comm_create #1 of MPI_COMM_WORLD"},
    {"create_group", "MPI_Comm_create_group"},
    {"create_from_group", "MPI_Comm_create_from_group \"msg_comms\""},
    {"cart_create", "MPI_Cart_create #1 of MPI_COMM_WORLD"},
    {"cart_sub", "MPI_Cart_sub"},
    {"graph_create", "MPI_Graph_create #1 of MPI_COMM_WORLD"},
    {"dist_graph_create", "MPI_Dist_graph_create #1 of MPI_COMM_WORLD"},
    {"dist_graph_create_adjacent", "MPI_Dist_graph_create_adjacent #1 of MPI_COMM_WORLD"},
    {"intercomm_create", "MPI_Intercomm_create"},
    {"intercomm_create_from_groups", "MPI_Intercomm_create_from_groups \"msg_comms\""},
    {"intercomm_merge", "MPI_Intercomm_merge"},
};

// MPI 4.0's constructors, which an MPI of 3.1 (Open MPI 4.1) lacks.
const std::vector<std::string> kMpi4Constructors = {"idup_with_info", "create_from_group", "intercomm_create_from_groups"};

// The constructors this MPI has; a warning names those left out.
std::vector<std::pair<std::string, std::string>> constructors() {
  if (mpi_has("MPI_Comm_idup_with_info, MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups"))
    return kConstructors;
  std::vector<std::pair<std::string, std::string>> present;
  for (const auto& constructor : kConstructors)
    if (std::find(kMpi4Constructors.begin(), kMpi4Constructors.end(), constructor.first) == kMpi4Constructors.end())
      present.push_back(constructor);
  return present;
}

TEST_CASE("msg_comms: a datatype mismatch is reported on every kind of communicator", "[messages][datatype]") {
  const auto [constructor, name] = GENERATE(from_range(constructors()));
  INFO("constructor " << constructor);
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(msg_comms), kAllChecks, {constructor, "bad"});
  CHECK(result.failed());
  check_reported(result, {R"(^\[1\] ERROR: GLOBAL:MSG:DATATYPE:MISMATCH: error$)",
                          R"(The type signature of a message from rank 0 to rank 1 \(tag 5, )" + regex_escape(name) +
                              R"(.*\) differs between send and receive:)",
                          R"(sent as 4 x MPI_INT \(16 B\), received as 2 x MPI_DOUBLE \(16 B\)\.)"});
}

TEST_CASE("msg_comms: a correct exchange on every kind of communicator is not reported",
          "[messages][datatype][clean]") {
  const std::string constructor = GENERATE(from_range(constructors())).first;
  INFO("constructor " << constructor);
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(msg_comms), kAllChecks, {constructor, "good"});
  CHECK(plain.out == "done\n");
}

TEST_CASE("msg_pending: a message never received is a GLOBAL:MSG:PENDING at MPI_Finalize and MPI_Comm_free",
          "[messages][pending]") {
  // `inter`: groups {0} and {1, 2} of other sizes, where world rank 1 is rank 0.
  const auto [comm, ranks, when, name, dest] = GENERATE(table<std::string, int, std::string, std::string, std::string>({
      {"world", 2, "MPI_Finalize", "MPI_COMM_WORLD", "1"},
      {"dup", 2, "MPI_Comm_free", "MPI_Comm_dup #1 of MPI_COMM_WORLD", "1"},
      {"inter", 3, "MPI_Comm_free", "MPI_Intercomm_create", "0"},
  }));
  INFO("communicator " << comm);
  Workspace workspace;
  const Program program = TEST_PROGRAM(msg_pending);
  const JobResult result = run_checked(workspace, ranks, program, kAllChecks, {comm, "one"});
  // A warning: the program goes on.
  // (UCX may warn on stdout of the message left unmatched.)
  CHECK(result.succeeded());
  CHECK(result.out.rfind("done\n", 0) == 0);
  check_reported(result,
                 {R"(^\[1\] WARNING: GLOBAL:MSG:PENDING: warning$)",
                  R"(1 message was sent to rank 1 on .* and never received before )" + when + ":",
                  R"(message 1: from rank 0, tag 8, )" + regex_escape(name) +
                      R"(, 16 B \(4 x MPI_INT\), sent by MPI_Send$)",
                  R"(rank 1 calls )" + when + ":",
                  R"(rank 0 sent message 1:)",
                  R"(MPI_Send\(count=4, datatype=MPI_INT, dest=)" + dest + ", tag=8, comm=" + regex_escape(name) + R"(\))",
                  frame_pattern("send_both", program.source, marked_line(program, "unreceived")),
                  R"(GLOBAL:MSG:PENDING: found 1 time \(0 errors \+ 1 warning\))"});
  // The message received (tag 7) is not listed.
  CHECK(result.err.find("tag 7") == std::string::npos);
}

TEST_CASE("msg_pending: CHECK-MAX-PENDING limits the messages listed", "[messages][pending]") {
  Workspace workspace;
  const JobResult result =
      run_checked(workspace, 2, TEST_PROGRAM(msg_pending), {"--check-all", "--check-max-pending", "1"}, {"world", "none"});
  CHECK(result.succeeded());
  check_reported(result, {R"(2 messages were sent to rank 1 on its communicators and never received before MPI_Finalize:)",
                          R"(message 1: from rank 0, tag 7, MPI_COMM_WORLD, 16 B \(4 x MPI_INT\), sent by MPI_Send$)",
                          R"(\.\.\. and 1 more, not listed \(CHECK-MAX-PENDING 1\))"});
  CHECK(result.err.find("message 2:") == std::string::npos);
}

TEST_CASE("msg_pending: every message received, nothing is pending", "[messages][pending][clean]") {
  const std::string comm = GENERATE("world", "dup", "inter");
  INFO("communicator " << comm);
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, comm == "inter" ? 3 : 2, TEST_PROGRAM(msg_pending),
                                                     kAllChecks, {comm, "all"});
  CHECK(plain.out == "done\n");
}

TEST_CASE("msg_threads: 4 threads exchanging at MPI_THREAD_MULTIPLE, their handles reused across threads, are clean",
          "[messages][requests][threads][clean]") {
  // MPI frees a completed request's handle inside Waitall, Wait, Waitany or
  // Testsome, and another thread's Irecv or Isend may get it before the
  // completing thread's wrapper has looked it up: the checks then paired the
  // wrong request and saw hundreds of messages as pending (5 runs of 6). With
  // 4000 windows a thread, a receive buffer taken outside the request table's
  // lock was reported as still pending (LOCAL:MEMORY:OVERLAP) in 3 runs of 3;
  // with 400, in none.
  const std::string peer = GENERATE("self", "peer");
  INFO("to " << peer);
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(msg_threads), kAllChecks, {peer});
  CHECK(plain.out == "windows done\n");
}

TEST_CASE("request_leaks: an Irecv never completed and a persistent request never freed are LOCAL:REQUEST:NOT_FREED",
          "[requests][not_freed]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(request_leaks);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"leak"});
  CHECK(result.succeeded());
  check_reported(result,
                 {R"(^\[1\] WARNING: LOCAL:REQUEST:NOT_FREED: warning$)",
                  R"(A request of MPI_Irecv was never completed nor freed\.)",
                  R"(MPI_Irecv\(buf=0x[0-9a-f]+, count=4, datatype=MPI_INT, source=0, tag=3, comm=MPI_COMM_WORLD\))",
                  frame_pattern("start_receive", program.source, marked_line(program, "irecv")),
                  R"(A persistent request of MPI_Recv_init is inactive but was never freed\.)",
                  R"(MPI_Recv_init\(buf=0x[0-9a-f]+, count=4, datatype=MPI_INT, source=0, tag=4, comm=MPI_COMM_WORLD\))",
                  frame_pattern("make_persistent", program.source, marked_line(program, "recv_init")),
                  R"(LOCAL:REQUEST:NOT_FREED: found 2 times \(0 errors \+ 2 warnings\))"});
}

TEST_CASE("request_leaks: a request MPI_Request_get_status found complete and never freed is LOCAL:REQUEST:NOT_FREED",
          "[requests][not_freed]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(request_leaks);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"get_status_leak"});
  CHECK(result.succeeded());
  check_reported(result,
                 {R"(^\[1\] WARNING: LOCAL:REQUEST:NOT_FREED: warning$)",
                  R"(A request of MPI_Irecv completed \(MPI_Request_get_status said so\) but was never freed\.)",
                  frame_pattern("start_receive", program.source, marked_line(program, "irecv")),
                  R"(LOCAL:REQUEST:NOT_FREED: found 1 time \(0 errors \+ 1 warning\))"});
  // Its receive completed: the message is not pending.
  CHECK(result.err.find("GLOBAL:MSG:PENDING") == std::string::npos);
}

TEST_CASE("request_leaks: every request completed and freed", "[requests][not_freed][clean]") {
  // proc_null: operations with MPI_PROC_NULL peers, completed by MPI_Wait and MPI_Waitany.
  // get_status_done: MPI_Request_free once MPI_Request_get_status said the receive completed.
  const std::string mode = GENERATE("clean", "proc_null", "get_status_done");
  INFO("mode " << mode);
  Workspace workspace;
  check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(request_leaks), kAllChecks, {mode});
  check_no_finding(run_checked(workspace, 2, TEST_PROGRAM(request_leaks), kAllChecks, {mode}));
}

TEST_CASE("request_leaks: MPI_Request_free of an active Irecv is LOCAL:REQUEST:PREMATURE_FREE",
          "[requests][premature_free]") {
  // get_status_active: MPI_Request_get_status said it was not complete.
  const std::string mode = GENERATE("free_active", "get_status_active");
  INFO("mode " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(request_leaks);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {mode});
  CHECK(result.succeeded());
  check_reported(result,
                 {R"(^\[1\] WARNING: LOCAL:REQUEST:PREMATURE_FREE: warning$)",
                  R"(MPI_Request_free frees the request of MPI_Irecv while its operation is still active:)",
                  R"(rank 1 frees it:)",
                  frame_pattern("main", program.source, marked_line(program, "frees")),
                  R"(rank 1 started it:)",
                  R"(MPI_Irecv\(buf=0x[0-9a-f]+, count=4, datatype=MPI_INT, source=0, tag=3, comm=MPI_COMM_WORLD\))",
                  frame_pattern("start_receive", program.source, marked_line(program, "irecv"))});
  // The message the freed receive took is not pending, and the persistent
  // request freed inactive is not reported.
  CHECK(result.err.find("GLOBAL:MSG:PENDING") == std::string::npos);
  CHECK(count_occurrences(result.err, "LOCAL:REQUEST:PREMATURE_FREE: warning") == 1);
}

TEST_CASE("request_leaks: MPI_Request_free of an inactive persistent request is not reported",
          "[requests][premature_free][clean]") {
  Workspace workspace;
  check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(request_leaks), kAllChecks, {"free_inactive"});
  check_no_finding(run_checked(workspace, 2, TEST_PROGRAM(request_leaks), kAllChecks, {"free_inactive"}));
}

namespace {
const std::vector<std::string> kRaceCheck = {"--check", "GLOBAL:MSG:RACE ON"};
}

TEST_CASE("msg_race: receives from MPI_ANY_SOURCE that could have taken another rank's message are a GLOBAL:MSG:RACE",
          "[messages][race]") {
  // shape, ranks, the place's line: receives and senders taken, races and senders that could have been
  const auto [shape, ranks, place] = GENERATE(table<std::string, int, std::string>({
      // The first two calls each pass over receives whose messages were there.
      {"waitany", 4,
       R"(: 2 calls of MPI_Waitany, MPI_Waitsome, MPI_Testany or MPI_Testsome returned requests while receives among )"
       R"(the others were active; 2 of those receives could have completed first, with messages of ranks [123], [123]$)"},
      // Each receive but the last could have taken each later one's message.
      {"raced", 4, R"(: 3 receives from MPI_ANY_SOURCE took messages from ranks 1, 2, 3; 2 raced, with ranks [123], [123]$)"},
      {"waitall", 4, R"(: 3 receives from MPI_ANY_SOURCE took messages from ranks 1, 2, 3; 2 raced, with ranks [123], [123]$)"},
      {"probe", 4, R"(: 3 probes from MPI_ANY_SOURCE found messages from ranks 1, 2, 3; 2 raced, with ranks [123], [123]$)"},
      {"iprobe", 4, R"(: 3 probes from MPI_ANY_SOURCE found messages from ranks 1, 2, 3; 2 raced, with ranks [123], [123]$)"},
      {"mprobe", 4, R"(: 3 probes from MPI_ANY_SOURCE found messages from ranks 1, 2, 3; 2 raced, with ranks [123], [123]$)"},
      // Rank 2's message is sent after rank 1's, not after rank 0's receive.
      {"relayed", 3, R"(: 1 receive from MPI_ANY_SOURCE took messages from rank [12]; 1 raced, with rank [12]$)"},
      // The message not taken is never received.
      {"unreceived", 3, R"(: 1 receive from MPI_ANY_SOURCE took messages from rank [12]; 1 raced, with rank [12]$)"},
  }));
  INFO("shape " << shape);
  Workspace workspace;
  const Program program = TEST_PROGRAM(msg_race);
  const JobResult result = run_checked(workspace, ranks, program, kRaceCheck, {shape});
  // Information: the program goes on, and its exit status is its own.
  CHECK(result.succeeded());
  if (shape == "unreceived")
    CHECK(result.out.rfind("received 1, ", 0) == 0);
  else
    CHECK(result.out == (ranks == 4 ? "received 3, senders' sum 6\n" : "received 2, senders' sum 3\n"));
  check_reported(result, {R"(^\[0\] INFO: GLOBAL:MSG:RACE: information$)",
                          R"(Calls of rank 0 raced at 1 place: with other timing, each could have got another rank's )"
                          R"(message, or returned another request\.$)",
                          R"(msg_race\.c:)" + std::to_string(marked_line(program, shape == "relayed" ? "first" : shape)) +
                              R"( \(main\))" + place,
                          R"(rule: a receive or probe from MPI_ANY_SOURCE raced with another rank when a message)",
                          R"(rank 0 called there:)"});
  // The last receive or probe had no other message left to take.
  if (shape != "waitany" && shape != "unreceived")
    check_reported(result, {R"(1 other receive or probe from MPI_ANY_SOURCE was not found to race\.)"});
  // Information is not a problem: the summary counts none.
  CHECK(result.err.find("problem") == std::string::npos);
}

TEST_CASE("msg_race: a message the receive caused, and receives after an active one, are not a GLOBAL:MSG:RACE",
          "[messages][race][clean]") {
  // causal, waitany_causal: rank 2 sends only after rank 0's first receive,
  // or first MPI_Waitany, returned. ssend_relayed: after rank 1's MPI_Ssend
  // returned, which it does once rank 0's receive matched it, not once that
  // receive returned. earlier: an
  // MPI_Irecv started before the raced receives is active, and could take
  // the other message first.
  const auto [shape, ranks] = GENERATE(table<std::string, int>({
      {"causal", 3}, {"waitany_causal", 3}, {"ssend_relayed", 4}, {"earlier", 3}}));
  INFO("shape " << shape);
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, ranks, TEST_PROGRAM(msg_race), kRaceCheck, {shape});
  CHECK(plain.out == "received 2, senders' sum 3\n");
}

TEST_CASE("msg_race: --check-all leaves GLOBAL:MSG:RACE off", "[messages][race][clean]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 4, TEST_PROGRAM(msg_race), kAllChecks, {"raced"});
  INFO(describe(result));
  CHECK(result.succeeded());
  CHECK(result.err.find("GLOBAL:MSG:RACE") == std::string::npos);
}
