// `mpisentry analyze` (offline/analyze.hpp) on communication logs written
// here: the deadlocks that another matching of the receives from
// MPI_ANY_SOURCE gives are found, with the choice that made them; programs
// that every matching leaves correct are clean; zero buffering is told
// apart; logs that do not belong together or that it cannot model are
// refused with the file, line and problem. And the log's text
// (recording/comm_log.hpp): written and read back, bad lines named.
#include "offline/analyze.hpp"
#include "recording/comm_log.hpp"
#include "recording/recording.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>

using namespace mpisentry::offline::analyze;
using namespace mpisentry::recording;

namespace {

// Rank R's log of `ranks` ranks: the header, then `lines` (each ending in
// its newline), then "end" when `finalized`.
CommLog log_of(int rank, int ranks, const std::string& lines, bool finalized = true) {
  return parse_log(log_header_text(rank, ranks, "./app", "/run", false) + lines + (finalized ? "end\n" : ""));
}

std::vector<CommLog> logs_of(const std::vector<std::string>& ranks, bool finalized = true) {
  std::vector<CommLog> logs;
  for (std::size_t rank = 0; rank < ranks.size(); ++rank)
    logs.push_back(log_of(static_cast<int>(rank), static_cast<int>(ranks.size()), ranks[rank], finalized));
  validate(logs);
  return logs;
}

// What `read` throws, or "(accepted)".
template <typename Read>
std::string thrown_by(Read&& read) {
  try {
    read();
  } catch (const std::invalid_argument& bad) {
    return bad.what();
  }
  return "(accepted)";
}
std::string problem_of(const std::vector<CommLog>& logs) {
  return thrown_by([&] { validate(logs); });
}
std::string parse_problem(const std::string& text) {
  return thrown_by([&] { parse_log(text); });
}

// The ranks that stopped in an operation, and at which (index).
std::vector<std::pair<int, std::size_t>> stuck(const Outcome& outcome) {
  std::vector<std::pair<int, std::size_t>> ranks;
  for (const Stopped& stop : outcome.stopped)
    if (!stop.log_ends) ranks.emplace_back(stop.rank, stop.op);
  return ranks;
}

const std::string kSendToRoot = "send MPI_Send 1 0 1 1\n";

}  // namespace

TEST_CASE("analyze: a receive from MPI_ANY_SOURCE that takes the message a later receive needs deadlocks",
          "[analyze]") {
  // matchings hidden: rank 0 receives from any rank, then from rank 1.
  const auto logs = logs_of({"recv MPI_Recv 1 * 1 1\nrecv MPI_Recv 1 1 1 2\ncoll MPI_Barrier 1 3\n",
                             kSendToRoot + "coll MPI_Barrier 1 2\n", kSendToRoot + "coll MPI_Barrier 1 2\n"});
  for (const Buffering buffering : {Buffering::Standard, Buffering::Zero}) {
    const Outcome outcome = run(logs, buffering);
    CHECK(outcome.deadlock());
    REQUIRE(outcome.choices.size() == 1);
    CHECK(outcome.choices[0].rank == 0);
    CHECK(outcome.choices[0].op == 0);
    CHECK(outcome.choices[0].sender == 1);
    CHECK(outcome.choices[0].reason == Reason::Starves);
    REQUIRE(outcome.stopped.size() == 3);
    CHECK(outcome.stopped[0].op == 1);
    CHECK(outcome.stopped[0].why == "it waits for a message from rank 1 (tag 1): rank 1 sends no more of them to it");
  }
  CHECK(run(logs, Buffering::Standard).stopped[2].why == "it waits for rank 0 to enter collective #1 of communicator 1");
  CHECK(run(logs, Buffering::Zero).stopped[2].why ==
        "its message (tag 1) waits for rank 0 to receive it (zero buffering); rank 0 is stopped too");
  CHECK(op_text(logs[0], 0) == "MPI_Recv(source MPI_ANY_SOURCE, tag 1, comm 1) at an unknown place, rank-0.log line 5");
}

