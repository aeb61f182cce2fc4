// Rank 0's side of a verdict at 1,000 to 100,000 ranks, without MPI: builds
// every rank's gathered part for a shape of hang (as describe.cpp and the
// stack locator would make it), then runs, timed stage by stage, what rank 0's
// monitor runs on the gathered bytes: two looks (decode, judge, the second
// confirms the first), then the look with stacks and the report (decode,
// judge, confirm, symbolize, verdict_report, text, JSON, DOT).
//
//   judge_scale <ring|knot|partial|collective|collective-missing|collective-half> <ranks> [--max-gather-bytes N]
//
// ring: each rank in MPI_Send to the next, a cycle of P. knot: each in
// MPI_Waitany on receives from both neighbours. partial: ranks 0 and 1
// receive from each other, a tenth of the ranks wait behind them, the rest
// compute. collective: every rank in one MPI_Allreduce that does not return
// (NO_PROGRESS). collective-missing: the same but rank 0, which receives
// from rank 1 (HARD). collective-half: the first half of the ranks in
// MPI_Allreduce, the second half never joins it: its first two ranks
// receive from each other, the others from the first (HARD; the members
// wait for P^2 / 4 ranks not arrived).
//
// Prints one JSON object on stdout (times in seconds, memory and bytes in
// bytes); progress on stderr. A shape whose gather at rank 0 would pass
// --max-gather-bytes (default 4 GiB) is not built: the object then says so,
// with the bytes it would take. See docs/scale.md.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/functions.hpp"
#include "config/settings.hpp"
#include "monitor/reports.hpp"
#include "monitor/rounds.hpp"
#include "monitor/verdict.hpp"
#include "report/report.hpp"
#include "model/snapshot.hpp"
#include "stacks/stacks.hpp"

