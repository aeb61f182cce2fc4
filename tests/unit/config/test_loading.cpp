#include "config/checks.hpp"
#include "config/keys.hpp"
#include "config/loading.hpp"
#include "config/settings.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>
#include <sstream>

using namespace mpisentry::config;
using namespace std::chrono_literals;

namespace {

using Env = std::map<std::string, std::string>;

EnvLookup lookup_in(const Env& env) {
  return [&env](const char* name) -> const char* {
    const auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  };
}

Duration parsed(std::string_view text) {
  Duration out{-1};
  std::string error;
  INFO("parsing " << text);
  REQUIRE(parse_duration(text, out, error));
  CHECK(error.empty());
  return out;
}

std::string duration_error(std::string_view text) {
  Duration out = 7s;
  std::string error;
  INFO("parsing " << text);
  REQUIRE_FALSE(parse_duration(text, out, error));
  CHECK(out == 7s);  // untouched on error
  return error;
}

LoadResult from_text(std::string_view text) {
  LoadResult result;
  apply_text(text, "job.conf", result);
  return result;
}

std::string all(const std::vector<Problem>& problems) {
  std::string joined;
  for (const Problem& problem : problems) joined += problem.str() + '\n';
  return joined;
}

// A file in a fresh temporary directory, removed with it.
class TempFile {
 public:
  explicit TempFile(std::string_view text) {
    dir_ = std::filesystem::temp_directory_path() / ("mpisentry_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    std::ofstream(path()) << text;
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "job.conf").string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
};

std::string shipped_config() {
  const auto path = std::filesystem::path(__FILE__).parent_path() / "../../../config/mpisentry.conf";
  std::ifstream file(path);
  INFO(path);
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("durations: every unit letter", "[config][duration]") {
  CHECK(parsed("3c") == 3us);
  CHECK(parsed("3l") == 3ms);
  CHECK(parsed("3s") == 3s);
  CHECK(parsed("3m") == 3min);
  CHECK(parsed("3h") == 3h);
  CHECK(parsed("3d") == 72h);
  CHECK(parsed("3w") == 504h);
}

TEST_CASE("durations: sums, bare numbers, fractions, case", "[config][duration]") {
  CHECK(parsed("1m+30s") == 90s);
  CHECK(parsed("1h + 1m + 1s") == 3661s);
  CHECK(parsed("2.5") == 2500ms);
  CHECK(parsed("10") == 10s);
  CHECK(parsed("0.5l") == 500us);
  CHECK(parsed(".25s") == 250ms);
  CHECK(parsed("1M") == 1min);
  CHECK(parsed("0") == 0us);
}

TEST_CASE("durations: errors say what is wrong", "[config][duration]") {
  CHECK(duration_error("5x") == "\"5x\": unknown time unit 'x' (use c, l, s, m, h, d or w)");
  CHECK(duration_error("5ms") == "\"5ms\": unknown time unit 'ms' (use c, l, s, m, h, d or w)");
  CHECK(duration_error("-5s") == "\"-5s\": negative durations are not allowed");
  CHECK(duration_error("") == "empty time; give e.g. 10s or 1m+30s");
  CHECK(duration_error("1m++30s") == "\"1m++30s\": empty term before or after '+'");
  CHECK(duration_error("1m+") == "\"1m+\": empty term before or after '+'");
  CHECK(duration_error("soon") == "\"soon\": not a number with a time unit, e.g. 10s or 1m+30s");
  CHECK(duration_error("1.2.3s") == "\"1.2.3s\": not a number with a time unit, e.g. 10s or 1m+30s");
  CHECK(duration_error("inf") == "\"inf\": not a number with a time unit, e.g. 10s or 1m+30s");
  CHECK(duration_error("1e3s") == "\"1e3s\": unknown time unit 'e3s' (use c, l, s, m, h, d or w)");
  CHECK(duration_error("99999999999w") == "\"99999999999w\": too long (the limit is about 292000 years)");
  const std::string huge(5000, '9');
  CHECK(duration_error(huge + "c") == '"' + huge + "c\": too long (the limit is about 292000 years)");
  CHECK(duration_error("10000000w+10000000w") == "\"10000000w+10000000w\": too long (the limit is about 292000 years)");
}

TEST_CASE("durations: format is the shortest exact text and reads back", "[config][duration]") {
  CHECK(format_duration(1min) == "1m");
  CHECK(format_duration(90s) == "90s");
  CHECK(format_duration(100ms) == "100l");
  CHECK(format_duration(1500ms) == "1500l");
  CHECK(format_duration(0us) == "0s");
  CHECK(format_duration(168h + 1us) == "1w+1c");
  for (const Duration d : std::initializer_list<Duration>{1us, 999us, 1001ms, 61s, 25h, 8760h, 168h + 1us, Duration::max()}) {
    INFO(format_duration(d));
    CHECK(parsed(format_duration(d)) == d);
  }
}

TEST_CASE("config text: keys and values are case-insensitive, paths are not", "[config][file]") {
  const auto result = from_text("deadlock-timeout 10S\nVerbose 3\nreport-file /Tmp/Report.TXT\n");
  REQUIRE(all(result.errors).empty());
  CHECK(result.settings.deadlock_timeout == Timeout{false, 10s});
  CHECK(result.settings.verbose == 3);
  CHECK(result.settings.report_file == "/Tmp/Report.TXT");
  CHECK(result.origin.at("VERBOSE") == "job.conf:2");
}

TEST_CASE("config text: comments, blank lines and quotes", "[config][file]") {
  const auto result = from_text(
      "# a comment\n"
      "\n"
      "   # an indented comment\n"
      "DEADLOCK-TIMEOUT 20s   # trailing comment\n"
      "REPORT-JSON \"/tmp/with space/r.json\"\n"
      "REPORT-DOT a#b\n"
      "REPORT-FILE \"\"\r\n");
  REQUIRE(all(result.errors).empty());
  CHECK(result.notices.empty());
  CHECK(result.settings.deadlock_timeout == Timeout{false, 20s});
  CHECK(result.settings.report_json == "/tmp/with space/r.json");
  CHECK(result.settings.report_dot == "a#b");
  CHECK(result.settings.report_file.empty());
}

TEST_CASE("config text: bad lines name file and line", "[config][file]") {
  const auto result = from_text(
      "DEADLOCK-TIMEOUT 5x\n"
      "VERBOSE 9\n"
      "VERBOSE loud\n"
      "REPORT-FILE \"/tmp/unterminated\n"
      "REPORT-FILE \"a\"b\n"
      "REPORT-JSON /a b\n"
      "REPORT-DOT\n"
      "DEADLOK-TIMEOUT 1m\n"
      "CHECK GLOBAL:DEADLOCK:HARD maybe\n"
      "CHECK GLOBAL:DEADLOK:*\n"
      "CHECK\n"
      "DEADLOCK-TIMEOUT 10 seconds\n");
  const std::vector<std::string> expected = {
      "job.conf:1: DEADLOCK-TIMEOUT \"5x\": unknown time unit 'x' (use c, l, s, m, h, d or w); the key takes a time or auto",
      "job.conf:2: VERBOSE \"9\": out of range (0 to 5)",
      "job.conf:3: VERBOSE \"loud\": not a whole number",
      "job.conf:4: missing closing quote",
      "job.conf:5: text right after a closing quote; separate it with a space",
      "job.conf:6: REPORT-JSON takes one value, got 2: \"/a b\"; quote a value that contains spaces",
      "job.conf:7: REPORT-DOT needs a value",
      "job.conf:8: unknown key \"DEADLOK-TIMEOUT\" (did you mean DEADLOCK-TIMEOUT?)",
      "job.conf:9: CHECK GLOBAL:DEADLOCK:HARD: \"maybe\" is not ON or OFF (use on, true, yes, 1 or off, false, no, 0)",
      "job.conf:10: CHECK \"GLOBAL:DEADLOK:*\" matches no check",
      "job.conf:11: CHECK takes a pattern and ON or OFF, e.g. CHECK GLOBAL:DEADLOCK:POTENTIAL ON",
      "job.conf:12: DEADLOCK-TIMEOUT takes one value, got 2: \"10 seconds\"; quote a value that contains spaces",
  };
  REQUIRE(result.errors.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(result.errors[i].str() == expected[i]);
  CHECK(result.settings == Settings{});  // bad values leave the defaults
}

TEST_CASE("config text: a far-off unknown key gets no suggestion", "[config][file]") {
  const auto result = from_text("COLOUR blue\n");
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].str() == "job.conf:1: unknown key \"COLOUR\"");
}

TEST_CASE("config text: ITC keys we do not implement get a notice", "[config][file]") {
  const auto result = from_text("CHECK-TIMEOUT 5s\npctrace off\nCHECK-TRACING\n");
  CHECK(result.errors.empty());
  REQUIRE(result.notices.size() == 3);
  CHECK(result.notices[0].str() == "job.conf:1: CHECK-TIMEOUT is an ITC setting that mpisentry accepts but does not implement");
  CHECK(result.notices[1].str() == "job.conf:2: PCTRACE is an ITC setting that mpisentry accepts but does not implement");
  CHECK(result.notices[2].where == "job.conf:3");
  CHECK(result.settings == Settings{});
}

TEST_CASE("check patterns: '*' stays within a level, '**' crosses levels", "[config][check]") {
  CHECK(matches_check_pattern("GLOBAL:DEADLOCK:*", "GLOBAL:DEADLOCK:HARD"));
  CHECK(matches_check_pattern("global:deadlock:hard", "GLOBAL:DEADLOCK:HARD"));
  CHECK(matches_check_pattern("GLOBAL:*:HARD", "GLOBAL:DEADLOCK:HARD"));
  CHECK(matches_check_pattern("*:DEADLOCK:*", "GLOBAL:DEADLOCK:NO_PROGRESS"));
  CHECK(matches_check_pattern("GLOBAL:DEADLOCK:NO_*", "GLOBAL:DEADLOCK:NO_PROGRESS"));
  CHECK_FALSE(matches_check_pattern("GLOBAL:*", "GLOBAL:DEADLOCK:HARD"));
  CHECK_FALSE(matches_check_pattern("*", "GLOBAL:DEADLOCK:HARD"));
  CHECK_FALSE(matches_check_pattern("GLOBAL:DEADLOCK", "GLOBAL:DEADLOCK:HARD"));
  CHECK(matches_check_pattern("GLOBAL:**", "GLOBAL:DEADLOCK:HARD"));
  CHECK(matches_check_pattern("**", "LOCAL:MEMORY:OVERLAP"));
  CHECK(matches_check_pattern("**:HARD", "GLOBAL:DEADLOCK:HARD"));
  CHECK_FALSE(matches_check_pattern("LOCAL:**", "GLOBAL:DEADLOCK:HARD"));
  CHECK_FALSE(matches_check_pattern("*:HARD", "GLOBAL:DEADLOCK:HARD"));
}

TEST_CASE("check names: 27 from ITC, the implemented ones among them, and mpisentry's own", "[config][check]") {
  CHECK(itc_checks().size() == 27);
  const std::vector<std::string_view> own = {"GLOBAL:DEADLOCK:UNSAFE", "GLOBAL:DEADLOCK:OUTSIDE_MPI", "GLOBAL:MSG:RACE",
                                             "GLOBAL:RMA:CONFLICT",    "LOCAL:COMM:NOT_FREED",   "LOCAL:GROUP:NOT_FREED",      "LOCAL:OP:NOT_FREED",
                                             "LOCAL:WIN:NOT_FREED",    "LOCAL:FILE:NOT_FREED",       "LOCAL:INFO:NOT_FREED",
                                             "GLOBAL:RANK:LOST",       "LOCAL:PARTITION:WILDCARD",   "LOCAL:PARTITION:INVALID",
                                             "LOCAL:PARTITION:INACTIVE", "LOCAL:PARTITION:DOUBLE_READY",
                                             "LOCAL:ARGUMENT:RANK",      "LOCAL:ARGUMENT:TAG",
                                             "LOCAL:ARGUMENT:COUNT",     "LOCAL:ARGUMENT:NULL_HANDLE",
                                             "LOCAL:ARGUMENT:NULL_BUFFER", "LOCAL:ARGUMENT:IN_PLACE",
                                             "LOCAL:ARGUMENT:UNCOMMITTED",
                                             "LOCAL:ARGUMENT:ALIASED",
                                             "LOCAL:THREAD:NOT_MAIN",    "LOCAL:THREAD:CONCURRENT",
                                             "LOCAL:THREAD:CONCURRENT_REQUEST"};
  for (const CheckInfo& check : switchable_checks()) {
    INFO(check.name);
    const bool from_itc = std::ranges::find(itc_checks(), check.name) != itc_checks().end();
    CHECK(from_itc != (std::ranges::find(own, check.name) != own.end()));
  }
}

TEST_CASE("CHECK lines apply in order", "[config][check]") {
  SECTION("everything off, then GLOBAL back on") {
    const auto result = from_text("CHECK ** OFF\nCHECK GLOBAL:** ON\n");
    REQUIRE(result.errors.empty());
    CHECK(result.settings.check_hard);
    CHECK(result.settings.check_potential);
    CHECK(result.settings.check_no_progress);
    CHECK(result.notices.empty());  // ** and GLOBAL:** include implemented checks
  }
  SECTION("everything on, then the deadlock level off") {
    const auto result = from_text("CHECK ** ON\nCHECK GLOBAL:DEADLOCK:* OFF\n");
    CHECK_FALSE(result.settings.check_hard);
    CHECK_FALSE(result.settings.check_potential);
    CHECK_FALSE(result.settings.check_no_progress);
  }
  SECTION("one check; a pattern alone and other boolean words") {
    const auto result = from_text("CHECK GLOBAL:DEADLOCK:POTENTIAL\nCHECK global:deadlock:hard no\nCHECK *:*:NO_PROGRESS 0\n");
    REQUIRE(result.errors.empty());
    CHECK(result.settings.check_potential);
    CHECK_FALSE(result.settings.check_hard);
    CHECK_FALSE(result.settings.check_no_progress);
    CHECK(result.origin.at("GLOBAL:DEADLOCK:POTENTIAL") == "job.conf:1");
  }
}

TEST_CASE("CHECK of checks we do not implement is a notice", "[config][check]") {
  const auto result = from_text("CHECK LOCAL:BUFFER:* OFF\n");
  CHECK(result.errors.empty());
  REQUIRE(result.notices.size() == 1);
  CHECK(result.notices[0].str() == "job.conf:1: CHECK LOCAL:BUFFER:* is accepted but not implemented by mpisentry");
}

TEST_CASE("CHECK with a misspelt check name suggests the right one", "[config][check]") {
  const auto result = from_text("CHECK GLOBAL:DEADLOCK:POTENTAL ON\n");
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].str() ==
        "job.conf:1: CHECK \"GLOBAL:DEADLOCK:POTENTAL\" matches no check (did you mean GLOBAL:DEADLOCK:POTENTIAL?)");
}