TEST_CASE("analyze: nonblocking receives, the one from MPI_ANY_SOURCE posted first, completed by one wait",
          "[analyze]") {
  // matchings waitall: the receive from rank 1 cannot take rank 1's message
  // while the earlier one from any rank is open: MPI gives it to that one.
  const auto logs = logs_of({"irecv 1 MPI_Irecv 1 * 1 1\nirecv 2 MPI_Irecv 1 1 1 1\nwait MPI_Waitall 2 1 2\n",
                             kSendToRoot, kSendToRoot});
  const Outcome outcome = run(logs, Buffering::Standard);
  CHECK(outcome.deadlock());
  REQUIRE(stuck(outcome) == std::vector<std::pair<int, std::size_t>>{{0, 2}});
  CHECK(outcome.stopped[0].why == "it waits for request 2 (MPI_Irecv, line 6): it waits for a message from rank 1 "
                                  "(tag 1): rank 1 sends no more of them to it");
}

TEST_CASE("analyze: every matching right is clean, also where a message is sent because of the receive",
          "[analyze]") {
  // matchings causal: rank 2's message is sent only after rank 0's receive
  // from any rank took rank 1's: the receive can never take it.
  const auto causal = logs_of({"recv MPI_Recv 1 * 1 1\nsend MPI_Send 1 2 2 1\nrecv MPI_Recv 1 2 1 1\n", kSendToRoot,
                               "recv MPI_Recv 1 0 2 1\n" + kSendToRoot});
  // matchings sum: one message from each, any order.
  const auto sum = logs_of({"recv MPI_Recv 1 * 1 1\nrecv MPI_Recv 1 * 1 1\n", kSendToRoot, kSendToRoot});
  for (const auto* logs : {&causal, &sum})
    for (const Buffering buffering : {Buffering::Standard, Buffering::Zero}) {
      const Outcome outcome = run(*logs, buffering);
      CHECK_FALSE(outcome.deadlock());
      CHECK(outcome.stopped.empty());
      CHECK(std::ranges::none_of(outcome.choices, [](const Choice& c) { return c.reason == Reason::Starves; }));
    }
  CHECK(run(sum, Buffering::Standard).choices.size() == 2);
}

TEST_CASE("analyze: a receive of any tag from one sender counts too", "[analyze]") {
  // MBI's MessageRace_Gather_Send_Irecv_nok: rank 1 receives from any rank
  // and any tag, then from rank 0 and any tag; ranks 0 and 2 each send one,
  // after the collective.
  const auto logs = logs_of({"coll MPI_Gather 1 1\nsend MPI_Send 1 1 0 2\n",
                             "irecv 1 MPI_Irecv 1 * * 1\ncoll MPI_Gather 1 2\nirecv 2 MPI_Irecv 1 0 * 3\n"
                             "wait MPI_Wait 4 1\nwait MPI_Wait 5 2\n",
                             "coll MPI_Gather 1 1\nsend MPI_Send 1 1 0 2\n"});
  const Outcome outcome = run(logs, Buffering::Standard);
  CHECK(outcome.deadlock());
  REQUIRE(outcome.deadlock_choices().size() == 1);
  CHECK(outcome.deadlock_choices()[0].sender == 0);
  CHECK(outcome.deadlock_choices()[0].reason == Reason::Starves);
}

TEST_CASE("analyze: a receive of any source and any tag that takes the last message of a tag a later one needs",
          "[analyze]") {
  // MBI's MessageRace_tag_ANY_TAG_1_Send_Recv_nok, and its mirror: which
  // rank sends tag 1 must not matter.
  for (const int tag_one_sender : {1, 2}) {
    const auto sender = [&](int rank) { return fmt::format("send MPI_Send 1 0 {} 1\n", rank == tag_one_sender ? 1 : 2); };
    const auto logs = logs_of({"recv MPI_Recv 1 * * 1\nrecv MPI_Recv 1 * 1 1\n", sender(1), sender(2)});
    const Outcome outcome = run(logs, Buffering::Standard);
    CHECK(outcome.deadlock());
    REQUIRE(outcome.deadlock_choices().size() == 1);
    CHECK(outcome.deadlock_choices()[0].sender == tag_one_sender);
    CHECK(outcome.deadlock_choices()[0].reason == Reason::StarvesTag);
    CHECK(stuck(outcome) == std::vector<std::pair<int, std::size_t>>{{0, 1}});
  }
}

