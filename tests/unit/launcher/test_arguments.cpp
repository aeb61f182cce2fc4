#include "config/keys.hpp"
#include "launcher/arguments.hpp"
#include "launcher/job.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

using namespace mpisentry;
using namespace mpisentry::launcher;
using namespace std::chrono_literals;

namespace {

using Env = std::map<std::string, std::string>;

config::EnvLookup lookup_in(const Env& env) {
  return [&env](const char* name) -> const char* {
    const auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  };
}

Arguments parse(std::vector<std::string> words) { return parse_arguments(words); }

std::vector<std::string> messages(const std::vector<config::Problem>& problems) {
  std::vector<std::string> texts;
  for (const config::Problem& problem : problems) texts.push_back(problem.str());
  return texts;
}

using Strings = std::vector<std::string>;

// The text with every run of blanks and line breaks made one space.
std::string flattened(const std::string& text) {
  std::string flat;
  for (const char c : text) {
    const bool blank = c == ' ' || c == '\n';
    if (!blank) flat += c;
    else if (!flat.empty() && flat.back() != ' ') flat += ' ';
  }
  return flat;
}

}  // namespace

TEST_CASE("launcher: -n N program args", "[launcher]") {
  const auto args = parse({"-n", "4", "./app", "a", "--verbose", "b"});
  CHECK(args.errors.empty());
  CHECK(args.ranks == "4");
  CHECK(args.program == Strings{"./app", "a", "--verbose", "b"});  // the program's own arguments
  CHECK(job_command(args, "mpiexec") == Strings{"mpiexec", "-n", "4", "./app", "a", "--verbose", "b"});
  CHECK(job_command(args, "/opt/mpi/bin/mpiexec.hydra") ==
        Strings{"/opt/mpi/bin/mpiexec.hydra", "-n", "4", "./app", "a", "--verbose", "b"});
}

TEST_CASE("launcher: -- and a launcher line run as given", "[launcher]") {
  const auto args = parse({"--", "mpiexec", "-n", "2", "./x", "--check"});
  CHECK(args.errors.empty());
  CHECK(job_command(args, "other") == Strings{"mpiexec", "-n", "2", "./x", "--check"});
}

TEST_CASE("launcher: options before the program, in both spellings", "[launcher]") {
  const auto args = parse({"--deadlock-timeout", "10s", "--config=job.conf", "--check", "GLOBAL:** OFF", "-n", "2",
                           "--potential", "--verbose=3", "./app"});
  REQUIRE(messages(args.errors).empty());
  CHECK(args.config_file == "job.conf");
  REQUIRE(args.settings.size() == 4);
  CHECK(args.settings[0].key == "DEADLOCK-TIMEOUT");
  CHECK(args.settings[0].value == "10s");
  CHECK(args.settings[0].option == "--deadlock-timeout");
  CHECK(args.settings[1].key == "CHECK");
  CHECK(args.settings[1].value == "GLOBAL:** OFF");
  CHECK(args.settings[2].key == "CHECK");
  CHECK(args.settings[2].value == "GLOBAL:DEADLOCK:POTENTIAL ON");
  CHECK(args.settings[2].option == "--potential");
  CHECK(args.settings[3].key == "VERBOSE");
  CHECK(args.settings[3].value == "3");
  CHECK(args.program == Strings{"./app"});
}

TEST_CASE("launcher: every key of the table has its option", "[launcher]") {
  for (const config::Key& key : config::keys()) {
    const auto args = parse({config::option_name(key.name), "1", "-n", "1", "./app"});
    INFO(key.name);
    CHECK(args.errors.empty());
    REQUIRE(args.settings.size() == 1);
    CHECK(args.settings[0].key == key.name);
  }
}