TEST_CASE("files: a missing file is an error naming it", "[config][file]") {
  LoadResult result;
  apply_file("/nonexistent/job.conf", result);
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].str() == "/nonexistent/job.conf: cannot read config file: No such file or directory");
}

TEST_CASE("files: a directory is an error naming it", "[config][file]") {
  const TempFile file("");
  const std::string dir = std::filesystem::path(file.path()).parent_path().string();
  LoadResult result;
  apply_file(dir, result);
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].str() == dir + ": cannot read config file: Is a directory");
}

TEST_CASE("load: file, VT_ variables, MPISENTRY_ variables, each overriding the last", "[config][load]") {
  const TempFile file("DEADLOCK-TIMEOUT 10s\nDEADLOCK-WARNING 2m\nVERBOSE 2\nREPORT-FILE from-file.txt\n");
  const Env env = {
      {"MPISENTRY_CONFIG", file.path()},
      {"VT_DEADLOCK_WARNING", "3m"},
      {"VT_VERBOSE", "3"},
      {"MPISENTRY_VERBOSE", "4"},
      {"MPISENTRY_REPORT_DOT", "/tmp/graph.dot"},
  };
  const auto result = load(lookup_in(env));
  REQUIRE(all(result.errors).empty());
  CHECK(result.settings.deadlock_timeout == Timeout{false, 10s});
  CHECK(result.settings.deadlock_warning == 3min);
  CHECK(result.settings.verbose == 4);
  CHECK(result.settings.report_file == "from-file.txt");
  CHECK(result.settings.report_dot == "/tmp/graph.dot");
  CHECK(result.origin.at("VERBOSE") == "MPISENTRY_VERBOSE");
  CHECK(result.origin.at("DEADLOCK-TIMEOUT") == file.path() + ":1");
}