TEST_CASE("analyze: two receives from MPI_ANY_SOURCE that together take what a third needs", "[analyze]") {
  // Rank 1 sends two messages, rank 2 one; rank 0 takes two from any rank,
  // then one from rank 1: only when both first receives take rank 1's.
  const auto logs = logs_of({"recv MPI_Recv 1 * 1 1\nrecv MPI_Recv 1 * 1 1\nrecv MPI_Recv 1 1 1 1\n",
                             kSendToRoot + kSendToRoot, kSendToRoot});
  const Outcome outcome = run(logs, Buffering::Standard);
  CHECK(outcome.deadlock());
  REQUIRE(outcome.choices.size() == 2);
  CHECK(outcome.choices[0].sender == 1);
  CHECK(outcome.choices[0].reason == Reason::Needed);  // rank 1's first: the receive from rank 1 waits for it
  CHECK(outcome.choices[1].sender == 1);
  CHECK(outcome.choices[1].reason == Reason::Starves);
  CHECK(stuck(outcome) == std::vector<std::pair<int, std::size_t>>{{0, 2}});
}

TEST_CASE("analyze: a program that relies on buffering deadlocks with zero buffering only", "[analyze]") {
  // Both send first, then receive.
  const auto logs = logs_of({"send MPI_Send 1 1 0 1\nrecv MPI_Recv 1 1 0 1\n",
                             "send MPI_Send 1 0 0 1\nrecv MPI_Recv 1 0 0 1\n"});
  CHECK_FALSE(run(logs, Buffering::Standard).deadlock());
  const Outcome zero = run(logs, Buffering::Zero);
  CHECK(zero.deadlock());
  CHECK(zero.deadlock_choices().empty());
  CHECK(stuck(zero) == std::vector<std::pair<int, std::size_t>>{{0, 0}, {1, 0}});
  // MPI_Ssend waits for its receive however MPI buffers; MPI_Bsend never does.
  const auto synchronous = logs_of({"send MPI_Ssend 1 1 0 1\nrecv MPI_Recv 1 1 0 1\n",
                                    "send MPI_Ssend 1 0 0 1\nrecv MPI_Recv 1 0 0 1\n"});
  CHECK(run(synchronous, Buffering::Standard).deadlock());
  const auto buffered = logs_of({"send MPI_Bsend 1 1 0 1\nrecv MPI_Recv 1 1 0 1\n",
                                 "send MPI_Bsend 1 0 0 1\nrecv MPI_Recv 1 0 0 1\n"});
  CHECK_FALSE(run(buffered, Buffering::Zero).deadlock());
  // Nonblocking sends wait in MPI_Wait instead.
  const auto nonblocking = logs_of({"isend 1 MPI_Isend 1 1 0 1\nwait MPI_Wait 1 1\nrecv MPI_Recv 1 1 0 1\n",
                                    "isend 1 MPI_Isend 1 0 0 1\nwait MPI_Wait 1 1\nrecv MPI_Recv 1 0 0 1\n"});
  CHECK_FALSE(run(nonblocking, Buffering::Standard).deadlock());
  CHECK(stuck(run(nonblocking, Buffering::Zero)) == std::vector<std::pair<int, std::size_t>>{{0, 1}, {1, 1}});
  // A receive posted first makes the exchange safe.
  const auto safe = logs_of({"irecv 1 MPI_Irecv 1 1 0 1\nsend MPI_Send 1 1 0 1\nwait MPI_Wait 1 1\n",
                             "irecv 1 MPI_Irecv 1 0 0 1\nsend MPI_Send 1 0 0 1\nwait MPI_Wait 1 1\n"});
  CHECK_FALSE(run(safe, Buffering::Zero).deadlock());
}

TEST_CASE("analyze: collectives wait for every member of their communicator, ranks named by it", "[analyze]") {
  // Rank 0 waits for rank 1's message before the collective; rank 1 sends it after.
  const auto logs = logs_of({"recv MPI_Recv 1 1 0 1\ncoll MPI_Bcast 1 1\n", "coll MPI_Bcast 1 1\nsend MPI_Send 1 0 0 1\n"});
  CHECK(stuck(run(logs, Buffering::Standard)) == std::vector<std::pair<int, std::size_t>>{{0, 0}, {1, 0}});
  // Communicator 7 is MPI_COMM_WORLD ranks 2 and 0: its rank 1 is world rank 0.
  const auto split = logs_of({"comm 7 2 0\nrecv MPI_Recv 7 0 5 1\ncoll MPI_Barrier 7 1\n", "",
                              "comm 7 2 0\nsend MPI_Send 7 1 5 1\ncoll MPI_Barrier 7 1\n"});
  const Outcome outcome = run(split, Buffering::Zero);
  CHECK_FALSE(outcome.deadlock());
  CHECK(outcome.stopped.empty());
  // Nonblocking collectives complete when every member started theirs.
  const auto nonblocking = logs_of({"icoll 1 MPI_Ibarrier 1 1\nrecv MPI_Recv 1 1 0 1\nwait MPI_Wait 1 1\n",
                                    "icoll 1 MPI_Ibarrier 1 1\nwait MPI_Wait 1 1\nsend MPI_Send 1 0 0 1\n"});
  CHECK(stuck(run(nonblocking, Buffering::Standard)) == std::vector<std::pair<int, std::size_t>>{});
}

