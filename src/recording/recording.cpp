#include "recording/recording.hpp"

#include "recording/fields.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mpisentry::recording {
namespace {

constexpr std::string_view kRecordMagic = "mpisentry-record";

std::string value_text(const Event& event) {
  switch (event.value) {
    case kNothing: return "-";
    case kUndefined: return "u";
    case kUnknown: return "?";
    default: break;
  }
  if (event.kind == Kind::Test) return "+";
  if (event.kind != Kind::Some) return std::to_string(event.value);
  std::string text;
  for (const int index : event.indices) {
    if (!text.empty()) text += ',';
    text += std::to_string(index);
  }
  return text;
}

// Numbers of [0, 2^30] separated by commas, all of `text`.
bool read_list(std::string_view text, std::vector<int>& out) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    int number = 0;
    if (!read_number(text.substr(start, comma - start), 0, 1 << 30, number)) return false;
    out.push_back(number);
    start = comma + 1;
  }
  return true;
}

constexpr Kind kKinds[] = {Kind::Receive, Kind::Probe, Kind::Poll, Kind::Test, Kind::Any, Kind::Some};

bool is_kind(char letter) {
  return std::ranges::any_of(kKinds, [&](Kind kind) { return static_cast<char>(kind) == letter; });
}

std::string kind_letters() {
  std::string letters;
  for (const Kind kind : kKinds) letters += fmt::format("{}, ", static_cast<char>(kind));
  return letters;
}

// The value of an event line of `kind` ("3", "-", "0,3"...).
Event read_event(Kind kind, std::string_view value, std::size_t line, std::string_view text) {
  Event event{kind, kNothing, {}};
  const bool nothing_allowed = kind != Kind::Receive && kind != Kind::Probe;
  if (value == "-" && nothing_allowed) return event;
  if (value == "u" && (kind == Kind::Any || kind == Kind::Some)) {
    event.value = kUndefined;
    return event;
  }
  if (value == "?" && (kind == Kind::Receive || kind == Kind::Probe)) {
    event.value = kUnknown;
    return event;
  }
  if (kind == Kind::Test) {
    if (value != "+") bad_line(line, text, "a T event is - or +");
    event.value = 1;
    return event;
  }
  if (kind == Kind::Some) {
    if (!read_list(value, event.indices)) bad_line(line, text, "an S event is -, u or indices separated by commas");
    event.value = static_cast<int>(event.indices.size());
    return event;
  }
  if (!read_number(value, 0, 1 << 30, event.value))
    bad_line(line, text, fmt::format("{} is not a {}", value, kind == Kind::Any ? "request index" : "rank"));
  return event;
}

constexpr Ending kEndings[] = {Ending::Finalized, Ending::Free, Ending::Diverged};

std::string_view text_of(Ending ending) {
  switch (ending) {
    case Ending::Cut: return "";
    case Ending::Finalized: return "end";
    case Ending::Free: return "free";
    case Ending::Diverged: return "diverged";
  }
  return "";
}

std::optional<Ending> ending_of(std::string_view line) {
  for (const Ending ending : kEndings)
    if (line == text_of(ending)) return ending;
  return std::nullopt;
}

}  // namespace

std::string_view calls_of(Kind kind) {
  switch (kind) {
    case Kind::Receive: return "a receive from MPI_ANY_SOURCE";
    case Kind::Probe: return "an MPI_Probe or MPI_Mprobe from MPI_ANY_SOURCE";
    case Kind::Poll: return "an MPI_Iprobe or MPI_Improbe";
    case Kind::Test: return "an MPI_Test, MPI_Testall or MPI_Request_get_status";
    case Kind::Any: return "an MPI_Waitany or MPI_Testany";
    case Kind::Some: return "an MPI_Waitsome or MPI_Testsome";
  }
  return "?";
}

std::string event_text(const Event& event) {
  return fmt::format("{} {}", static_cast<char>(event.kind), value_text(event));
}

std::string Writer::header_text(const Header& header) {
  return fmt::format("{} {}\nrank {} of {}\ncommand {}\n", kRecordMagic, kFormatVersion, header.rank, header.ranks,
                     header.command);
}

std::string Writer::ending_text(Ending ending) {
  return ending == Ending::Cut ? std::string() : fmt::format("{}\n", text_of(ending));
}

std::uint64_t Writer::append(const Event& event) {
  const std::uint64_t number = events_++;
  if (!lines_.empty() && event.value != kUnknown && lines_.back().run.event == event) {
    ++lines_.back().run.count;
    return number;
  }
  lines_.push_back({{event, 1}, number});
  return number;
}

void Writer::fill(std::uint64_t number, int source) {
  const auto line = std::partition_point(lines_.begin(), lines_.end(),
                                         [&](const Line& l) { return l.first + l.run.count <= number; });
  if (line != lines_.end() && line->first == number) {
    line->run.event.value = source;
    // A blocking receive is filled while it is the last line: it may join the run before it.
    if (line + 1 == lines_.end() && line != lines_.begin() && (line - 1)->run.event == line->run.event) {
      ++(line - 1)->run.count;
      lines_.pop_back();
    }
    return;
  }
  fills_.push_back({number, source});
}

void Writer::alternatives(std::uint64_t number, const std::vector<int>& sources) {
  if (!sources.empty()) alternatives_.emplace_back(number, sources);
}