TEST_CASE("load: VT_CONFIG is read when MPISENTRY_CONFIG is not set", "[config][load]") {
  const TempFile itc_file("VERBOSE 0\n");
  const TempFile own_file("VERBOSE 5\n");
  CHECK(load(lookup_in({{"VT_CONFIG", itc_file.path()}})).settings.verbose == 0);
  CHECK(load(lookup_in({{"VT_CONFIG", itc_file.path()}, {"MPISENTRY_CONFIG", own_file.path()}})).settings.verbose == 5);
  CHECK(load(lookup_in({{"VT_CONFIG", itc_file.path()}, {"MPISENTRY_CONFIG", ""}})).settings.verbose == 0);
}

TEST_CASE("load: nothing set gives the defaults", "[config][load]") {
  const auto result = load(lookup_in({}));
  CHECK(result.ok());
  CHECK(result.notices.empty());
  CHECK(result.settings == Settings{});
  CHECK(result.origin.empty());
}

TEST_CASE("load: CHECK from the environment, several separated by semicolons or commas", "[config][load]") {
  const Env env = {
      {"VT_CHECK", "** OFF"},
      {"MPISENTRY_CHECK", "GLOBAL:DEADLOCK:POTENTIAL ON; GLOBAL:DEADLOCK:HARD on, LOCAL:BUFFER:** ON"},
  };
  const auto result = load(lookup_in(env));
  REQUIRE(result.errors.empty());
  CHECK(result.settings.check_potential);
  CHECK(result.settings.check_hard);
  CHECK_FALSE(result.settings.check_no_progress);
  REQUIRE(result.notices.size() == 1);
  CHECK(result.notices[0].str() == "MPISENTRY_CHECK: CHECK LOCAL:BUFFER:** is accepted but not implemented by mpisentry");
}