namespace {

using namespace mpisentry;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kWorld = 1;                       // MPI_COMM_WORLD's id, as comms gives it
constexpr std::uint64_t kRowComm = 0x6a09e667f3bcc908ULL;  // a communicator made by MPI_Comm_split
constexpr double kTimeoutSeconds = 10;                    // DEADLOCK-TIMEOUT
constexpr double kWarningSeconds = 300;                   // DEADLOCK-WARNING

// ------------------------------------------------------------------ stacks

// A real stack of this program, located as a rank locates its own: the
// blocked ranks' is `kBlockedDepth` calls deep under main (9 frames of the
// program, then libc's), the running ones' a few calls less, so that the
// report has two places to print.
constexpr int kBlockedDepth = 6;
constexpr int kRunningDepth = 3;

__attribute__((noinline)) std::vector<stacks::FrameAddress> located_at_depth(int depth) {
  if (depth > 0) {
    std::vector<stacks::FrameAddress> frames = located_at_depth(depth - 1);
    asm volatile("" ::: "memory");  // no tail call: each level keeps its frame
    return frames;
  }
  stacks::RawStack raw;
  stacks::capture_current(raw);
  return stacks::locate(raw);
}

// ------------------------------------------------------------------ ranks

struct Shape {
  std::string name;
  int ranks = 0;
};

CollectiveCount world_count(std::uint64_t entered) {
  CollectiveCount count{kWorld, entered, 0};
  for (const FunctionId id : {FunctionId::Bcast, FunctionId::Allreduce, FunctionId::Barrier, FunctionId::Allreduce})
    count.recent = CollectiveCount::add_recent(count.recent, static_cast<std::uint16_t>(id));
  return count;
}

// What every rank has: host, pid, counters, two communicators' collectives.
RankSnapshot rank_base(int rank, RankState state) {
  RankSnapshot snapshot;
  snapshot.rank = rank;
  snapshot.host = fmt::format("node{:05}.cluster.example.org", rank / 64);
  snapshot.pid = 100000 + rank % 64 * 97;
  snapshot.state = state;
  snapshot.seconds = state == RankState::Running ? 0 : 12.5 + (rank % 7) * 0.1;
  snapshot.activity = 1'000'000ULL + static_cast<std::uint64_t>(rank) * 7919;
  snapshot.collectives = {world_count(12), {kRowComm, 3, static_cast<std::uint64_t>(FunctionId::Allreduce)}};
  std::sort(snapshot.collectives.begin(), snapshot.collectives.end(),
            [](const CollectiveCount& a, const CollectiveCount& b) { return a.comm_id < b.comm_id; });
  return snapshot;
}

ThreadSnapshot blocked_thread(const RankSnapshot& rank) {
  ThreadSnapshot thread;
  thread.state = RankState::Blocked;
  thread.seconds = rank.seconds;
  return thread;
}

// MPI_Send of a large message to `dest`, not yet received.
ThreadSnapshot in_send(const RankSnapshot& rank, int dest) {
  ThreadSnapshot thread = blocked_thread(rank);
  thread.function = "MPI_Send";
  thread.call = fmt::format("MPI_Send(buf=0x7f3a{:08x}, count=1048576, datatype=MPI_DOUBLE, dest={}, tag=7, "
                            "comm=MPI_COMM_WORLD)",
                            rank.rank * 4096, dest);
  thread.wait_mode = WaitMode::All;
  thread.waits_for = {dest};
  thread.wait_reason = fmt::format("MPI_Send waits for its receiver, rank {}", dest);
  thread.messages = {{true, dest, 7, kWorld}};
  return thread;
}

// MPI_Recv from `source`, which sends nothing.
ThreadSnapshot in_receive(const RankSnapshot& rank, int source) {
  ThreadSnapshot thread = blocked_thread(rank);
  thread.function = "MPI_Recv";
  thread.call = fmt::format("MPI_Recv(buf=0x7ffd{:08x}, count=64, datatype=MPI_INT, source={}, tag=0, "
                            "comm=MPI_COMM_WORLD, status=0x7ffd{:08x})",
                            rank.rank * 16, source, rank.rank * 16 + 256);
  thread.wait_mode = WaitMode::All;
  thread.waits_for = {source};
  thread.wait_reason = fmt::format("MPI_Recv waits for its source, rank {}", source);
  thread.messages = {{false, source, 0, kWorld}};
  return thread;
}

// MPI_Waitany on receives from both neighbours of a ring.
ThreadSnapshot in_waitany(const RankSnapshot& rank, int left, int right) {
  ThreadSnapshot thread = blocked_thread(rank);
  thread.function = "MPI_Waitany";
  thread.call = fmt::format("MPI_Waitany(count=2, array_of_requests=0x55c1{:08x} [MPI_Irecv(source={}, tag=3), "
                            "MPI_Irecv(source={}, tag=3)], index=0x7ffd{:08x}, status=0x7ffd{:08x})",
                            rank.rank * 32, left, right, rank.rank * 8, rank.rank * 8 + 64);
  thread.wait_mode = WaitMode::Any;
  thread.waits_for = {std::min(left, right), std::max(left, right)};
  thread.wait_reason = fmt::format("MPI_Waitany waits for any of ranks {},{} (2 of its 2 requests still incomplete)",
                                   std::min(left, right), std::max(left, right));
  thread.messages = {{false, left, 3, kWorld}, {false, right, 3, kWorld}};
  return thread;
}

// MPI_Allreduce on MPI_COMM_WORLD, its collective #13 there: waits for every
// other rank, the two runs around its own that describe.cpp makes.
ThreadSnapshot in_allreduce(RankSnapshot& rank, int ranks) {
  ThreadSnapshot thread = blocked_thread(rank);
  thread.function = "MPI_Allreduce";
  thread.call = fmt::format("MPI_Allreduce(sendbuf=0x7ffd{:08x}, recvbuf=0x7ffd{:08x}, count=1, "
                            "datatype=MPI_DOUBLE, op=MPI_SUM, comm=MPI_COMM_WORLD)",
                            rank.rank * 16, rank.rank * 16 + 8);
  thread.wait_mode = WaitMode::All;
  if (rank.rank > 0) thread.waits_for.add({0, rank.rank - 1});
  if (rank.rank < ranks - 1) thread.waits_for.add({rank.rank + 1, ranks - 1});
  thread.wait_reason = "MPI_Allreduce on MPI_COMM_WORLD (its collective #13 there) cannot complete before every "
                       "member has joined it";
  thread.collective = {kWorld, 13, "MPI_Allreduce", -1, "MPI_SUM"};
  for (CollectiveCount& count : rank.collectives)
    if (count.comm_id == kWorld) count = world_count(13);
  return thread;
}

// Computing outside MPI.
ThreadSnapshot running(const RankSnapshot&) {
  ThreadSnapshot thread;
  thread.state = RankState::Running;
  return thread;
}

// Rank `rank` of the shape, as describe.cpp would tell it.
RankSnapshot make_rank(const Shape& shape, int rank) {
  const int p = shape.ranks;
  if (shape.name == "ring") {  // every rank sends to the next: a cycle of P
    RankSnapshot snapshot = rank_base(rank, RankState::Blocked);
    snapshot.threads.push_back(in_send(snapshot, (rank + 1) % p));
    return snapshot;
  }
  if (shape.name == "knot") {  // each waits for any of its two neighbours: a knot of P
    RankSnapshot snapshot = rank_base(rank, RankState::Blocked);
    snapshot.threads.push_back(in_waitany(snapshot, (rank + p - 1) % p, (rank + 1) % p));
    return snapshot;
  }
  if (shape.name == "partial") {
    // Ranks 0 and 1 receive from each other; a tenth of the ranks wait, in a
    // binary tree, for rank 0; the others compute (bystanders).
    if (rank <= 1) {
      RankSnapshot snapshot = rank_base(rank, RankState::Blocked);
      snapshot.threads.push_back(in_receive(snapshot, 1 - rank));
      return snapshot;
    }
    if (rank < std::max(2, p / 10)) {
      RankSnapshot snapshot = rank_base(rank, RankState::Blocked);
      snapshot.threads.push_back(in_receive(snapshot, (rank - 1) / 2));
      return snapshot;
    }
    RankSnapshot snapshot = rank_base(rank, RankState::Running);
    snapshot.threads.push_back(running(snapshot));
    return snapshot;
  }
  RankSnapshot snapshot = rank_base(rank, RankState::Blocked);
  if (shape.name == "collective-missing" && rank == 0) {  // receives from rank 1, in MPI_Allreduce
    snapshot.threads.push_back(in_receive(snapshot, 1));
    return snapshot;
  }
  if (shape.name == "collective-half" && rank >= p / 2) {
    const int first = p / 2;
    snapshot.threads.push_back(in_receive(snapshot, rank == first ? first + 1 : first));
    return snapshot;
  }
  // Every rank in MPI_Allreduce: they have all joined it, and it does not
  // return (a hang inside MPI) past DEADLOCK-WARNING: NO_PROGRESS, after
  // every rule of the judge has run.
  if (shape.name == "collective") snapshot.seconds += kWarningSeconds;
  snapshot.threads.push_back(in_allreduce(snapshot, p));
  return snapshot;
}

// ------------------------------------------------------------------ measuring

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// VmHWM or VmRSS of this process, in bytes.
std::size_t status_bytes(std::string_view key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with(key)) return std::stoull(line.substr(key.size() + 1)) * 1024;
  return 0;
}