TEST_CASE("launcher: a number after an option is its value, 0 too, before -n N and the program", "[launcher]") {
  // Every option whose value is a number, and --explore, whose number is optional.
  for (const config::Key& key : config::keys()) {
    if (config::value_syntax(key).find("..") == std::string::npos) continue;
    const auto args = parse({config::option_name(key.name), "0", "-n", "2", "./app", "x"});
    INFO(key.name);
    CHECK(messages(args.errors).empty());
    REQUIRE(args.settings.size() == 1);
    CHECK(args.settings[0].key == key.name);
    CHECK(args.settings[0].value == "0");
    CHECK(args.ranks == "2");
    CHECK(args.program == Strings{"./app", "x"});
  }
  const auto explore_value = [](std::vector<std::string> words) {
    const auto args = parse(std::move(words));
    return args.errors.empty() && args.settings.size() == 1 ? args.settings[0].value : messages(args.errors).front();
  };
  CHECK(explore_value({"--explore", "0", "-n", "2", "./app"}) == "0");
  CHECK(explore_value({"--explore=0", "-n", "2", "./app"}) == "0");
  CHECK(explore_value({"--explore", "7", "-n", "2", "./app"}) == "7");
  CHECK(explore_value({"--explore", "-n", "2", "./app"}) == "50");
  CHECK(explore_value({"--explore", "--", "mpiexec", "-n", "2", "./app"}) == "50");
  CHECK(explore_value({"-n", "2", "--explore", "./app"}) == "50");
  // A number out of range is taken as the value, and refused by name.
  const auto negative = parse({"--explore", "-1", "-n", "2", "./app"});
  REQUIRE(negative.errors.empty());
  CHECK(messages(resolve_settings(negative, lookup_in({})).errors) ==
        Strings{"--explore: EXPLORE \"-1\": out of range (0 to 1000000)"});
  CHECK(resolve_settings(parse({"--explore", "0", "-n", "2", "./app"}), lookup_in({})).settings.explore_runs == 0);
}

TEST_CASE("launcher: bad command lines say which option is wrong", "[launcher]") {
  CHECK(messages(parse({"--deadlok-timeout", "1m", "-n", "2", "./app"}).errors) ==
        Strings{"--deadlok-timeout: unknown option (did you mean --deadlock-timeout?)"});
  CHECK(messages(parse({"--frobnicate", "-n", "2", "./app"}).errors) == Strings{"--frobnicate: unknown option"});
  CHECK(messages(parse({"-n", "2", "--report-json"}).errors) == Strings{"--report-json: needs a value"});
  CHECK(messages(parse({"-n", "zero", "./app"}).errors) == Strings{"-n: \"zero\" is not a positive number of ranks"});
  CHECK(messages(parse({"-n", "0", "./app"}).errors) == Strings{"-n: \"0\" is not a positive number of ranks"});
  CHECK(messages(parse({"-n"}).errors) == Strings{"-n: needs a number of ranks"});
  CHECK(messages(parse({"-n", "2"}).errors) == Strings{"-n 2: needs the program to run after it"});
  CHECK(messages(parse({"./app"}).errors) == Strings{"./app: give -n N before the program, or -- and a launcher line"});
  // Found by tests/fuzz/fuzz_launcher_args: an empty word was taken as the program, and the message named "".
  CHECK(messages(parse({"-n", "2", ""}).errors) == Strings{"argument 3: is empty where an option or the program should be"});
  CHECK(messages(parse({""}).errors) == Strings{"argument 1: is empty where an option or the program should be"});
  CHECK(messages(parse({"--"}).errors) == Strings{"--: needs a launcher line after it, e.g. -- mpiexec -n 2 ./app"});
  CHECK(messages(parse({"-n", "2", "--", "mpiexec", "./x"}).errors) ==
        Strings{"-n: cannot be combined with --; put -n in the launcher line"});
  CHECK(messages(parse({}).errors) == Strings{"mpisentry: nothing to run; give -n N ./app [args...] or -- LAUNCHER ARGS..."});
  CHECK(messages(parse({"--bad", "--worse", "-n", "2", "./app"}).errors).size() == 2);  // all collected
}

