// The recording's text (recording/recording.hpp): what the writer writes reads
// back as the same events, and every bad line is named with what is wrong.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "recording/recording.hpp"

using namespace mpisentry::recording;

namespace {

const Header kHeader{1, 4, "./solver -n 10"};

std::string header() { return Writer::header_text(kHeader); }

// The message parse() throws for `text`, or "" when it reads it.
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const std::invalid_argument& bad) {
    return bad.what();
  }
  return "";
}

}  // namespace

TEST_CASE("recording: events written in runs read back in order", "[races]") {
  Writer writer;
  CHECK(writer.append({Kind::Poll, kNothing, {}}) == 0);
  writer.append({Kind::Poll, kNothing, {}});
  writer.append({Kind::Poll, kNothing, {}});
  writer.append({Kind::Poll, 2, {}});
  writer.append({Kind::Test, 1, {}});
  writer.append({Kind::Any, kUndefined, {}});
  writer.append({Kind::Any, 3, {}});
  writer.append({Kind::Some, 2, {0, 3}});
  writer.append({Kind::Some, kNothing, {}});
  const std::string text = header() + writer.take() + "end\n";
  CHECK(text == "mpisentry-record 2\nrank 1 of 4\ncommand ./solver -n 10\nI - *3\nI 2\nT +\nA u\nA 3\nS 0,3\nS -\nend\n");
  const Recording read = parse(text);
  CHECK(read.header == kHeader);
  CHECK(read.ending == Ending::Finalized);
  REQUIRE(read.runs.size() == 7);
  CHECK(read.runs[0].event == Event{Kind::Poll, kNothing, {}});
  CHECK(read.runs[0].count == 3);
  CHECK(read.runs[5].event == Event{Kind::Some, 2, {0, 3}});
  CHECK(read.runs[6].event == Event{Kind::Some, kNothing, {}});
}

TEST_CASE("recording: a receive's source is set in place, or by a later line once its line was taken", "[races]") {
  Writer writer;
  const std::uint64_t first = writer.append({Kind::Receive, kUnknown, {}});
  const std::uint64_t second = writer.append({Kind::Receive, kUnknown, {}});
  writer.fill(second, 2);  // still held: in place
  std::string text = header() + writer.take();
  writer.append({Kind::Test, kNothing, {}});
  writer.fill(first, 3);  // already taken: a "=" line
  text += writer.take();
  CHECK(text.substr(header().size()) == "R ?\nR 2\nT -\n= 0 3\n");
  const Recording read = parse(text);
  CHECK(read.ending == Ending::Cut);
  REQUIRE(read.runs.size() == 3);
  CHECK(read.runs[0].event.value == 3);
  CHECK(read.runs[1].event.value == 2);
}

TEST_CASE("recording: unknown receives never share a line, known equal ones do", "[races]") {
  Writer writer;
  writer.append({Kind::Receive, kUnknown, {}});
  writer.append({Kind::Receive, kUnknown, {}});
  writer.append({Kind::Receive, 1, {}});
  writer.append({Kind::Receive, 1, {}});
  CHECK(writer.events() == 4);
  CHECK(writer.take() == "R ?\nR ?\nR 1 *2\n");
}

TEST_CASE("recording: a receive filled while it is the last line joins the equal run before it", "[races]") {
  Writer writer;
  for (int i = 0; i < 3; ++i) writer.fill(writer.append({Kind::Receive, kUnknown, {}}), 2);
  writer.fill(writer.append({Kind::Receive, kUnknown, {}}), 1);
  const std::uint64_t pending = writer.append({Kind::Receive, kUnknown, {}});
  writer.fill(writer.append({Kind::Receive, kUnknown, {}}), 1);  // not last when filled: no merge
  writer.fill(pending, 1);
  CHECK(writer.take() == "R 2 *3\nR 1\nR 1\nR 1\n");
  const Recording read = parse(Writer::header_text(kHeader) + "R 2 *3\nR 1\nR 1\nR 1\n");
  CHECK(read.runs.size() == 4);
}