// The peak (VmHWM) starts again from the current RSS.
void reset_peak() {
  const int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd < 0 || write(fd, "5", 1) != 1) throw std::runtime_error("cannot reset the peak RSS (/proc/self/clear_refs)");
  close(fd);
}

void progress(const Shape& shape, std::string_view what) {
  fmt::print(stderr, "judge_scale {} {}: {}\n", shape.name, shape.ranks, what);
}

struct Timings {
  std::vector<std::pair<std::string, double>> stages;
  template <typename Work>
  auto time(std::string name, Work work) {
    const auto start = Clock::now();
    auto result = work();
    stages.emplace_back(std::move(name), seconds_since(start));
    return result;
  }
};

// The gather as Channel::gather leaves it at rank 0: one buffer, then a copy
// of each rank's part.
struct Gathered {
  std::vector<std::string> parts;
  std::size_t total = 0;
};

Gathered gather(const Shape& shape, bool with_stacks, const std::vector<std::string>& blocked_frames,
                const std::vector<std::string>& running_frames) {
  Gathered gathered;
  gathered.parts.reserve(static_cast<std::size_t>(shape.ranks));
  for (int rank = 0; rank < shape.ranks; ++rank) {
    const RankSnapshot snapshot = make_rank(shape, rank);
    const bool blocked = snapshot.state != RankState::Running;
    gathered.parts.push_back(encode_gathered(snapshot, with_stacks, blocked ? blocked_frames : running_frames));
    gathered.total += gathered.parts.back().size();
  }
  return gathered;
}

struct Decoded {
  std::vector<RankSnapshot> ranks;
  std::vector<std::vector<std::string>> frames;
};