TEST_CASE("load: errors from the environment name the variable, all are collected", "[config][load]") {
  const TempFile file("VERBOSE 7\n");
  const Env env = {
      {"MPISENTRY_CONFIG", file.path()},
      {"VT_DEADLOCK_TIMEOUT", "-1s"},
      {"MPISENTRY_DEADLOCK_WARNING", "1y"},
  };
  const auto result = load(lookup_in(env));
  REQUIRE(result.errors.size() == 3);
  CHECK(result.errors[0].str() == file.path() + ":1: VERBOSE \"7\": out of range (0 to 5)");
  CHECK(result.errors[1].str() == "VT_DEADLOCK_TIMEOUT: DEADLOCK-TIMEOUT \"-1s\": negative durations are not allowed; the key takes a time or auto");
  CHECK(result.errors[2].str() ==
        "MPISENTRY_DEADLOCK_WARNING: DEADLOCK-WARNING \"1y\": unknown time unit 'y' (use c, l, s, m, h, d or w)");
}

TEST_CASE("load: the check interval must be shorter than the timeout", "[config][load]") {
  SECTION("interval set in a file") {
    const TempFile file("DEADLOCK-CHECK-INTERVAL 2m\n");
    const auto result = load(lookup_in({{"MPISENTRY_CONFIG", file.path()}}));
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].str() == file.path() +
                                        ":1: DEADLOCK-CHECK-INTERVAL 2m (" + file.path() +
                                        ":1) must be shorter than DEADLOCK-TIMEOUT auto (default), which waits 1m for what it cannot prove");
  }
  SECTION("timeout set in the environment, equal to the interval") {
    const auto result = load(lookup_in({{"MPISENTRY_DEADLOCK_TIMEOUT", "100l"}}));
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].str() ==
          "MPISENTRY_DEADLOCK_TIMEOUT: DEADLOCK-CHECK-INTERVAL 100l (default) must be shorter than "
          "DEADLOCK-TIMEOUT 100l (MPISENTRY_DEADLOCK_TIMEOUT)");
  }
  SECTION("zero interval") {
    const auto result = load(lookup_in({{"VT_DEADLOCK_CHECK_INTERVAL", "0"}}));
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].str() == "VT_DEADLOCK_CHECK_INTERVAL: DEADLOCK-CHECK-INTERVAL must be more than 0");
  }
  SECTION("a later source fixes an earlier one: checked only at the end") {
    const auto result = load(lookup_in({{"VT_DEADLOCK_TIMEOUT", "50l"}, {"MPISENTRY_DEADLOCK_CHECK_INTERVAL", "10l"}}));
    CHECK(result.ok());
  }
}