TEST_CASE("analyze: a log without its end is where the recorded run stopped, not a deadlock of its own",
          "[analyze]") {
  // Rank 1 crashed before it sent; rank 2 waits for rank 0, which waits for rank 1.
  const auto logs = logs_of({"recv MPI_Recv 1 1 0 1\n", "", "recv MPI_Recv 1 0 0 1\n"}, /*finalized=*/false);
  const Outcome outcome = run(logs, Buffering::Standard);
  CHECK_FALSE(outcome.deadlock());
  REQUIRE(outcome.stopped.size() == 3);
  CHECK(outcome.stopped[0].why == "it waits for a message from rank 1 (tag 0): rank 1's log ends");
  CHECK(outcome.stopped[0].after_cut);
  CHECK(outcome.stopped[1].log_ends);
  CHECK(outcome.stopped[2].after_cut);
  // Where both wait for each other, the recorded run hung there: a deadlock.
  const auto hung = logs_of({"recv MPI_Recv 1 1 0 1\n", "recv MPI_Recv 1 0 0 1\n"}, /*finalized=*/false);
  const Outcome deadlock = run(hung, Buffering::Standard);
  CHECK(deadlock.deadlock());
  CHECK(stuck(deadlock) == std::vector<std::pair<int, std::size_t>>{{0, 0}, {1, 0}});
  CHECK(deadlock.choices.empty());
}

TEST_CASE("analyze: many ranks, one master taking every worker's results from MPI_ANY_SOURCE", "[analyze]") {
  constexpr int kRanks = 2000;
  std::vector<std::string> ranks(kRanks);
  for (int worker = 1; worker < kRanks; ++worker) {
    ranks[0] += fmt::format("send MPI_Send 1 {} 0 1\n", worker);
    ranks[worker] = "recv MPI_Recv 1 0 0 1\nsend MPI_Send 1 0 1 1\ncoll MPI_Barrier 1 2\n";
  }
  for (int worker = 1; worker < kRanks; ++worker) ranks[0] += "recv MPI_Recv 1 * 1 1\n";
  ranks[0] += "coll MPI_Barrier 1 2\n";
  const auto logs = logs_of(ranks);
  const Outcome outcome = run(logs, Buffering::Zero);
  CHECK_FALSE(outcome.deadlock());
  CHECK(outcome.choices.size() == kRanks - 1);
}