Decoded decode(const Gathered& gathered, bool with_stacks) {
  Decoded decoded;
  decoded.ranks.reserve(gathered.parts.size());
  for (const std::string& part : gathered.parts) {
    GatheredRank rank = decode_gathered(part, with_stacks);
    decoded.ranks.push_back(std::move(rank.snapshot));
    decoded.frames.push_back(std::move(rank.frames));
  }
  return decoded;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

int run(const Shape& shape, std::size_t max_gather_bytes) {
  std::vector<stacks::FrameAddress> blocked_stack = located_at_depth(kBlockedDepth);
  std::vector<stacks::FrameAddress> running_stack = located_at_depth(kRunningDepth);
  const std::vector<std::string> blocked_frames{stacks::serialize(blocked_stack)};
  const std::vector<std::string> running_frames{stacks::serialize(running_stack)};

  // Each rank's part, largest first: rank 1 is the largest of every shape.
  std::vector<std::size_t> part_bytes;
  for (const int rank : {0, 1, shape.ranks - 1}) {
    const RankSnapshot snapshot = make_rank(shape, rank);
    part_bytes.push_back(encode_gathered(snapshot, true, snapshot.state == RankState::Running ? running_frames
                                                                                             : blocked_frames)
                             .size());
  }
  const std::size_t largest_part = *std::max_element(part_bytes.begin(), part_bytes.end());
  // The per-round exchange: one Summary in each message of the monitors' tree.
  std::string out = fmt::format(R"({{"shape":{},"ranks":{},"summary_bytes":{},)", json_string(shape.name),
                                shape.ranks, sizeof(monitor::Summary));
  const std::size_t gather_estimate = largest_part * static_cast<std::size_t>(shape.ranks);
  if (gather_estimate > max_gather_bytes) {
    progress(shape, fmt::format("not run: the gather would bring up to {} bytes to rank 0", gather_estimate));
    fmt::print("{}\"skipped\":true,\"part_bytes_max\":{},\"gather_bytes_estimate\":{}}}\n", out, largest_part,
               gather_estimate);
    return 0;
  }

  const std::size_t rss_start = status_bytes("VmRSS");
  progress(shape, "building every rank's part");
  const Gathered looks = gather(shape, false, blocked_frames, running_frames);
  const Gathered with_stacks = gather(shape, true, blocked_frames, running_frames);
  std::size_t smallest = SIZE_MAX, biggest = 0;
  for (const std::string& part : with_stacks.parts) {
    smallest = std::min(smallest, part.size());
    biggest = std::max(biggest, part.size());
  }
  const std::size_t rss_parts = status_bytes("VmRSS");

  config::Settings settings;
  settings.deadlock_timeout = config::Timeout{false, std::chrono::seconds(static_cast<int>(kTimeoutSeconds))};
  settings.deadlock_warning = std::chrono::seconds(static_cast<int>(kWarningSeconds));
  const monitor::JudgeSettings judge_settings{kTimeoutSeconds, kTimeoutSeconds, kWarningSeconds};

  reset_peak();
  const std::size_t rss_before = status_bytes("VmRSS");
  Timings timings;
  const auto total_start = Clock::now();

  progress(shape, "first look");
  Decoded first = timings.time("decode", [&] { return decode(looks, false); });
  const std::size_t rss_one_look = status_bytes("VmRSS");
  const monitor::Verdict first_verdict =
      timings.time("judge", [&] { return monitor::judge(first.ranks, judge_settings); });

  progress(shape, "second look");
  Decoded second = timings.time("decode 2", [&] { return decode(looks, false); });
  const monitor::Verdict second_verdict =
      timings.time("judge 2", [&] { return monitor::judge(second.ranks, judge_settings); });
  const bool confirmed = timings.time(
      "confirms", [&] { return monitor::confirms(first_verdict, first.ranks, second_verdict, second.ranks); });
  first = {};

  progress(shape, "look with stacks, report");
  Decoded last = timings.time("decode with stacks", [&] { return decode(with_stacks, true); });
  const monitor::Verdict last_verdict =
      timings.time("judge 3", [&] { return monitor::judge(last.ranks, judge_settings); });
  const bool reconfirmed = timings.time(
      "confirms 2", [&] { return monitor::confirms(second_verdict, second.ranks, last_verdict, last.ranks); });
  second = {};
  // As the monitor's symbolize_into, but with every frame kept: the program's
  // frames here are in the checker's own module (linked in, not preloaded),
  // which symbolize() leaves out. The debug info is loaded before the clock
  // starts, as Symbolizer::warm_up does while the looks are made.
  stacks::Symbolizer symbolizer;
  symbolizer.symbolize_every_frame(blocked_stack);
  symbolizer.symbolize_every_frame(running_stack);
  const std::size_t rss_unsymbolized = status_bytes("VmRSS");
  timings.time("symbolize", [&] {
    for (std::size_t rank = 0; rank < last.ranks.size(); ++rank)
      for (std::size_t thread = 0; thread < last.ranks[rank].threads.size(); ++thread)
        last.ranks[rank].threads[thread].stack =
            symbolizer.symbolize_every_frame(stacks::parse_frame_addresses(last.frames[rank][thread]));
    return 0;
  });
  last.frames = {};
  const std::size_t rss_stacks = status_bytes("VmRSS") - rss_unsymbolized;
  const report::Report report = timings.time("verdict_report", [&] {
    return monitor::reports::verdict_report(last_verdict, 0.5, std::move(last.ranks), settings);
  });
  // Part of both format_text and format_json, timed apart too.
  timings.time("merge_stacks",
               [&] { return report::merge_stacks(report.ranks, report::leading_ranks(report)).size(); });
  const std::string text = timings.time("format_text", [&] { return report::format_text(report); });
  const std::string json = timings.time("format_json", [&] { return report::format_json(report); });
  const std::string dot = timings.time("format_dot", [&] { return report::format_dot(report); });
  const double total = seconds_since(total_start);
  const std::size_t peak = status_bytes("VmHWM");

  const char* kinds[] = {"none", "hard", "slow", "unsafe"};
  out += fmt::format(
      R"("verdict":"{}","partial":{},"core":{},"blocked_behind":{},"confirmed":{},"report_lines":{},)"
      R"("text_bytes":{},"json_bytes":{},"dot_bytes":{},"part_bytes_min":{},"part_bytes_max":{},)"
      R"("look_part_bytes_max":{},"gather_bytes":{},"look_gather_bytes":{},"rss_parts":{},"rss_one_look":{},)"
      R"("rss_stacks":{},"peak_above_parts":{},"peak":{},"total":{},"arcs":{},"arcs_left_out":{})",
      kinds[static_cast<int>(last_verdict.kind)], last_verdict.partial, last_verdict.core.core.size(),
      last_verdict.core.blocked_behind.size(), confirmed && reconfirmed, std::count(text.begin(), text.end(), '\n'),
      text.size(), json.size(), dot.size(), smallest, biggest,
      std::max_element(looks.parts.begin(), looks.parts.end(),
                       [](const std::string& a, const std::string& b) { return a.size() < b.size(); })
          ->size(),
      with_stacks.total, looks.total, rss_parts - rss_start, rss_one_look - rss_before, rss_stacks,
      peak - rss_before, peak, total, report.arcs.size(), report.arcs_left_out);
  for (const auto& [stage, seconds] : timings.stages) out += fmt::format(",{}:{}", json_string(stage), seconds);
  fmt::print("{}}}\n", out);
  if (getenv("JUDGE_SCALE_TEXT") != nullptr) fmt::print(stderr, "{}", text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> shapes{"ring",       "knot", "partial", "collective", "collective-missing",
                                             "collective-half"};
  std::size_t max_gather_bytes = std::size_t{4} << 30;
  std::vector<std::string_view> positional;
  const auto usage = [&](const std::string& problem) {
    fmt::print(stderr, "judge_scale: {}\nusage: judge_scale <{}> <ranks> [--max-gather-bytes N]\n", problem,
               fmt::join(shapes, "|"));
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--max-gather-bytes") {
      const std::string_view value = i + 1 < argc ? argv[++i] : "";
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), max_gather_bytes);
      if (value.empty() || error != std::errc() || end != value.data() + value.size())
        return usage(fmt::format("--max-gather-bytes needs a number of bytes, got \"{}\"", value));
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return usage(fmt::format("expected 2 arguments, got {}", positional.size()));
  if (std::find(shapes.begin(), shapes.end(), positional[0]) == shapes.end())
    return usage(fmt::format("unknown shape \"{}\"", positional[0]));
  int ranks = 0;
  const auto [end, error] = std::from_chars(positional[1].data(), positional[1].data() + positional[1].size(), ranks);
  if (error != std::errc() || end != positional[1].data() + positional[1].size() || ranks < 4)
    return usage(fmt::format("ranks must be a number of at least 4, got \"{}\"", positional[1]));
  return run(Shape{std::string(positional[0]), ranks}, max_gather_bytes);
}