TEST_CASE("keys: names for the environment and the launcher", "[config][keys]") {
  CHECK(env_name("VT_", "DEADLOCK-CHECK-INTERVAL") == "VT_DEADLOCK_CHECK_INTERVAL");
  CHECK(option_name("REPORT-JSON") == "--report-json");
  REQUIRE(find_key("deadlock-warning") != nullptr);
  CHECK(find_key("deadlock-warning")->name == "DEADLOCK-WARNING");
  CHECK(find_key("CHECK") == nullptr);
  CHECK(default_listing().front() == "DEADLOCK-TIMEOUT auto");
}

TEST_CASE("the shipped config file parses cleanly to the defaults", "[config][shipped]") {
  const auto result = from_text(shipped_config());
  CHECK(all(result.errors).empty());
  CHECK(all(result.notices).empty());
  CHECK(result.settings == Settings{});
}

TEST_CASE("the shipped config file lists every key with its default", "[config][shipped]") {
  // Its lines with runs of blanks made one space, to compare with the listing.
  std::vector<std::string> lines;
  std::istringstream text(shipped_config());
  for (std::string line; std::getline(text, line);) {
    std::istringstream words(line);
    std::string normalized;
    for (std::string word; words >> word;) normalized += (normalized.empty() ? "" : " ") + word;
    lines.push_back(normalized);
  }
  const auto listing = default_listing();
  CHECK(listing.size() == keys().size() + switchable_checks().size());
  for (const std::string& expected : listing) {
    INFO(expected);
    CHECK(std::ranges::find(lines, expected) != lines.end());
  }
}

TEST_CASE("value_text: a path holding any blank of the line syntax is quoted, and reads back", "[config]") {
  // Found by tests/fuzz/fuzz_config_file: "a\rb" was written unquoted and read back as two words.
  const Key& report_file = *find_key("REPORT-FILE");
  for (const std::string path : {"a\rb", "a\fb", "a\vb", "a b", "a#b"}) {
    INFO(path);
    Settings settings;
    settings.report_file = path;
    const std::string written = value_text(report_file, settings);
    CHECK(written == '"' + path + '"');
    const auto result = from_text("REPORT-FILE " + written);
    CHECK(result.errors.empty());
    CHECK(result.settings.report_file == path);
  }
}