TEST_CASE("launcher: --help and --version need nothing to run", "[launcher]") {
  CHECK(parse({"--help"}).help);
  CHECK(parse({"--help"}).errors.empty());
  CHECK(parse({"--version"}).version);
  CHECK(parse({"--version"}).errors.empty());
}

TEST_CASE("launcher: the help text lists every option and check", "[launcher]") {
  const std::string text = flattened(usage());
  for (const config::Key& key : config::keys()) {
    INFO(key.name);
    CHECK(text.find(config::option_name(key.name) + ' ') != std::string::npos);
    CHECK(text.find(std::string(key.help)) != std::string::npos);
  }
  for (const config::CheckInfo& check : config::switchable_checks()) CHECK(text.find(check.name) != std::string::npos);
  CHECK(text.find("(DEADLOCK-TIMEOUT, default auto)") != std::string::npos);
  CHECK(text.find("--potential") != std::string::npos);
}

TEST_CASE("launcher: bad option values name the option", "[launcher]") {
  const auto args = parse({"--deadlock-timeout", "5x", "--verbose", "9", "--check", "NOPE ON", "-n", "2", "./app"});
  REQUIRE(args.errors.empty());
  const auto settings = resolve_settings(args, lookup_in({}));
  CHECK(messages(settings.errors) ==
        Strings{"--deadlock-timeout: DEADLOCK-TIMEOUT \"5x\": unknown time unit 'x' (use c, l, s, m, h, d or w); the key takes a time or auto",
                "--verbose: VERBOSE \"9\": out of range (0 to 5)",
                "--check: CHECK \"NOPE\" matches no check"});
}

TEST_CASE("launcher: options override the environment, then the rules are checked", "[launcher]") {
  const Env env = {{"MPISENTRY_DEADLOCK_TIMEOUT", "100l"}, {"MPISENTRY_VERBOSE", "0"}};
  SECTION("an option repairs the environment") {
    const auto settings = resolve_settings(parse({"--deadlock-timeout", "10s", "-n", "2", "./app"}), lookup_in(env));
    CHECK(settings.ok());
    CHECK(settings.settings.deadlock_timeout == config::Timeout{false, 10s});
    CHECK(settings.settings.verbose == 0);
  }
  SECTION("an option breaks a rule") {
    const auto settings = resolve_settings(parse({"--deadlock-check-interval", "2m", "-n", "2", "./app"}), lookup_in({}));
    CHECK(messages(settings.errors) == Strings{"--deadlock-check-interval: DEADLOCK-CHECK-INTERVAL 2m (--deadlock-check-interval) "
                                               "must be shorter than DEADLOCK-TIMEOUT auto (default), which waits 1m for what it cannot prove"});
  }
}

