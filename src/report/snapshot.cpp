// The wire form of a RankSnapshot: a versioned header, then every field in
// declaration order. Numbers are decimal text ended by ';' and strings are
// "<length>:<bytes>", so any byte (newline, NUL, invalid UTF-8) survives and
// the reader never has to guess where a field ends.
#include "report/snapshot.hpp"

#include <fmt/format.h>

#include <charconv>
#include <iterator>
#include <stdexcept>

namespace mpisentry {
namespace {

constexpr std::string_view kHeader = "mpisentry-snapshot/2;";

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

 private:
  std::size_t remaining() const { return bytes_.size() - pos_; }

  [[noreturn]] void truncated(const char* field) const {
    throw std::invalid_argument(fmt::format(
        "rank snapshot is truncated: field \"{}\" at byte {} runs past the end ({} bytes given)", field, pos_,
        bytes_.size()));
  }
  [[noreturn]] void fail(const char* field, const std::string& problem) const {
    throw std::invalid_argument(
        fmt::format("rank snapshot is malformed: field \"{}\" at byte {} {}", field, pos_, problem));
  }

  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string serialize(const RankSnapshot& snapshot) {
  Writer out;
  out.number(snapshot.rank);
  out.text(snapshot.host);
  out.number(snapshot.pid);
  out.number(static_cast<int>(snapshot.state));
  out.number(snapshot.seconds);
  out.text(snapshot.function);
  out.text(snapshot.call);
  out.number(static_cast<int>(snapshot.wait_mode));
  out.number(snapshot.waits_for.size());
  for (const int rank : snapshot.waits_for) out.number(rank);
  out.text(snapshot.wait_reason);
  out.number(snapshot.collective_key);
  out.number(snapshot.converted_send ? 1 : 0);
  out.number(snapshot.messages.size());
  for (const PendingMessage& message : snapshot.messages) {
    out.number(message.send ? 1 : 0);
    out.number(message.peer);
    out.number(message.tag);
    out.number(message.comm_key);
  }
  out.number(snapshot.stack.size());
  for (const Frame& frame : snapshot.stack) {
    out.text(frame.function);
    out.text(frame.file);
    out.number(frame.line);
    out.text(frame.module);
  }
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
  snapshot.function = in.text("function");
  snapshot.call = in.text("call");
  snapshot.wait_mode = in.enumeration("wait_mode", WaitMode::Any);
  snapshot.waits_for.resize(in.count("waits_for"));
  for (int& rank : snapshot.waits_for) rank = in.number<int>("waits_for");
  snapshot.wait_reason = in.text("wait_reason");
  snapshot.collective_key = in.number<std::uint64_t>("collective_key");
  snapshot.converted_send = in.boolean("converted_send");
  snapshot.messages.resize(in.count("messages"));
  for (PendingMessage& message : snapshot.messages) {
    message.send = in.boolean("messages.send");
    message.peer = in.number<int>("messages.peer");
    message.tag = in.number<int>("messages.tag");
    message.comm_key = in.number<std::uint64_t>("messages.comm_key");
  }
  snapshot.stack.resize(in.count("stack"));
  for (Frame& frame : snapshot.stack) {
    frame.function = in.text("stack.function");
    frame.file = in.text("stack.file");
    frame.line = in.number<int>("stack.line");
    frame.module = in.text("stack.module");
  }
  in.expect_end();
  return snapshot;
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