TEST_CASE("PATIENT-WAITS: auto by default, one of auto, on, off from any source", "[config][choice]") {
  CHECK(Settings{}.patient_waits == AutoSwitch::Auto);
  CHECK(from_text("PATIENT-WAITS ON").settings.patient_waits == AutoSwitch::On);
  CHECK(from_text("patient-waits off").settings.patient_waits == AutoSwitch::Off);
  const auto from_env = load(lookup_in({{"MPISENTRY_PATIENT_WAITS", " Off "}}));
  CHECK(all(from_env.errors).empty());
  CHECK(from_env.settings.patient_waits == AutoSwitch::Off);
  REQUIRE(find_key("PATIENT-WAITS") != nullptr);
  CHECK(value_syntax(*find_key("PATIENT-WAITS")) == "auto|on|off");
  CHECK(option_name(find_key("PATIENT-WAITS")->name) == "--patient-waits");
}

TEST_CASE("PATIENT-WAITS: a bad value names the key, the value and the words", "[config][choice]") {
  const auto result = load(lookup_in({{"MPISENTRY_PATIENT_WAITS", "sometimes"}}));
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].str() == "MPISENTRY_PATIENT_WAITS: PATIENT-WAITS \"sometimes\": not one of auto, on, off");
  CHECK(result.settings.patient_waits == AutoSwitch::Auto);
}

TEST_CASE("INJECT-DELAYS: off by default, SEED,PERCENT,DELAY when set", "[config][delays]") {
  CHECK_FALSE(Settings{}.inject_delays.on);
  const auto result = load(lookup_in({{"MPISENTRY_INJECT_DELAYS", "7,5,300l"}}));
  CHECK(all(result.errors).empty());
  const DelayInjection& injection = result.settings.inject_delays;
  CHECK(injection.on);
  CHECK(injection.seed == 7);
  CHECK(injection.percent == 5);
  CHECK(injection.delay == 300ms);
  CHECK(format_delay_injection(injection) == "7,5,300l");
  CHECK(from_text("INJECT-DELAYS \" 1 , 0.5 , 1m+2c \"").settings.inject_delays ==
        DelayInjection{true, 1, 0.5, 60s + 2us});
  CHECK_FALSE(from_text("INJECT-DELAYS 7,5,1s\nINJECT-DELAYS OFF").settings.inject_delays.on);
}

TEST_CASE("INJECT-DELAYS: bad values say what is wrong", "[config][delays]") {
  const auto error_of = [](const std::string& value) {
    const auto result = from_text("INJECT-DELAYS " + value);
    REQUIRE(result.errors.size() == 1);
    CHECK_FALSE(result.settings.inject_delays.on);
    return result.errors[0].str();
  };
  const std::string example = ", e.g. 7,5,300l (seed 7, 5 % of the calls, 300 ms), or off";
  CHECK(error_of("7,5") == "job.conf:1: INJECT-DELAYS \"7,5\": expected SEED,PERCENT,DELAY" + example);
  CHECK(error_of("7,5,1s,") == "job.conf:1: INJECT-DELAYS \"7,5,1s,\": expected SEED,PERCENT,DELAY" + example);
  CHECK(error_of("7,,1s") == "job.conf:1: INJECT-DELAYS \"7,,1s\": expected SEED,PERCENT,DELAY" + example);
  CHECK(error_of("-1,5,1s") == "job.conf:1: INJECT-DELAYS \"-1,5,1s\": SEED \"-1\" is not a whole number >= 0");
  CHECK(error_of("7,150,1s") == "job.conf:1: INJECT-DELAYS \"7,150,1s\": PERCENT \"150\" is not a number from 0 to 100");
  CHECK(error_of("7,lots,1s") == "job.conf:1: INJECT-DELAYS \"7,lots,1s\": PERCENT \"lots\" is not a number from 0 to 100");
  CHECK(error_of("7,5,1x") ==
        "job.conf:1: INJECT-DELAYS \"7,5,1x\": DELAY \"1x\": unknown time unit 'x' (use c, l, s, m, h, d or w)");
}

TEST_CASE("MONITOR-PORTS and MONITOR-INTERFACES: any by default, a range and names when set", "[config][network]") {
  CHECK(Settings{}.monitor_ports == PortRange{});
  CHECK(Settings{}.monitor_interfaces.names.empty());
  const auto result = load(lookup_in({{"MPISENTRY_MONITOR_PORTS", "40000-40100"},
                                      {"MPISENTRY_MONITOR_INTERFACES", "eth0, ib0"}}));
  CHECK(all(result.errors).empty());
  CHECK(result.settings.monitor_ports == PortRange{40000, 40100});
  CHECK(result.settings.monitor_interfaces.names == std::vector<std::string>{"eth0", "ib0"});
  CHECK(format_port_range(result.settings.monitor_ports) == "40000-40100");
  CHECK(format_interface_list(result.settings.monitor_interfaces) == "eth0,ib0");
  CHECK(from_text("MONITOR-PORTS 5000").settings.monitor_ports == PortRange{5000, 5000});
  CHECK(from_text("MONITOR-PORTS 5000\nMONITOR-PORTS ANY").settings.monitor_ports == PortRange{});
  CHECK(from_text("MONITOR-INTERFACES lo\nMONITOR-INTERFACES any").settings.monitor_interfaces.names.empty());
  CHECK(value_syntax(*find_key("MONITOR-PORTS")) == "any|PORT|FIRST-LAST");
}