TEST_CASE("launcher: --config wins over MPISENTRY_CONFIG and is passed on as an absolute path", "[launcher]") {
  const auto dir = std::filesystem::temp_directory_path() / ("mpisentry_launcher_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "job.conf";
  std::ofstream(file) << "VERBOSE 4\nPCTRACE on\n";
  const Env env = {{"MPISENTRY_CONFIG", "/nonexistent.conf"}};
  const auto args = parse({"--config", file.string(), "-n", "2", "./app"});
  const auto settings = resolve_settings(args, lookup_in(env));
  CHECK(messages(settings.errors).empty());
  CHECK(settings.settings.verbose == 4);
  CHECK(messages(settings.notices) ==
        Strings{file.string() + ":2: PCTRACE is an ITC setting that mpisentry accepts but does not implement"});
  const auto variables = job_environment(args, lookup_in(env), "/lib/libmpisentry.so");
  CHECK(std::ranges::find(variables, std::pair<std::string, std::string>{"MPISENTRY_CONFIG", file.string()}) != variables.end());
  std::filesystem::remove_all(dir);
}

TEST_CASE("launcher: a program of Open MPI gets time for its dumps between SIGTERM and SIGKILL", "[launcher]") {
  const auto args = parse({"-n", "2", "./app"});
  const auto has = [](const std::vector<std::pair<std::string, std::string>>& variables, const std::string& value) {
    return std::ranges::find(variables, std::pair<std::string, std::string>{kOpenMpiSigkillVariable, value}) !=
           variables.end();
  };
  const std::string seconds = std::to_string(kOpenMpiSigkillSeconds);
  CHECK(has(job_environment(args, lookup_in({}), "/lib/libmpisentry.so", mpi_libraries::Family::open_mpi), seconds));
  CHECK_FALSE(has(job_environment(args, lookup_in({}), "/lib/libmpisentry.so", mpi_libraries::Family::mpich), seconds));
  CHECK_FALSE(has(job_environment(args, lookup_in({}), "/lib/libmpisentry.so", std::nullopt), seconds));
  // The user's own setting stays.
  const Env env = {{kOpenMpiSigkillVariable, "30"}};
  const auto variables = job_environment(args, lookup_in(env), "/lib/libmpisentry.so", mpi_libraries::Family::open_mpi);
  CHECK_FALSE(has(variables, seconds));
}

TEST_CASE("launcher: the job's environment", "[launcher]") {
  const auto args = parse({"--deadlock-timeout", "5s", "--deadlock-timeout", "7s", "--report-json", "/tmp/r.json",
                           "--potential", "--check", "GLOBAL:DEADLOCK:HARD OFF", "-n", "2", "./app"});
  using Variables = std::vector<std::pair<std::string, std::string>>;
  // Relative report paths lead to the directory the user starts mpisentry in.
  const std::string here = std::filesystem::current_path().string();
  // A sanitizer build's runtime comes before everything.
  const std::string first = kSanitizerRuntime.empty() ? "" : std::string(kSanitizerRuntime) + ":";
  SECTION("nothing set before") {
    CHECK(job_environment(args, lookup_in({}), "/opt/lib/libmpisentry.so") ==
          Variables{{"LD_PRELOAD", first + "/opt/lib/libmpisentry.so"},
                    {"MPISENTRY_CHECK", "GLOBAL:DEADLOCK:POTENTIAL ON; GLOBAL:DEADLOCK:HARD OFF"},
                    {"MPISENTRY_DEADLOCK_TIMEOUT", "7s"},
                    {"MPISENTRY_LAUNCH_DIRECTORY", here},
                    {"MPISENTRY_NOTICES_SHOWN", "1"},
                    {"MPISENTRY_REPORT_JSON", "/tmp/r.json"}});
  }
  SECTION("the environment's CHECK and LD_PRELOAD are kept, after and before") {
    const Env env = {{"LD_PRELOAD", "libother.so"}, {"MPISENTRY_CHECK", "** OFF"}, {"MPISENTRY_DEADLOCK_TIMEOUT", "1s"}};
    CHECK(job_environment(args, lookup_in(env), "/opt/lib/libmpisentry.so") ==
          Variables{{"LD_PRELOAD", first + "/opt/lib/libmpisentry.so:libother.so"},
                    {"MPISENTRY_CHECK", "** OFF; GLOBAL:DEADLOCK:POTENTIAL ON; GLOBAL:DEADLOCK:HARD OFF"},
                    {"MPISENTRY_DEADLOCK_TIMEOUT", "7s"},
                    {"MPISENTRY_LAUNCH_DIRECTORY", here},
                    {"MPISENTRY_NOTICES_SHOWN", "1"},
                    {"MPISENTRY_REPORT_JSON", "/tmp/r.json"}});
  }
}

TEST_CASE("launcher: the library is found beside the launcher, or named", "[launcher]") {
  using mpi_libraries::Family;
  const auto root = std::filesystem::temp_directory_path() / ("mpisentry_library_test_" + std::to_string(::getpid()));
  const std::string launcher = (root / "bin" / "mpisentry").string();
  // The build's install layout under this test's prefix.
  const auto installed = [&](Family family) {
    const auto dir = (root / "bin" / installed_library_dir(family).from_launcher).lexically_normal();
    std::filesystem::create_directories(dir);
    return (dir / "libmpisentry.so").string();
  };
  const std::string mpich = installed(Family::mpich);
  const std::string open_mpi = installed(Family::open_mpi);
  CHECK(open_mpi == (std::filesystem::path(mpich).parent_path() / "openmpi/libmpisentry.so").string());
  std::filesystem::create_directories(root / "bin");
  const std::string build_tree = (root / "runtime/libmpisentry.so").string();
  const Family built_for = mpi_libraries::kBuiltFor;
  const Family other = built_for == Family::mpich ? Family::open_mpi : Family::mpich;
  const auto configured = [](Family family) {
    return installed_library_dir(family).configured + "/libmpisentry.so";
  };

  SECTION("nothing there: every path tried is listed, the configured directories last") {
    const auto search = find_library(launcher, lookup_in({}), std::nullopt);
    CHECK(search.tried == (built_for == Family::mpich
                               ? Strings{mpich, build_tree, configured(Family::mpich)}
                               : Strings{mpich, open_mpi, build_tree, configured(Family::mpich), configured(Family::open_mpi)}));
    CHECK(find_library(launcher, lookup_in({}), Family::open_mpi).tried ==
          (built_for == Family::open_mpi ? Strings{open_mpi, build_tree, configured(Family::open_mpi)}
                                         : Strings{open_mpi, configured(Family::open_mpi)}));
  }
  SECTION("installed layout: each MPI's library in its own directory") {
    std::ofstream(mpich) << "";
    std::ofstream(open_mpi) << "";
    CHECK(find_library(launcher, lookup_in({}), Family::mpich).found == mpich);
    CHECK(find_library(launcher, lookup_in({}), Family::open_mpi).found == open_mpi);
    CHECK(find_library(launcher, lookup_in({}), std::nullopt).found == mpich);  // MPICH stays the default
  }
  SECTION("build tree layout: the build's own MPI only") {
    std::filesystem::create_directories(root / "runtime");
    std::ofstream(build_tree) << "";
    CHECK(find_library(launcher, lookup_in({}), built_for).found == build_tree);
    CHECK(find_library(launcher, lookup_in({}), std::nullopt).found == build_tree);
    CHECK(find_library(launcher, lookup_in({}), other).found.empty());
  }
  SECTION("MPISENTRY_LIBRARY overrides, and must exist") {
    std::ofstream(mpich) << "";
    const auto search = find_library(launcher, lookup_in({{"MPISENTRY_LIBRARY", "/nonexistent/libx.so"}}), Family::mpich);
    CHECK(search.found.empty());
    CHECK(search.tried == Strings{"/nonexistent/libx.so"});
  }
  std::filesystem::remove_all(root);
}

TEST_CASE("launcher: the program's MPI is the first MPI library that ldd lists", "[launcher]") {
  using mpi_libraries::Family;
  const auto mpich = mpi_in_ldd_output(
      "\tlinux-vdso.so.1 (0x00007ffd)\n"
      "\tlibmpich.so.12 => /lib/x86_64-linux-gnu/libmpich.so.12 (0x00007f0)\n"
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1)\n");
  REQUIRE(mpich);
  CHECK(mpich->first == Family::mpich);
  CHECK(mpich->second == "/lib/x86_64-linux-gnu/libmpich.so.12");
  const auto open_mpi = mpi_in_ldd_output(
      "\tlibmpi_mpifh.so.40 => /lib/x86_64-linux-gnu/libmpi_mpifh.so.40 (0x00007f2)\n"
      "\tlibmpi.so.40 => /lib/x86_64-linux-gnu/libmpi.so.40 (0x00007f3)\n");
  REQUIRE(open_mpi);
  CHECK(open_mpi->first == Family::open_mpi);
  CHECK(!mpi_in_ldd_output("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n\t/lib64/ld-linux-x86-64.so.2 (0x2)\n"));
  CHECK(!mpi_in_ldd_output(""));

  // The unit tests link this build's MPI; a launcher line's launcher is not the program.
  std::error_code error;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  const ProgramMpi program = find_program_mpi(parse({"-n", "2", self}), lookup_in({}));
  CHECK(program.program == self);
  CHECK(program.family == mpi_libraries::kBuiltFor);
  CHECK(mpi_libraries::family_of(program.library) == mpi_libraries::kBuiltFor);
  const Env path = {{"PATH", std::filesystem::path(self).parent_path().string()}};
  CHECK(find_program_mpi(parse({"--", "mpiexec", "-n", "2", std::filesystem::path(self).filename().string()}),
                         lookup_in(path))
            .family == mpi_libraries::kBuiltFor);
  CHECK(!find_program_mpi(parse({"-n", "2", "/bin/sh"}), lookup_in({})).family);
  CHECK(!find_program_mpi(parse({"--", self, "-n", "2", "/bin/sh"}), lookup_in({})).family);
}

TEST_CASE("launcher: MPISENTRY_MPIEXEC, else mpiexec", "[launcher]") {
  using mpi_libraries::Family;
  CHECK(choose_mpiexec(lookup_in({{"MPISENTRY_MPIEXEC", "/opt/mpi/bin/mpiexec"}}), Family::open_mpi).command ==
        "/opt/mpi/bin/mpiexec");
  CHECK(choose_mpiexec(lookup_in({{"PATH", "/nonexistent"}}), Family::open_mpi).command == "mpiexec");
  CHECK(choose_mpiexec(lookup_in({}), std::nullopt).command == "mpiexec");

  // PATH's mpiexec is MPICH's Hydra: a program of Open MPI gets Debian's mpiexec.openmpi when PATH has it.
  const std::filesystem::path hydra = "/usr/bin/mpiexec.hydra";
  if (!std::filesystem::exists(hydra)) {
    WARN("no " << hydra << ": the choice between two MPIs' mpiexec is not tested");
    return;
  }
  const auto bin = std::filesystem::temp_directory_path() / ("mpisentry_mpiexec_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(bin);
  std::filesystem::create_symlink(hydra, bin / "mpiexec");
  const Env path = {{"PATH", bin.string()}};
  CHECK(choose_mpiexec(lookup_in(path), Family::mpich).command == "mpiexec");
  const MpiexecChoice without = choose_mpiexec(lookup_in(path), Family::open_mpi);
  CHECK(without.command == "mpiexec");
  CHECK(without.other_family == Family::mpich);
  std::ofstream(bin / "mpiexec.openmpi") << "#!/bin/sh\n";
  std::filesystem::permissions(bin / "mpiexec.openmpi", std::filesystem::perms::owner_all);
  const MpiexecChoice with = choose_mpiexec(lookup_in(path), Family::open_mpi);
  CHECK(with.command == "mpiexec.openmpi");
  CHECK(!with.other_family);
  std::filesystem::remove_all(bin);
}

TEST_CASE("launcher: --check-all switches on every consistency check, in order with the other options", "[launcher]") {
  const auto args = parse({"--check", "LOCAL:MPI:CALL_FAILED OFF", "--check-all", "-n", "2", "./app"});
  REQUIRE(messages(args.errors).empty());
  std::vector<std::string> values;
  for (const auto& setting : args.settings) {
    CHECK(setting.key == "CHECK");
    values.push_back(setting.value);
  }
  CHECK(values == Strings{"LOCAL:MPI:CALL_FAILED OFF", "GLOBAL:COLLECTIVE:** ON", "GLOBAL:MSG:** ON", "GLOBAL:RMA:** ON",
                          "LOCAL:** ON", "GLOBAL:MSG:RACE OFF"});
}
