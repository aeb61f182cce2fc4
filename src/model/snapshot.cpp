// The wire form of a RankSnapshot: a versioned header, then every field in
// declaration order. Numbers are decimal text ended by ';' and strings are
// "<length>:<bytes>", so any byte (newline, NUL, invalid UTF-8) survives and
// the reader never has to guess where a field ends.
#include "model/snapshot.hpp"

#include <fmt/format.h>

#include <charconv>
#include <iterator>
#include <stdexcept>

namespace mpisentry {
namespace {

constexpr std::string_view kHeader = "mpisentry-snapshot/10;";

class Writer {
 public:
  // fmt's "{}" prints doubles in the shortest form that reads back exactly.
  template <typename Number>
  void number(Number value) {
    fmt::format_to(std::back_inserter(out_), "{};", value);
  }
  void text(std::string_view value) {
    fmt::format_to(std::back_inserter(out_), "{}:", value.size());
    out_.append(value);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_{kHeader};
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {
    if (!bytes.starts_with(kHeader)) {
      throw std::invalid_argument(
          fmt::format("rank snapshot does not start with \"{}\" ({} bytes given)", kHeader, bytes.size()));
    }
    pos_ = kHeader.size();
  }

  template <typename Number>
  Number number(const char* field, char terminator = ';') {
    Number value{};
    const char* begin = bytes_.data() + pos_;
    const char* end = bytes_.data() + bytes_.size();
    const auto [stop, error] = std::from_chars(begin, end, value);
    if (stop == end) truncated(field);
    if (error != std::errc() || *stop != terminator) {
      fail(field, fmt::format("is not a number ended by '{}'", terminator));
    }
    pos_ = static_cast<std::size_t>(stop - bytes_.data()) + 1;
    return value;
  }

  template <typename Enum>
  Enum enumeration(const char* field, Enum last) {
    const auto value = number<int>(field);
    if (value < 0 || value > static_cast<int>(last)) fail(field, fmt::format("has no value {}", value));
    return static_cast<Enum>(value);
  }

  bool boolean(const char* field) { return enumeration<int>(field, 1) == 1; }

  std::string text(const char* field) {
    const auto size = number<std::size_t>(field, ':');
    if (size > remaining()) truncated(field);
    std::string value(bytes_.substr(pos_, size));
    pos_ += size;
    return value;
  }

  // Every element takes at least two bytes, which bounds what garbage can
  // make us reserve.
  std::size_t count(const char* field) {
    const auto value = number<std::size_t>(field);
    if (value > remaining() / 2) truncated(field);
    return value;
  }

  void expect_end() const {
    if (remaining() != 0) {
      throw std::invalid_argument(
          fmt::format("rank snapshot has {} unexpected bytes after its end at byte {}", remaining(), pos_));
    }
  }

  [[noreturn]] void fail(const char* field, const std::string& problem) const {
    throw std::invalid_argument(
        fmt::format("rank snapshot is malformed: field \"{}\" at byte {} {}", field, pos_, problem));
  }

 private:
  std::size_t remaining() const { return bytes_.size() - pos_; }

  [[noreturn]] void truncated(const char* field) const {
    throw std::invalid_argument(fmt::format(
        "rank snapshot is truncated: field \"{}\" at byte {} runs past the end ({} bytes given)", field, pos_,
        bytes_.size()));
  }

  std::string_view bytes_;
  std::size_t pos_ = 0;
};

// Each writer and its reader sit side by side, field for field, so that a
// field added to one is seen missing from the other.

// A rank set as its runs: "<runs>;" then "<first>;<last>;" each, ascending,
// neither overlapping nor adjacent (one form per set, so that equal snapshots
// have equal bytes).
void write_ranks(Writer& out, const RankSet& ranks) {
  out.number(ranks.runs().size());
  for (const RankSet::Run& run : ranks.runs()) {
    out.number(run.first);
    out.number(run.last);
  }
}
RankSet read_ranks(Reader& in, const char* field) {
  RankSet ranks;
  const std::size_t runs = in.count(field);
  for (std::size_t i = 0; i < runs; ++i) {
    const RankSet::Run run{in.number<int>(field), in.number<int>(field)};
    const bool after_the_last = ranks.empty() || static_cast<std::int64_t>(run.first) >
                                                     static_cast<std::int64_t>(ranks.runs().back().last) + 1;
    if (run.first > run.last || !after_the_last)
      in.fail(field, fmt::format("has run {}-{} out of order (runs ascend, apart)", run.first, run.last));
    ranks.add(run);
  }
  return ranks;
}

void write_collective(Writer& out, const CollectiveCall& collective) {
  out.number(collective.comm_id);
  out.number(collective.sequence);
  out.text(collective.function);
  out.number(collective.root);
  out.text(collective.op);
}
CollectiveCall read_collective(Reader& in) {
  CollectiveCall collective;
  collective.comm_id = in.number<std::uint64_t>("threads.collective.comm_id");
  collective.sequence = in.number<std::uint64_t>("threads.collective.sequence");
  collective.function = in.text("threads.collective.function");
  collective.root = in.number<int>("threads.collective.root");
  collective.op = in.text("threads.collective.op");
  return collective;
}

void write_started(Writer& out, const StartedCollective& started) {
  write_collective(out, started.call);
  write_ranks(out, started.waits_for);
  write_ranks(out, started.possibly_waits_for);
}
StartedCollective read_started(Reader& in) {
  StartedCollective started;
  started.call = read_collective(in);
  started.waits_for = read_ranks(in, "threads.started_collectives.waits_for");
  started.possibly_waits_for = read_ranks(in, "threads.started_collectives.possibly_waits_for");
  return started;
}

void write_message(Writer& out, const PendingMessage& message) {
  out.number(message.send ? 1 : 0);
  out.number(message.peer);
  out.number(message.tag);
  out.number(message.comm_id);
  out.number(message.may_end_call ? 1 : 0);
}
PendingMessage read_message(Reader& in) {
  PendingMessage message;
  message.send = in.boolean("messages.send");
  message.peer = in.number<int>("messages.peer");
  message.tag = in.number<int>("messages.tag");
  message.comm_id = in.number<std::uint64_t>("messages.comm_id");
  message.may_end_call = in.boolean("messages.may_end_call");
  return message;
}

void write_tally(Writer& out, const TagTally& tally) {
  out.number(tally.count);
  out.number(tally.sum);
  out.number(tally.squares);
}
TagTally read_tally(Reader& in) {
  TagTally tally;
  tally.count = in.number<std::uint64_t>("tallies.count");
  tally.sum = in.number<std::uint64_t>("tallies.sum");
  tally.squares = in.number<std::uint64_t>("tallies.squares");
  return tally;
}

void write_frame(Writer& out, const Frame& frame) {
  out.text(frame.function);
  out.text(frame.file);
  out.number(frame.line);
  out.text(frame.module);
}
Frame read_frame(Reader& in) {
  Frame frame;
  frame.function = in.text("threads.stack.function");
  frame.file = in.text("threads.stack.file");
  frame.line = in.number<int>("threads.stack.line");
  frame.module = in.text("threads.stack.module");
  return frame;
}

void write_thread(Writer& out, const ThreadSnapshot& thread) {
  out.number(thread.id);
  out.number(static_cast<int>(thread.state));
  out.number(thread.seconds);
  out.text(thread.function);
  out.text(thread.call);
  out.number(static_cast<int>(thread.wait_mode));
  write_ranks(out, thread.waits_for);
  write_ranks(out, thread.possibly_waits_for);
  out.number(thread.lock_window);
  out.text(thread.wait_reason);
  write_collective(out, thread.collective);
  out.number(thread.started_collectives.size());
  for (const StartedCollective& started : thread.started_collectives) write_started(out, started);
  out.number(thread.converted_send ? 1 : 0);
  out.number(thread.messages.size());
  for (const PendingMessage& message : thread.messages) write_message(out, message);
  out.number(thread.stack.size());
  for (const Frame& frame : thread.stack) write_frame(out, frame);
}
ThreadSnapshot read_thread(Reader& in) {
  ThreadSnapshot thread;
  thread.id = in.number<int>("threads.id");
  thread.state = in.enumeration("threads.state", RankState::Finalizing);
  thread.seconds = in.number<double>("threads.seconds");
  thread.function = in.text("threads.function");
  thread.call = in.text("threads.call");
  thread.wait_mode = in.enumeration("threads.wait_mode", WaitMode::Any);
  thread.waits_for = read_ranks(in, "threads.waits_for");
  thread.possibly_waits_for = read_ranks(in, "threads.possibly_waits_for");
  thread.lock_window = in.number<std::uint64_t>("threads.lock_window");
  thread.wait_reason = in.text("threads.wait_reason");
  thread.collective = read_collective(in);
  thread.started_collectives.resize(in.count("threads.started_collectives"));
  for (StartedCollective& started : thread.started_collectives) started = read_started(in);
  thread.converted_send = in.boolean("threads.converted_send");
  thread.messages.resize(in.count("threads.messages"));
  for (PendingMessage& message : thread.messages) message = read_message(in);
  thread.stack.resize(in.count("threads.stack"));
  for (Frame& frame : thread.stack) frame = read_frame(in);
  return thread;
}

}  // namespace

std::string serialize(const RankSnapshot& snapshot) {
  Writer out;
  out.number(snapshot.rank);
  out.text(snapshot.host);
  out.number(snapshot.pid);
  out.number(static_cast<int>(snapshot.state));
  out.number(snapshot.seconds);
  out.number(snapshot.activity);
  out.number(snapshot.exit_status);
  out.number(snapshot.threads.size());
  for (const ThreadSnapshot& thread : snapshot.threads) write_thread(out, thread);
  out.number(snapshot.collectives.size());
  for (const CollectiveCount& count : snapshot.collectives) {
    out.number(count.comm_id);
    out.number(count.entered);
    out.number(count.recent);
  }
  out.number(snapshot.locked_windows.size());
  for (const std::uint64_t window : snapshot.locked_windows) out.number(window);
  out.number(snapshot.held_tasks);
  out.number(snapshot.pending.size());
  for (const PendingMessage& message : snapshot.pending) write_message(out, message);
  out.number(snapshot.pending_unlisted ? 1 : 0);
  out.number(snapshot.tallies.size());
  for (const MessageTally& tally : snapshot.tallies) {
    out.number(tally.comm_id);
    out.number(tally.peer);
    write_tally(out, tally.sent);
    write_tally(out, tally.matched);
  }
  out.number(snapshot.tallies_unlisted ? 1 : 0);
  return out.take();
}

RankSnapshot deserialize(std::string_view bytes) {
  Reader in(bytes);
  RankSnapshot snapshot;
  snapshot.rank = in.number<int>("rank");
  snapshot.host = in.text("host");
  snapshot.pid = in.number<int>("pid");
  snapshot.state = in.enumeration("state", RankState::Finalizing);
  snapshot.seconds = in.number<double>("seconds");
  snapshot.activity = in.number<std::uint64_t>("activity");
  snapshot.exit_status = in.number<int>("exit_status");
  snapshot.threads.resize(in.count("threads"));
  for (ThreadSnapshot& thread : snapshot.threads) thread = read_thread(in);
  snapshot.collectives.resize(in.count("collectives"));
  for (CollectiveCount& count : snapshot.collectives) {
    count.comm_id = in.number<std::uint64_t>("collectives.comm_id");
    count.entered = in.number<std::uint64_t>("collectives.entered");
    count.recent = in.number<std::uint64_t>("collectives.recent");
  }
  snapshot.locked_windows.resize(in.count("locked_windows"));
  for (std::uint64_t& window : snapshot.locked_windows) window = in.number<std::uint64_t>("locked_windows");
  snapshot.held_tasks = in.number<std::uint32_t>("held_tasks");
  snapshot.pending.resize(in.count("pending"));
  for (PendingMessage& message : snapshot.pending) message = read_message(in);
  snapshot.pending_unlisted = in.boolean("pending_unlisted");
  snapshot.tallies.resize(in.count("tallies"));
  for (MessageTally& tally : snapshot.tallies) {
    tally.comm_id = in.number<std::uint64_t>("tallies.comm_id");
    tally.peer = in.number<int>("tallies.peer");
    tally.sent = read_tally(in);
    tally.matched = read_tally(in);
  }
  snapshot.tallies_unlisted = in.boolean("tallies_unlisted");
  in.expect_end();
  return snapshot;
}

namespace {

// "<length>:" and the bytes it counts, taken from the front of `rest`.
std::string_view take_sized(std::string_view& rest, const char* what) {
  std::size_t length = 0;
  const auto [stop, error] = std::from_chars(rest.data(), rest.data() + rest.size(), length);
  const std::size_t digits = static_cast<std::size_t>(stop - rest.data());
  if (error != std::errc() || digits >= rest.size() || *stop != ':')
    throw std::invalid_argument(fmt::format("a rank's gathered {} has no \"<length>:\" before it", what));
  if (length > rest.size() - digits - 1)
    throw std::invalid_argument(fmt::format("a rank's gathered {} is truncated", what));
  const std::string_view taken = rest.substr(digits + 1, length);
  rest.remove_prefix(digits + 1 + length);
  return taken;
}

}  // namespace

std::string encode_gathered(const RankSnapshot& snapshot, bool with_stacks, const std::vector<std::string>& frames) {
  const std::string state = serialize(snapshot);
  std::string part = std::to_string(state.size()) + ':' + state;
  if (!with_stacks) return part;
  part += std::to_string(frames.size()) + ';';
  for (const std::string& thread : frames) part += std::to_string(thread.size()) + ':' + thread;
  return part;
}

GatheredRank decode_gathered(std::string_view part, bool with_stacks) {
  std::string_view rest = part;
  GatheredRank gathered;
  gathered.snapshot = deserialize(take_sized(rest, "state"));
  if (with_stacks) {
    std::size_t threads = 0;
    const auto [stop, error] = std::from_chars(rest.data(), rest.data() + rest.size(), threads);
    if (error != std::errc() || stop == rest.data() + rest.size() || *stop != ';')
      throw std::invalid_argument("a rank's gathered stacks have no \"<threads>;\" before them");
    rest.remove_prefix(static_cast<std::size_t>(stop - rest.data()) + 1);
    if (threads > rest.size() / 2) throw std::invalid_argument("a rank's gathered stacks are truncated");
    for (std::size_t i = 0; i < threads; ++i) gathered.frames.emplace_back(take_sized(rest, "stack"));
  }
  if (!rest.empty())
    throw std::invalid_argument(fmt::format("a rank's gathered part has {} unexpected bytes at its end", rest.size()));
  return gathered;
}

const char* to_string(RankState state) {
  switch (state) {
    case RankState::Running: return "running";
    case RankState::Blocked: return "blocked";
    case RankState::Polling: return "polling";
    case RankState::Finalizing: return "finalizing";
  }
  return "unknown";
}

const char* to_string(WaitMode mode) {
  switch (mode) {
    case WaitMode::None: return "none";
    case WaitMode::All: return "all";
    case WaitMode::Any: return "any";
  }
  return "unknown";
}

}  // namespace mpisentry