TEST_CASE("MONITOR-PORTS and MONITOR-INTERFACES: bad values say what is wrong", "[config][network]") {
  const auto error_of = [](const std::string& line) {
    const auto result = from_text(line);
    REQUIRE(result.errors.size() == 1);
    return result.errors[0].str();
  };
  const std::string expected = ": expected any, PORT or FIRST-LAST with ports from 1 to 65535, e.g. 40000-40100";
  CHECK(error_of("MONITOR-PORTS 0") == "job.conf:1: MONITOR-PORTS \"0\"" + expected);
  CHECK(error_of("MONITOR-PORTS 40000-70000") == "job.conf:1: MONITOR-PORTS \"40000-70000\"" + expected);
  CHECK(error_of("MONITOR-PORTS 40000-") == "job.conf:1: MONITOR-PORTS \"40000-\"" + expected);
  CHECK(error_of("MONITOR-PORTS high") == "job.conf:1: MONITOR-PORTS \"high\"" + expected);
  CHECK(error_of("MONITOR-PORTS 5001-5000") == "job.conf:1: MONITOR-PORTS \"5001-5000\": the first port is above the last");
  CHECK(error_of("MONITOR-INTERFACES eth0,a/b") ==
        "job.conf:1: MONITOR-INTERFACES \"eth0,a/b\": \"a/b\" is not a network interface's name (e.g. eth0)");
  CHECK(error_of("MONITOR-INTERFACES \",\"") ==
        "job.conf:1: MONITOR-INTERFACES \",\": expected any, or interface names split by commas, e.g. eth0,ib0");
}

TEST_CASE("STACK-SIGNAL: auto by default, a real-time signal, SIGUSR1 or SIGUSR2 when set", "[config][signal]") {
  CHECK(Settings{}.stack_signal == kUnsetSignal);
  const auto result = load(lookup_in({{"MPISENTRY_STACK_SIGNAL", "SIGRTMIN+5"}}));
  CHECK(all(result.errors).empty());
  CHECK(result.settings.stack_signal == SIGRTMIN + 5);
  CHECK(from_text("STACK-SIGNAL sigrtmin").settings.stack_signal == SIGRTMIN);
  CHECK(from_text("STACK-SIGNAL " + std::to_string(SIGRTMAX)).settings.stack_signal == SIGRTMAX);
  CHECK(from_text("STACK-SIGNAL SIGUSR2").settings.stack_signal == SIGUSR2);
  CHECK(from_text("STACK-SIGNAL " + std::to_string(SIGUSR1)).settings.stack_signal == SIGUSR1);
  CHECK(from_text("STACK-SIGNAL SIGUSR1\nSTACK-SIGNAL auto").settings.stack_signal == kUnsetSignal);
  for (const int signal : {kUnsetSignal, SIGUSR1, SIGRTMIN, SIGRTMIN + 3, SIGRTMAX}) {
    int read_back = -1;
    std::string error;
    CHECK(parse_signal(format_signal(signal, "auto"), "auto", read_back, error));
    CHECK(read_back == signal);
  }
}

TEST_CASE("STACK-SIGNAL: bad values name the key and the value", "[config][signal]") {
  const auto error_of = [](const std::string& value) {
    const auto result = from_text("STACK-SIGNAL " + value);
    REQUIRE(result.errors.size() == 1);
    CHECK(result.settings.stack_signal == kUnsetSignal);
    return result.errors[0].str();
  };
  const std::string expected = "; expected auto, SIGUSR1, SIGUSR2, a real-time signal SIGRTMIN+N with N from 0 to " +
                               std::to_string(SIGRTMAX - SIGRTMIN) + ", or its number from " +
                               std::to_string(SIGRTMIN) + " to " + std::to_string(SIGRTMAX);
  CHECK(error_of("SIGKILL") == "job.conf:1: STACK-SIGNAL \"SIGKILL\": this signal cannot be caught" + expected);
  CHECK(error_of("19") == "job.conf:1: STACK-SIGNAL \"19\": this signal cannot be caught" + expected);
  CHECK(error_of("SIGSEGV") == "job.conf:1: STACK-SIGNAL \"SIGSEGV\": not a signal" + expected);
  CHECK(error_of("SIGRTMIN-1") == "job.conf:1: STACK-SIGNAL \"SIGRTMIN-1\": not a signal" + expected);
  CHECK(error_of("SIGRTMIN+") == "job.conf:1: STACK-SIGNAL \"SIGRTMIN+\": not a signal" + expected);
  CHECK(error_of("SIGRTMIN+99") == "job.conf:1: STACK-SIGNAL \"SIGRTMIN+99\": not a signal the checker may use" + expected);
  // Found by tests/fuzz/fuzz_config_file (UBSan): SIGRTMIN + 2147483647 overflowed an int.
  CHECK(error_of("SIGRTMIN+2147483647") ==
        "job.conf:1: STACK-SIGNAL \"SIGRTMIN+2147483647\": not a signal the checker may use" + expected);
  CHECK(error_of("15") == "job.conf:1: STACK-SIGNAL \"15\": not a signal the checker may use" + expected);
  CHECK(error_of("0") == "job.conf:1: STACK-SIGNAL \"0\": not a signal the checker may use" + expected);
  CHECK(error_of("off") == "job.conf:1: STACK-SIGNAL \"off\": not a signal" + expected);
}

