#include "launcher/command_line.hpp"

#include <catch2/catch.hpp>

using namespace mpisentry::launcher;

namespace {

using Strings = std::vector<std::string>;

// A command of every kind of option: --out FILE, --fast [on|off], --tries [N], --dry, -h.
const std::vector<OptionSpec>& table() {
  static const std::vector<OptionSpec> options = [] {
    OptionSpec fast = flag_option("--fast", "go fast");
    fast.value = ValueRule::Switch;
    OptionSpec tries = flag_option("--tries", "try N times");
    tries.value = ValueRule::Number;
    tries.absent = "3";
    return std::vector<OptionSpec>{value_option("--out", "FILE", "a file name", "write FILE", "-o"), fast, tries,
                                   flag_option("--dry", "do nothing"), help_option()};
  }();
  return options;
}

CommandLine parse(std::vector<std::string> words, Operands operands = Operands::AmongOptions) {
  return parse_command_line(table(), words, operands, "the file", "cmd: ");
}

// "--name=value" for each option given, in order.
Strings given(const CommandLine& line) {
  Strings texts;
  for (const GivenOption& option : line.options) texts.push_back(option.option->name + '=' + option.value);
  return texts;
}

Strings messages(const CommandLine& line) {
  Strings texts;
  for (const auto& problem : line.errors) texts.push_back(problem.str());
  return texts;
}

}  // namespace

TEST_CASE("command line: values as the next word or after '=', aliases, in order", "[launcher]") {
  const CommandLine line = parse({"-o", "a.txt", "x", "--out=b.txt", "--dry", "y"});
  CHECK(messages(line).empty());
  CHECK(given(line) == Strings{"--out=a.txt", "--out=b.txt", "--dry="});
  CHECK(line.options[0].written == "-o");
  CHECK(line.operands == Strings{"x", "y"});
}

TEST_CASE("command line: a switch takes the next word only when it is on or off", "[launcher]") {
  CHECK(given(parse({"--fast", "off", "x"})) == Strings{"--fast=off"});
  CHECK(given(parse({"--fast", "x"})) == Strings{"--fast=on"});
  CHECK(parse({"--fast", "x"}).operands == Strings{"x"});
  CHECK(given(parse({"--fast"})) == Strings{"--fast=on"});
}

TEST_CASE("command line: a number's value is the next word when it is a whole number", "[launcher]") {
  CHECK(given(parse({"--tries", "0"})) == Strings{"--tries=0"});
  CHECK(given(parse({"--tries", "-1"})) == Strings{"--tries=-1"});  // refused later, by range
  CHECK(given(parse({"--tries", "x"})) == Strings{"--tries=3"});
  CHECK(given(parse({"--tries", "--dry"})) == Strings{"--tries=3", "--dry="});
}

TEST_CASE("command line: the first operand ends the options when they must come first", "[launcher]") {
  const CommandLine line = parse({"--dry", "prog", "--out", "--dry"}, Operands::EndOptions);
  CHECK(messages(line).empty());
  CHECK(given(line) == Strings{"--dry="});
  CHECK(line.operands == Strings{"prog", "--out", "--dry"});
  CHECK_FALSE(line.double_dash);
}

TEST_CASE("command line: words after -- are operands", "[launcher]") {
  const CommandLine line = parse({"--dry", "--", "--out", "x"});
  CHECK(line.double_dash);
  CHECK(line.operands == Strings{"--out", "x"});
  CHECK(given(line) == Strings{"--dry="});
}

TEST_CASE("command line: bad words are named, each, and the rest is read", "[launcher]") {
  CHECK(messages(parse({"--ot", "x"})) == Strings{"cmd: --ot: unknown option (did you mean --out?)"});
  CHECK(messages(parse({"--zzzzzz"})) == Strings{"cmd: --zzzzzz: unknown option"});
  CHECK(messages(parse({"--out"})) == Strings{"cmd: --out: needs a file name"});
  CHECK(messages(parse({"--dry=yes"})) == Strings{"cmd: --dry: takes no value"});
  CHECK(messages(parse({"x", ""})) == Strings{"cmd: argument 2: is empty where an option or the file should be"});
  const CommandLine both = parse({"--bad", "--worse", "--dry"});
  CHECK(messages(both).size() == 2);
  CHECK(given(both) == Strings{"--dry="});
}

TEST_CASE("command line: the help rows show aliases and value names, and leave out options without help", "[launcher]") {
  std::vector<OptionSpec> options = table();
  options.push_back(value_option("-n", "N", "a number", ""));
  const auto rows = help_rows(options);
  REQUIRE(rows.size() == table().size());
  CHECK(rows[0].option == "-o, --out FILE");
  CHECK(rows[4].option == "-h, --help");
  CHECK(options_text(std::span(rows).first(1), 20) == "  -o, --out FILE    write FILE\n");
}