std::string Writer::take() {
  std::string text;
  for (const Line& line : lines_) {
    text += event_text(line.run.event);
    if (line.run.count > 1) text += fmt::format(" *{}", line.run.count);
    text += '\n';
  }
  for (const Fill& fill : fills_) text += fmt::format("= {} {}\n", fill.number, fill.source);
  for (const auto& [number, sources] : alternatives_) text += fmt::format("~ {} {}\n", number, fmt::join(sources, ","));
  lines_.clear();
  fills_.clear();
  alternatives_.clear();
  return text;
}

std::vector<Event> Recording::events() const {
  std::vector<Event> all;
  for (const Run& run : runs) all.insert(all.end(), run.count, run.event);
  return all;
}

std::uint64_t Recording::event_count() const {
  std::uint64_t count = 0;
  for (const Run& run : runs) count += run.count;
  return count;
}

Recording parse(std::string_view text) {
  Recording recording;
  text = whole_lines(text);
  std::vector<std::uint64_t> firsts;  // each run's first event number
  std::uint64_t events = 0;
  const auto run_of = [&](std::uint64_t number) -> Event& {
    return recording.runs[std::upper_bound(firsts.begin(), firsts.end(), number) - firsts.begin() - 1].event;
  };
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t newline = text.find('\n', start);
    const std::string_view line = text.substr(start, newline - start);
    start = newline + 1;
    ++line_number;
    if (line_number == 1) {
      int version = 0;
      if (line.substr(0, kRecordMagic.size() + 1) != fmt::format("{} ", kRecordMagic))
        bad_line(1, line, "not an mpisentry recording (it starts with \"mpisentry-record\")");
      if (!read_number(line.substr(kRecordMagic.size() + 1), 1, 1 << 20, version) || version != kFormatVersion)
        bad_line(1, line, fmt::format("this mpisentry reads version {} only", kFormatVersion));
      continue;
    }
    if (line_number == 2) {
      const std::size_t of = line.find(" of ");
      if (line.substr(0, 5) != "rank " || of == std::string_view::npos ||
          !read_number(line.substr(5, of - 5), 0, 1 << 30, recording.header.rank) ||
          !read_number(line.substr(of + 4), 1, 1 << 30, recording.header.ranks) ||
          recording.header.rank >= recording.header.ranks)
        bad_line(2, line, "expected \"rank R of N\"");
      continue;
    }
    if (line_number == 3) {
      if (line.substr(0, 8) != "command ") bad_line(3, line, "expected \"command\" and the command line");
      recording.header.command = line.substr(8);
      continue;
    }
    if (recording.ending != Ending::Cut)
      bad_line(line_number, line, fmt::format("a line after \"{}\"", text_of(recording.ending)));
    if (const auto ending = ending_of(line)) {
      recording.ending = *ending;
      continue;
    }
    if (line.size() < 3 || line[1] != ' ') bad_line(line_number, line, "expected an event: a letter, a space, a value");
    if (line[0] == '~') {
      const std::string_view rest = line.substr(2);
      const std::size_t space = rest.find(' ');
      std::uint64_t number = 0;
      std::vector<int> sources;
      if (space == std::string_view::npos || !read_number(rest.substr(0, space), std::uint64_t{0}, events, number) ||
          number == events || !read_list(rest.substr(space + 1), sources))
        bad_line(line_number, line, "expected \"~ EVENT SOURCES\" about an event before it");
      if (const Kind kind = run_of(number).kind; kind != Kind::Receive && kind != Kind::Probe && kind != Kind::Poll)
        bad_line(line_number, line, fmt::format("event {} is not a receive or probe from MPI_ANY_SOURCE", number));
      std::vector<int>& known = recording.alternatives[number];
      known.insert(known.end(), sources.begin(), sources.end());
      continue;
    }
    if (line[0] == '=') {
      const std::string_view rest = line.substr(2);
      const std::size_t space = rest.find(' ');
      std::uint64_t number = 0;
      int source = 0;
      if (space == std::string_view::npos || !read_number(rest.substr(0, space), std::uint64_t{0}, events, number) ||
          number == events || !read_number(rest.substr(space + 1), 0, 1 << 30, source))
        bad_line(line_number, line, "expected \"= EVENT SOURCE\" about an event before it");
      Event& target = run_of(number);
      if (target.value != kUnknown)
        bad_line(line_number, line, fmt::format("event {} is not a receive or probe whose source was unknown", number));
      target.value = source;
      continue;
    }
    if (!is_kind(line[0]))
      bad_line(line_number, line, fmt::format("unknown event letter ({}=, ~, end, free or diverged)", kind_letters()));
    std::string_view value = line.substr(2);
    std::uint64_t count = 1;
    if (const std::size_t star = value.find(" *"); star != std::string_view::npos) {
      if (!read_number(value.substr(star + 2), std::uint64_t{2}, std::uint64_t{1} << 62, count))
        bad_line(line_number, line, "\"*N\" repeats an event N >= 2 times");
      value = value.substr(0, star);
    }
    const Event event = read_event(static_cast<Kind>(line[0]), value, line_number, line);
    if (count > 1 && event.value == kUnknown) bad_line(line_number, line, "an unknown receive is never repeated");
    firsts.push_back(events);
    recording.runs.push_back({event, count});
    events += count;
  }
  if (line_number < 3) throw std::invalid_argument("the recording ends inside its 3 header lines");
  return recording;
}

}  // namespace mpisentry::recording
