#include "recording/comm_log.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "recording/fields.hpp"

namespace mpisentry::recording {
namespace {

constexpr std::string_view kLogMagic = "mpisentry-log";

struct Verb {
  std::string_view name;
  OpKind kind;
};
constexpr std::array<Verb, 11> kVerbs{{{"send", OpKind::Send},
                                       {"recv", OpKind::Receive},
                                       {"probe", OpKind::Probe},
                                       {"sendrecv", OpKind::SendReceive},
                                       {"coll", OpKind::Collective},
                                       {"isend", OpKind::StartSend},
                                       {"irecv", OpKind::StartReceive},
                                       {"icoll", OpKind::StartCollective},
                                       {"wait", OpKind::WaitAll},
                                       {"waitany", OpKind::WaitAny},
                                       {"opaque", OpKind::Opaque}}};

std::string_view verb_of(OpKind kind) {
  return std::ranges::find(kVerbs, kind, &Verb::kind)->name;
}

std::string field_text(int value) { return value < 0 ? "*" : std::to_string(value); }

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t start = 0;
  while (start < line.size()) {
    std::size_t space = line.find(' ', start);
    if (space == std::string_view::npos) space = line.size();
    if (space > start) words.push_back(line.substr(start, space - start));
    start = space + 1;
  }
  return words;
}

// The fields after an op's verb (and a start's request number), by kind.
std::string_view fields_of(OpKind kind) {
  switch (kind) {
    case OpKind::Send:
    case OpKind::StartSend: return "FUNCTION COMM DEST TAG SITE";
    case OpKind::Receive:
    case OpKind::Probe:
    case OpKind::StartReceive: return "FUNCTION COMM SOURCE TAG SITE";
    case OpKind::SendReceive: return "FUNCTION COMM DEST TAG SOURCE TAG SITE";
    case OpKind::Collective:
    case OpKind::StartCollective: return "FUNCTION COMM SITE";
    case OpKind::WaitAll:
    case OpKind::WaitAny: return "FUNCTION SITE REQUESTS";
    case OpKind::Opaque: return "FUNCTION SITE";
  }
  return "";
}

bool is_start(OpKind kind) {
  return kind == OpKind::StartSend || kind == OpKind::StartReceive || kind == OpKind::StartCollective;
}

class LineReader {
 public:
  LineReader(std::size_t number, std::string_view line) : number_(number), line_(line) {}
  [[noreturn]] void fail(std::string_view problem) const { bad_line(number_, line_, problem); }
  int number(std::string_view word, int min, std::string_view what) const {
    int value = 0;
    if (!read_number(word, min, 1 << 30, value)) fail(fmt::format("{} \"{}\" is not a number of at least {}", what, word, min));
    return value;
  }
  int peer_or_any(std::string_view word, std::string_view what) const {
    return word == "*" ? kAnyPeer : number(word, 0, what);
  }
  std::uint64_t id(std::string_view word, std::string_view what) const {
    std::uint64_t value = 0;
    if (!read_number(word, std::uint64_t{1}, UINT64_MAX, value)) fail(fmt::format("{} \"{}\" is not a number of at least 1", what, word));
    return value;
  }

 private:
  std::size_t number_;
  std::string_view line_;
};

Op read_op(OpKind kind, const std::vector<std::string_view>& words, const LineReader& reader) {
  Op op;
  op.kind = kind;
  std::size_t at = 1;
  if (is_start(kind)) {
    if (words.size() < 2) reader.fail(fmt::format("expected \"{} REQUEST {}\"", words[0], fields_of(kind)));
    op.request = reader.id(words[at++], "the request");
  }
  const std::size_t fields = std::ranges::count(fields_of(kind), ' ') + 1;
  const bool waits = kind == OpKind::WaitAll || kind == OpKind::WaitAny;
  if (waits ? words.size() < at + fields - 1 : words.size() != at + fields)
    reader.fail(fmt::format("expected \"{}{} {}\"", words[0], is_start(kind) ? " REQUEST" : "", fields_of(kind)));
  op.function = words[at++];
  if (!op.function.starts_with("MPI_")) reader.fail("the function is not an MPI function (MPI_...)");
  op.mode = function_info(function_named(op.function)).mode;
  if (kind != OpKind::WaitAll && kind != OpKind::WaitAny && kind != OpKind::Opaque)
    op.comm = reader.id(words[at++], "the communicator");
  switch (kind) {
    case OpKind::Send:
    case OpKind::StartSend:
      op.peer = reader.number(words[at++], 0, "the destination");
      op.tag = reader.number(words[at++], 0, "the tag");
      break;
    case OpKind::Receive:
    case OpKind::Probe:
    case OpKind::StartReceive:
      op.peer = reader.peer_or_any(words[at++], "the source");
      op.tag = reader.peer_or_any(words[at++], "the tag");
      break;
    case OpKind::SendReceive:
      op.peer = reader.number(words[at++], 0, "the destination");
      op.tag = reader.number(words[at++], 0, "the send tag");
      op.source = reader.peer_or_any(words[at++], "the source");
      op.receive_tag = reader.peer_or_any(words[at++], "the receive tag");
      break;
    default: break;
  }
  op.site = reader.number(words[at++], 0, "the site");
  if (waits)
    for (; at < words.size(); ++at)
      op.requests.push_back(words[at] == "?" ? kUnknownRequest : reader.id(words[at], "a request"));
  return op;
}

}  // namespace

std::string log_header_text(int rank, int ranks, const std::string& command, const std::string& directory,
                            bool multiple_threads) {
  return fmt::format("{} {}\nrank {} of {}\ncommand {}\ndirectory {}\n{}", kLogMagic, kLogVersion, rank, ranks, command,
                     directory, multiple_threads ? "threads multiple\n" : "");
}