TEST_CASE("recording: the other senders a receive could have taken read back by event, as found", "[races]") {
  Writer writer;
  const std::uint64_t first = writer.append({Kind::Receive, kUnknown, {}});
  writer.fill(first, 2);
  writer.alternatives(first, {1, 3});
  writer.alternatives(first, {});  // none found: no line
  std::string text = header() + writer.take();
  writer.append({Kind::Receive, 1, {}});
  writer.alternatives(first, {4});  // a later sender's first message
  text += writer.take() + Writer::ending_text(Ending::Free);
  CHECK(text.substr(header().size()) == "R 2\n~ 0 1,3\nR 1\n~ 0 4\nfree\n");
  const Recording read = parse(text);
  CHECK(read.ending == Ending::Free);
  CHECK(read.alternatives == std::map<std::uint64_t, std::vector<int>>{{0, {1, 3, 4}}});
  CHECK(read.events() == std::vector<Event>{{Kind::Receive, 2, {}}, {Kind::Receive, 1, {}}});
  // A nonblocking probe's, found or not, too.
  const Recording polls =
      parse(header() + "I - *3\n~ 0 2,1\nI 2\n~ 3 1\nend\n");
  CHECK(polls.alternatives == std::map<std::uint64_t, std::vector<int>>{{0, {2, 1}}, {3, {1}}});
}

TEST_CASE("recording: each ending is its last line, and a run without one was cut", "[races]") {
  const auto [ending, line] = GENERATE(table<Ending, std::string>({
      {Ending::Cut, ""}, {Ending::Finalized, "end\n"}, {Ending::Free, "free\n"}, {Ending::Diverged, "diverged\n"}}));
  CHECK(Writer::ending_text(ending) == line);
  CHECK(parse(header() + "T +\n" + line).ending == ending);
}

TEST_CASE("recording: a line cut while it was written is dropped, as the run that wrote it was", "[races]") {
  const Recording read = parse(header() + "T +\nA 1\nS 0,");
  REQUIRE(read.runs.size() == 2);
  CHECK(read.ending == Ending::Cut);
}

TEST_CASE("recording: each bad line is named with its number, its text and what is wrong", "[races]") {
  const auto [text, expected] = GENERATE(table<std::string, std::string>({
      {"", "ends inside its 3 header lines"},
      {"mpisentry-record 2\nrank 0 of 2\n", "ends inside its 3 header lines"},
      {"a trace\n", "line 1 (\"a trace\"): not an mpisentry recording"},
      {"mpisentry-record 7\n", "line 1 (\"mpisentry-record 7\"): this mpisentry reads version 2 only"},
      {"mpisentry-record 2\nrank 4 of 4\ncommand x\n", "line 2 (\"rank 4 of 4\"): expected \"rank R of N\""},
      {"mpisentry-record 2\nrank 0 of 4\nprogram x\n", "line 3 (\"program x\"): expected \"command\""},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nX 3\n", "line 4 (\"X 3\"): unknown event letter (R, P, I, T, A, S, =, ~, end, free or diverged)"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nR\n", "line 4 (\"R\"): expected an event"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nR -\n", "line 4 (\"R -\"): - is not a rank"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nT 3\n", "line 4 (\"T 3\"): a T event is - or +"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nS 1,,2\n", "line 4 (\"S 1,,2\"): an S event is -, u or indices"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nT + *1\n", "line 4 (\"T + *1\"): \"*N\" repeats an event N >= 2"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nR ? *2\n", "line 4 (\"R ? *2\"): an unknown receive is never"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nR 1\n= 0 2\n",
       "line 5 (\"= 0 2\"): event 0 is not a receive or probe whose source was unknown"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nR ?\n= 1 2\n", "line 5 (\"= 1 2\"): expected \"= EVENT SOURCE\""},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nend\nT +\n", "line 5 (\"T +\"): a line after \"end\""},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nfree\nend\n", "line 5 (\"end\"): a line after \"free\""},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nT +\n~ 0 1\n",
       "line 5 (\"~ 0 1\"): event 0 is not a receive or probe from MPI_ANY_SOURCE"},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nR 1\n~ 1 2\n", "line 5 (\"~ 1 2\"): expected \"~ EVENT SOURCES\""},
      {"mpisentry-record 2\nrank 0 of 4\ncommand x\nR 1\n~ 0 2,\n", "line 5 (\"~ 0 2,\"): expected \"~ EVENT SOURCES\""},
  }));
  INFO(text);
  const std::string error = parse_error(text);
  CHECK(error.find(expected) != std::string::npos);
  CHECK_FALSE(error.empty());
}