TEST_CASE("analyze: a deadlock's matching is forced from the logged run's recording, the rest left free",
          "[analyze][confirm]") {
  // The correct master of master_worker.c: it took rank 2's request first,
  // so its log replies to rank 2 first. With zero buffering the analysis
  // takes rank 1's request first and runs that reply: a deadlock of the
  // logged calls, for a run to confirm.
  const auto logs = logs_of({"recv MPI_Recv 1 * 1 1\nsend MPI_Send 1 2 2 1\nrecv MPI_Recv 1 * 1 1\nsend MPI_Send 1 1 2 1\n",
                             "send MPI_Send 1 0 1 1\nrecv MPI_Recv 1 0 2 1\n",
                             "send MPI_Send 1 0 1 1\nrecv MPI_Recv 1 0 2 1\n"});
  const Outcome zero = run(logs, Buffering::Zero);
  REQUIRE(zero.deadlock());
  REQUIRE(zero.choices.size() == 1);
  Recording master;
  master.header = {0, 3, "./app"};
  master.runs = {{{Kind::Poll, kNothing, {}}, 3}, {{Kind::Receive, 2, {}}, 1}, {{Kind::Receive, 1, {}}, 1}};
  const std::vector<Recording> recordings = {master, {}, {}};
  const mpisentry::offline::explore::Schedule schedule = forcing(logs, recordings, zero);
  // Up to the chosen receive: the Iprobes as recorded, the receive forced to rank 1; the rest free.
  CHECK(schedule.forced.size() == 1);
  CHECK(schedule.forced.at(0) == std::vector<Event>{{Kind::Poll, kNothing, {}}, {Kind::Poll, kNothing, {}},
                                                    {Kind::Poll, kNothing, {}}, {Kind::Receive, 1, {}}});
  REQUIRE(schedule.changes.size() == 1);
  CHECK(schedule.changes[0].event == 3);
  CHECK(schedule.changes[0].was == 2);
  CHECK(schedule.changes[0].sender == 1);

  // Receives from MPI_ANY_SOURCE before a chosen one that no choice forced run
  // free; a probe from MPI_ANY_SOURCE keeps its outcome; senders are ranks of
  // the receive's communicator.
  const auto split = logs_of({"comm 7 2 0 1\nprobe MPI_Probe 7 * 0 1\nrecv MPI_Recv 7 1 0 1\n"
                              "irecv 1 MPI_Irecv 7 * 0 1\nrecv MPI_Recv 7 * 0 1\nwait MPI_Wait 1 1\n",
                              "comm 7 2 0 1\nsend MPI_Send 7 1 0 1\n",
                              "comm 7 2 0 1\nsend MPI_Send 7 1 0 1\nsend MPI_Send 7 1 0 1\n"});
  Outcome chosen;
  chosen.choices = {{0, 3, 1, 0, Reason::First}};  // the MPI_Recv from any (op 3) takes world rank 1
  Recording split_master;
  split_master.header = {0, 3, "./app"};
  split_master.runs = {{{Kind::Probe, 0, {}}, 1}, {{Kind::Receive, 0, {}}, 1}, {{Kind::Receive, 0, {}}, 1}};
  const auto forced = forcing(split, {split_master, {}, {}}, chosen);
  CHECK(forced.forced.at(0) == std::vector<Event>{{Kind::Probe, 0, {}}, {Kind::Receive, kUnknown, {}},
                                                  {Kind::Receive, 2, {}}});

  // A recording that is not the logged run's is named.
  Recording other = master;
  other.header.command = "./other";
  CHECK(thrown_by([&] { forcing(logs, {other, {}, {}}, zero); }) ==
        "rank-0.record: missing, or not of the logged run (rank-0.log ran `./app`)");
  CHECK(thrown_by([&] { forcing(logs, {Recording{}, {}, {}}, zero); }) ==
        "rank-0.record: missing, or not of the logged run (rank-0.log ran `./app`)");
  Recording probed = master;
  probed.runs = {{{Kind::Probe, 2, {}}, 1}};
  CHECK(thrown_by([&] { forcing(logs, {probed, {}, {}}, zero); }) ==
        "rank-0.record: event 0 is `P 2` where MPI_Recv(source MPI_ANY_SOURCE, tag 1, comm 1) at an unknown place, "
        "rank-0.log line 5 has its event: not the logged run's recording");
  // A persistent receive's start cannot be forced: it runs free.
  const auto persistent = logs_of({"irecv 1 MPI_Recv_init 1 * 1 1\nwait MPI_Wait 1 1\n", kSendToRoot, ""});
  Outcome started;
  started.choices = {{0, 0, 1, 1, Reason::First}};
  CHECK(forcing(persistent, {master, {}, {}}, started).forced.empty());
}

TEST_CASE("analyze: logs it cannot model or that are not of one run are refused, naming file and line",
          "[analyze][errors]") {
  const auto two = [](const std::string& zero, const std::string& one) {
    return std::vector<CommLog>{log_of(0, 2, zero), log_of(1, 2, one)};
  };
  CHECK(problem_of(two("opaque MPI_Win_fence 1\n", "")) ==
        "rank-0.log line 5: MPI_Win_fence may wait for other ranks in a way analyze does not model; it cannot "
        "analyze this run");
  CHECK(problem_of(two("", "wait MPI_Wait 1 ?\n")) ==
        "rank-1.log line 5: MPI_Wait waits for a request that a call analyze does not model started");
  CHECK(problem_of(two("wait MPI_Waitall 1 3\n", "")) ==
        "rank-0.log line 5: MPI_Waitall waits for request 3, which no line before starts");
  CHECK(problem_of(two("send MPI_Send 1 2 0 1\n", "")) ==
        "rank-0.log line 5: the destination 2 is not a rank of communicator 1 (2 ranks)");
  CHECK(problem_of(two("comm 9 0 1\n", "comm 9 1 0\n")) ==
        "rank-1.log: communicator 9 has members 1 0 here and 0 1 in another rank's log: the logs are not of one run");
  CHECK(problem_of(two("comm 9 inter\nrecv MPI_Recv 9 0 0 1\n", "")) ==
        "rank-0.log line 6: MPI_Recv on an inter-communicator, which analyze does not model");
  CHECK(problem_of({log_of(0, 2, ""), log_of(0, 2, "")}) == "rank-1.log: its header says rank 0 of 2, not rank 1 of 2");
}

