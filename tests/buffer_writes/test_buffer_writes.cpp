// LOCAL:MEMORY:ILLEGAL_MODIFICATION: a send buffer written between the call
// that started its operation and the call that completed it is reported on
// its rank, naming both calls, and so is a nonblocking receive's buffer
// written after the message came; reading a send buffer, writing it after
// the wait, writing bytes its datatype does not send or receive into,
// freeing its datatype early, a receive shorter than its buffer and a
// message sent by MPI_Sendrecv_replace are not, and leave the program
// unchanged.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

// Every check on, and the job not ended at the first error, so that the
// program's own output is compared too.
const std::vector<std::string> kAllChecks = {"--check-all", "--check-max-errors", "0"};

}  // namespace

TEST_CASE("buffer_writes: a send buffer written before its operation completed is LOCAL:MEMORY:ILLEGAL_MODIFICATION",
          "[memory]") {
  // mode, the start as the summary names it, the starting call's text, the function and mark of its call site
  const auto [mode, start, call, function, mark] =
      GENERATE(table<std::string, std::string, std::string, std::string, std::string>({
          {"isend_write", "MPI_Isend", R"(MPI_Isend\(buf=0x[0-9a-f]+, count=8, datatype=MPI_INT, dest=1, tag=5)",
           "exchange", "isend"},
          {"isend_write_large", "MPI_Isend",
           R"(MPI_Isend\(buf=0x[0-9a-f]+, count=1024, datatype=MPI_INT, dest=1, tag=5)", "exchange", "isend"},
          {"persistent_write", "MPI_Start of MPI_Send_init",
           R"(MPI_Send_init\(buf=0x[0-9a-f]+, count=8, datatype=MPI_INT, dest=1, tag=5)", "exchange", "send_init"},
          {"vector_write", "MPI_Isend", R"(MPI_Isend\(buf=0x[0-9a-f]+, count=1, datatype=)", "exchange", "isend"},
          {"iallgather_write", "MPI_Iallgather", R"(MPI_Iallgather\()", "iallgather", "iallgather"},
          {"ialltoall_write", "MPI_Ialltoall", R"(MPI_Ialltoall\()", "ialltoall", "ialltoall"},
      }));
  INFO("mode " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_writes);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {mode});
  CHECK(result.succeeded());
  const std::string started_by = call.substr(0, call.find('\\'));
  std::vector<std::string> patterns = {
      R"(^\[0\] ERROR: LOCAL:MEMORY:ILLEGAL_MODIFICATION: error$)",
      "The send buffer of " + started_by + " was written while MPI owned it: its bytes when MPI_Wait completed the "
          "operation differ from its bytes when it started \\(" + start + "\\)\\.",
      "rank 0 completes it:", "rank 0 started it:", call};
  patterns.push_back(frame_pattern(function, program.source, marked_line(program, mark)));
  check_reported(result, patterns);
  // The collectives' buffers are written on both ranks; the others on rank 0 only.
  const std::size_t reports = count_occurrences(result.err, "LOCAL:MEMORY:ILLEGAL_MODIFICATION: error");
  CHECK(reports == (mode.starts_with("iall") ? 2u : 1u));
}

TEST_CASE("buffer_writes: a send buffer read, written after the wait or between the ints its type sends, is not "
          "reported",
          "[memory][clean]") {
  const std::string mode = GENERATE("write_after", "read_only", "vector_gap_write", "freed_type", "iallgather",
                                    "ialltoall", "irecv", "irecv_gap_write", "irecv_short", "irecv_replace");
  INFO("mode " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_writes);
  const JobResult plain = check_unchanged_by_checker(workspace, 2, program, kAllChecks, {mode});
  CHECK(plain.out == "buffer_writes " + mode + ": data as sent\n");
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {mode});
  INFO(describe(result));
  CHECK(result.err.find("ILLEGAL_MODIFICATION") == std::string::npos);
  CHECK(result.err.find("] ERROR:") == std::string::npos);
}

TEST_CASE("buffer_writes: the origin buffer of an MPI_Put written before the fence is "
          "LOCAL:MEMORY:ILLEGAL_MODIFICATION",
          "[memory]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_writes);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"put_write"});
  CHECK(result.succeeded());
  check_reported(result, {R"(^\[0\] ERROR: LOCAL:MEMORY:ILLEGAL_MODIFICATION: error$)",
                          "The origin buffer of MPI_Put was written while MPI owned it: its bytes when "
                          "MPI_Win_fence completed the operation differ from its bytes when it started "
                          "\\(MPI_Put\\)\\.",
                          R"(MPI_Put\(origin_addr=0x[0-9a-f]+, origin_count=8, target_rank=1\))",
                          frame_pattern("put", program.source, marked_line(program, "put"))});
  CHECK(count_occurrences(result.err, "LOCAL:MEMORY:ILLEGAL_MODIFICATION: error") == 1u);
}

TEST_CASE("buffer_writes: the origin buffer of an MPI_Put read before the fence and written after is not reported",
          "[memory][clean]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_writes);
  const JobResult plain = check_unchanged_by_checker(workspace, 2, program, kAllChecks, {"put_read"});
  CHECK(plain.out == "buffer_writes put_read: data as sent\n");
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"put_read"});
  INFO(describe(result));
  CHECK(result.err.find("] ERROR:") == std::string::npos);
}

TEST_CASE("buffer_writes: an MPI_Irecv buffer written after the message came and before the wait is "
          "LOCAL:MEMORY:ILLEGAL_MODIFICATION",
          "[memory]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_writes);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"irecv_write"});
  CHECK(result.succeeded());
  check_reported(result, {R"(^\[1\] ERROR: LOCAL:MEMORY:ILLEGAL_MODIFICATION: error$)",
                          "The receive buffer of MPI_Irecv was written while MPI owned it: the 32 B it holds when "
                          "the receive completed differ from the bytes rank 0 sent \\(tag 6, MPI_COMM_WORLD\\)\\.",
                          "rank 1 completed the receive:", "rank 1 posted it:",
                          R"(MPI_Irecv\(buf=0x[0-9a-f]+, count=8, datatype=MPI_INT, source=0, tag=6)",
                          frame_pattern("receive", program.source, marked_line(program, "irecv")), "rank 0 sent it:"});
  CHECK(count_occurrences(result.err, "LOCAL:MEMORY:ILLEGAL_MODIFICATION: error") == 1u);
}