std::string comm_text(std::uint64_t id, const std::vector<int>& members, bool inter) {
  return inter ? fmt::format("comm {} inter\n", id) : fmt::format("comm {} {}\n", id, fmt::join(members, " "));
}

std::string site_text(int site, const std::string& place) { return fmt::format("site {} {}\n", site, place); }

std::string op_text(const Op& op) {
  std::string text{verb_of(op.kind)};
  if (is_start(op.kind)) text += fmt::format(" {}", op.request);
  text += ' ';
  text += op.function;
  if (op.kind != OpKind::WaitAll && op.kind != OpKind::WaitAny && op.kind != OpKind::Opaque)
    text += fmt::format(" {}", op.comm);
  switch (op.kind) {
    case OpKind::Send:
    case OpKind::StartSend:
    case OpKind::Receive:
    case OpKind::Probe:
    case OpKind::StartReceive: text += fmt::format(" {} {}", field_text(op.peer), field_text(op.tag)); break;
    case OpKind::SendReceive:
      text += fmt::format(" {} {} {} {}", op.peer, op.tag, field_text(op.source), field_text(op.receive_tag));
      break;
    default: break;
  }
  text += fmt::format(" {}", op.site);
  for (const std::uint64_t request : op.requests)
    text += request == kUnknownRequest ? std::string(" ?") : fmt::format(" {}", request);
  text += '\n';
  return text;
}

CommLog parse_log(std::string_view text) {
  CommLog log;
  text = whole_lines(text);
  std::size_t number = 0, start = 0;
  std::size_t header_lines = 3;  // 4 from version 2 on: the directory
  bool header_done = false;
  while (start < text.size()) {
    const std::size_t newline = text.find('\n', start);
    const std::string_view line = text.substr(start, newline - start);
    start = newline + 1;
    ++number;
    const LineReader reader(number, line);
    if (number == 1) {
      int version = 0;
      if (!line.starts_with(fmt::format("{} ", kLogMagic)))
        reader.fail("not an mpisentry communication log (it starts with \"mpisentry-log\")");
      if (!read_number(line.substr(kLogMagic.size() + 1), 1, 1 << 20, version) || version > kLogVersion)
        reader.fail(fmt::format("this mpisentry reads versions 1 to {} only", kLogVersion));
      if (version >= 2) header_lines = 4;
      continue;
    }
    if (number == 2) {
      const std::size_t of = line.find(" of ");
      if (!line.starts_with("rank ") || of == std::string_view::npos ||
          !read_number(line.substr(5, of - 5), 0, 1 << 30, log.rank) ||
          !read_number(line.substr(of + 4), 1, 1 << 30, log.ranks) || log.rank >= log.ranks)
        reader.fail("expected \"rank R of N\"");
      continue;
    }
    if (number == 3) {
      if (!line.starts_with("command ")) reader.fail("expected \"command\" and the command line");
      log.command = line.substr(8);
      header_done = header_lines == 3;
      continue;
    }
    if (number == 4 && header_lines == 4) {
      if (!line.starts_with("directory ")) reader.fail("expected \"directory\" and the rank's working directory");
      log.directory = line.substr(10);
      header_done = true;
      continue;
    }
    if (log.finalized) reader.fail("a line after \"end\"");
    if (line == "end") {
      log.finalized = true;
      continue;
    }
    if (line == "threads multiple" && number == header_lines + 1) {
      log.multiple_threads = true;
      continue;
    }
    const std::vector<std::string_view> words = words_of(line);
    if (words.empty()) reader.fail("an empty line");
    if (words[0] == "comm") {
      if (words.size() < 3) reader.fail("expected \"comm ID MEMBERS...\" or \"comm ID inter\"");
      const std::uint64_t id = reader.id(words[1], "the communicator");
      if (id == kWorldComm || id == kSelfComm) reader.fail("communicators 1 and 2 are MPI_COMM_WORLD and MPI_COMM_SELF");
      Communicator comm;
      comm.inter = words.size() == 3 && words[2] == "inter";
      if (!comm.inter)
        for (std::size_t i = 2; i < words.size(); ++i) {
          const int member = reader.number(words[i], 0, "a member");
          if (member >= log.ranks) reader.fail(fmt::format("member {} is not a rank of the {} ranks", member, log.ranks));
          comm.members.push_back(member);
        }
      if (!log.comms.emplace(id, std::move(comm)).second) reader.fail(fmt::format("communicator {} again", id));
      continue;
    }
    if (words[0] == "site") {
      if (words.size() < 3) reader.fail("expected \"site N PLACE\"");
      const int site = reader.number(words[1], 1, "the site");
      const std::size_t place = line.find(words[2], 5 + words[1].size());
      log.sites[site] = line.substr(place);
      continue;
    }
    const auto verb = std::ranges::find(kVerbs, words[0], &Verb::name);
    if (verb == kVerbs.end())
      reader.fail("unknown line (comm, site, send, recv, probe, sendrecv, coll, isend, irecv, icoll, wait, waitany, "
                  "opaque or end)");
    Op op = read_op(verb->kind, words, reader);
    op.line = number;
    if (op.comm != 0 && op.comm != kWorldComm && op.comm != kSelfComm && !log.comms.contains(op.comm))
      reader.fail(fmt::format("communicator {} is used before a comm line declares it", op.comm));
    log.ops.push_back(std::move(op));
  }
  if (!header_done)
    throw std::invalid_argument(fmt::format("the log ends inside its {} header lines (truncated)", header_lines));
  return log;
}

}  // namespace mpisentry::recording