TEST_CASE("comm log: lines written are read back, and a bad line is named", "[analyze][errors]") {
  Op op;
  op.kind = OpKind::SendReceive;
  op.function = "MPI_Sendrecv";
  op.comm = 1;
  op.peer = 2;
  op.tag = 3;
  op.source = kAnyPeer;
  op.receive_tag = kAnyTag;
  op.site = 4;
  CHECK(op_text(op) == "sendrecv MPI_Sendrecv 1 2 3 * * 4\n");
  const CommLog log = parse_log(log_header_text(1, 3, "./app -x", "/home/u/run", true) + comm_text(7, {2, 0}, false) +
                                site_text(4, "a.c:9 (main)") + op_text(op) + "wait MPI_Waitall 4 ? 2\nend\n");
  CHECK(log.rank == 1);
  CHECK(log.ranks == 3);
  CHECK(log.command == "./app -x");
  CHECK(log.directory == "/home/u/run");
  CHECK(log.multiple_threads);
  CHECK(log.comms.at(7).members == std::vector<int>{2, 0});
  CHECK(log.sites.at(4) == "a.c:9 (main)");
  REQUIRE(log.ops.size() == 2);
  CHECK(op_text(log.ops[0]) == op_text(op));
  CHECK(log.ops[1].requests == std::vector<std::uint64_t>{kUnknownRequest, 2});
  CHECK(log.finalized);
  // A last line cut while it was written is dropped: the run ended there.
  CHECK(parse_log(log_header_text(0, 1, "./app", "/run", false) + "send MPI_Se").ops.empty());

  const std::string header = log_header_text(0, 2, "./app", "/run", false);
  CHECK(parse_problem("mpisentry-record 2\n") ==
        "line 1 (\"mpisentry-record 2\"): not an mpisentry communication log (it starts with \"mpisentry-log\")");
  CHECK(parse_problem("mpisentry-log 3\n") == "line 1 (\"mpisentry-log 3\"): this mpisentry reads versions 1 to 2 only");
  CHECK(parse_problem("mpisentry-log 1\nrank 0 of 2\n") == "the log ends inside its 3 header lines (truncated)");
  CHECK(parse_problem("mpisentry-log 2\nrank 0 of 2\ncommand ./app\n") ==
        "the log ends inside its 4 header lines (truncated)");
  CHECK(parse_problem("mpisentry-log 2\nrank 0 of 2\ncommand ./app\nend\n") ==
        "line 4 (\"end\"): expected \"directory\" and the rank's working directory");
  // Version 1, without the directory line, is read too.
  const CommLog first = parse_log("mpisentry-log 1\nrank 0 of 1\ncommand ./app\nthreads multiple\nend\n");
  CHECK(first.directory.empty());
  CHECK(first.multiple_threads);
  CHECK(first.finalized);
  CHECK(parse_problem(header + "post MPI_Send 1 1 0 1\n") ==
        "line 5 (\"post MPI_Send 1 1 0 1\"): unknown line (comm, site, send, recv, probe, sendrecv, coll, isend, "
        "irecv, icoll, wait, waitany, opaque or end)");
  CHECK(parse_problem(header + "send MPI_Send 1 x 0 1\n") ==
        "line 5 (\"send MPI_Send 1 x 0 1\"): the destination \"x\" is not a number of at least 0");
  CHECK(parse_problem(header + "send MPI_Send 1 1 0\n") ==
        "line 5 (\"send MPI_Send 1 1 0\"): expected \"send FUNCTION COMM DEST TAG SITE\"");
  CHECK(parse_problem(header + "recv MPI_Recv 5 1 0 1\n") ==
        "line 5 (\"recv MPI_Recv 5 1 0 1\"): communicator 5 is used before a comm line declares it");
  CHECK(parse_problem(header + "comm 5 0 4\n") == "line 5 (\"comm 5 0 4\"): member 4 is not a rank of the 2 ranks");
  CHECK(parse_problem(header + "end\ncoll MPI_Barrier 1 1\n") ==
        "line 6 (\"coll MPI_Barrier 1 1\"): a line after \"end\"");
}