TEST_CASE("DUMP-SIGNAL: off by default, else a signal the checker may catch", "[config][signal]") {
  CHECK(Settings{}.dump_signal == kUnsetSignal);
  CHECK(from_text("DUMP-SIGNAL SIGUSR1").settings.dump_signal == SIGUSR1);
  CHECK(from_text("DUMP-SIGNAL SIGUSR1\nDUMP-SIGNAL OFF").settings.dump_signal == kUnsetSignal);
  CHECK(load(lookup_in({{"MPISENTRY_DUMP_SIGNAL", "sigrtmin+2"}})).settings.dump_signal == SIGRTMIN + 2);
  int read_back = -1;
  std::string error;
  CHECK(format_signal(kUnsetSignal, "off") == "off");
  CHECK(parse_signal("off", "off", read_back, error));
  CHECK(read_back == kUnsetSignal);

  const std::string expected = "; expected off, SIGUSR1, SIGUSR2, a real-time signal SIGRTMIN+N with N from 0 to " +
                               std::to_string(SIGRTMAX - SIGRTMIN) + ", or its number from " +
                               std::to_string(SIGRTMIN) + " to " + std::to_string(SIGRTMAX);
  const auto error_of = [](const std::string& text) {
    const auto result = from_text(text);
    REQUIRE(result.errors.size() == 1);
    CHECK(result.settings.dump_signal == kUnsetSignal);
    return result.errors[0].str();
  };
  CHECK(error_of("DUMP-SIGNAL SIGKILL") == "job.conf:1: DUMP-SIGNAL \"SIGKILL\": this signal cannot be caught" + expected);
  CHECK(error_of("DUMP-SIGNAL SIGSTOP") == "job.conf:1: DUMP-SIGNAL \"SIGSTOP\": this signal cannot be caught" + expected);
  CHECK(error_of("DUMP-SIGNAL SIGWINCH") == "job.conf:1: DUMP-SIGNAL \"SIGWINCH\": not a signal" + expected);
  CHECK(error_of("DUMP-SIGNAL auto") == "job.conf:1: DUMP-SIGNAL \"auto\": not a signal" + expected);
  // Checked once every source is applied, and named where the dump signal was set.
  auto clash = from_text("STACK-SIGNAL SIGUSR2\nDUMP-SIGNAL SIGUSR2");
  check_consistency(clash);
  REQUIRE(clash.errors.size() == 1);
  CHECK(clash.errors[0].str() == "job.conf:2: DUMP-SIGNAL and STACK-SIGNAL are both SIGUSR2: they must differ");
}

TEST_CASE("MPISENTRY_* variables that mpisentry does not read are named, with the nearest it reads", "[config][env]") {
  const std::vector<std::string> names{"PATH",
                                       "MPISENTRY_DEADLOCK_TIMOUT",
                                       "MPISENTRY_DEADLOCK_TIMEOUT",
                                       "MPISENTRY_CHECK",
                                       "MPISENTRY_CONFIG",
                                       "MPISENTRY_LIBRARY",
                                       "MPISENTRY_MPIEXEC",
                                       "MPISENTRY_NOTICES_SHOWN",
                                       "MPISENTRY_REPORTFILE",
                                       "MPISENTRY_SOMETHING_ELSE_ENTIRELY",
                                       "VT_DEADLOCK_TIMOUT"};
  LoadResult result;
  name_unknown_variables(names, result);
  CHECK(result.ok());
  REQUIRE(result.notices.size() == 3);
  CHECK(result.notices[0].str() ==
        "MPISENTRY_DEADLOCK_TIMOUT: unknown variable, ignored (did you mean MPISENTRY_DEADLOCK_TIMEOUT?)");
  CHECK(result.notices[1].str() == "MPISENTRY_REPORTFILE: unknown variable, ignored (did you mean MPISENTRY_REPORT_FILE?)");
  CHECK(result.notices[2].str() == "MPISENTRY_SOMETHING_ELSE_ENTIRELY: unknown variable, ignored");
}
