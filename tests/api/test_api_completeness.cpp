// Every function that MPICH's mpi.h declares is either wrapped by
// libmpisentry (the library exports it) or listed in src/interceptors/unwrapped.txt
// with the reason, and every line of that list is needed. A function that can
// block or create a request and is neither would leave a hang unreported.
#include <fnmatch.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

const std::string kListPath = UNWRAPPED_LIST;

// The standard output of a shell command, which must succeed.
std::string output_of(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe != nullptr);
  std::string text;
  char chunk[65536];
  for (std::size_t got; (got = std::fread(chunk, 1, sizeof chunk, pipe.get())) > 0;) text.append(chunk, got);
  const int status = pclose(pipe.release());
  INFO("command: " << command);
  REQUIRE(status == 0);
  return text;
}

// The MPI_* functions that mpi.h and mpio.h declare, read through the C
// compiler: every declaration "<return type> MPI_<name>(...)" that is not a
// typedef. Macros (MPI_Comm_c2f in MPICH) are no functions and are left out.
std::set<std::string> declared_functions() {
  const std::string text =
      output_of(std::string(C_COMPILER) + " -E -P " + MPI_INCLUDE_FLAGS + " " + MPI_HEADERS_SOURCE);
  static const std::regex declaration(R"(^\s*(?:extern\s+)?(?:[A-Za-z_]\w*[\s*]+)+(MPI_\w+)\s*\()");
  std::set<std::string> names;
  std::istringstream statements(text);
  for (std::string statement; std::getline(statements, statement, ';');) {
    if (statement.find("typedef") != std::string::npos) continue;
    std::smatch match;
    if (std::regex_search(statement, match, declaration)) names.insert(match[1]);
  }
  return names;
}

// Every symbol that libmpisentry.so defines and exports.
std::set<std::string> exported_symbols() {
  std::istringstream lines(output_of(std::string(NM) + " -D --defined-only " + MPISENTRY_LIBRARY));
  std::set<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    const std::size_t name = line.rfind(' ');
    if (name != std::string::npos) names.insert(line.substr(name + 1));
  }
  return names;
}

bool is_mpi_name(const std::string& name) { return name.starts_with("MPI_"); }

// The MPI_* symbols that libmpisentry.so defines and exports.
std::set<std::string> exported_functions() {
  std::set<std::string> names;
  for (const std::string& name : exported_symbols())
    if (is_mpi_name(name)) names.insert(name);
  return names;
}

struct Entry {
  int line = 0;
  std::string pattern;   // a name or an fnmatch glob
  std::string category;  // "local", ...
  std::string reason;
};

bool is_glob(const std::string& pattern) { return pattern.find_first_of("*?[") != std::string::npos; }

bool matches(const Entry& entry, const std::string& name) {
  return fnmatch(entry.pattern.c_str(), name.c_str(), 0) == 0;
}

// The list's entries; a line that is not "<pattern> <category>: <reason>"
// fails the test, naming the line.
std::vector<Entry> read_list() {
  std::ifstream in(kListPath);
  INFO("reading " << kListPath);
  REQUIRE(in.good());
  static const std::regex entry_line(R"(^(MPI_[A-Za-z0-9_*?\[\]]+)\s+([a-z][a-z-]*):\s+(\S.*)$)");
  std::vector<Entry> entries;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t") == std::string::npos || line.front() == '#') continue;
    std::smatch match;
    INFO(kListPath << ":" << number << ": \"" << line
                   << "\" is not \"<MPI_name or glob> <category>: <reason>\" (such as \"MPI_Comm_rank local: "
                      "returns without waiting for other processes\")");
    CHECK(std::regex_match(line, match, entry_line));
    if (!match.empty()) entries.push_back({number, match[1], match[2], match[3]});
  }
  return entries;
}

}  // namespace

TEST_CASE("every function of mpi.h is wrapped or listed as unwrapped with a reason", "[api]") {
  const std::set<std::string> declared = declared_functions();
  const std::set<std::string> exported = exported_functions();
  const std::vector<Entry> entries = read_list();
  // Guards against a parse that finds nothing and so passes.
  REQUIRE(declared.size() > 400);
  REQUIRE(declared.count("MPI_File_write_all") == 1);
  REQUIRE(exported.count("MPI_Send") == 1);

  std::map<std::string, int> listed_by_category;
  int wrapped = 0;
  for (const std::string& name : declared) {
    if (exported.count(name) != 0) {
      ++wrapped;
      continue;
    }
    const Entry* listed = nullptr;
    for (const Entry& entry : entries)
      if (matches(entry, name)) {
        listed = &entry;
        break;
      }
    if (listed != nullptr) {
      ++listed_by_category[listed->category];
      continue;
    }
    FAIL_CHECK(name << " is declared in mpi.h but libmpisentry neither wraps it nor lists it in " << kListPath
                    << ": if it can block or create a request, wrap it in src/api/mpi_api.json; else add"
                       " a line \""
                    << name << " local: <why it never waits for another process>\" to the list");
  }

  for (const Entry& entry : entries) {
    int unwrapped_matches = 0, wrapped_matches = 0;
    for (const std::string& name : declared) {
      if (!matches(entry, name)) continue;
      ++(exported.count(name) != 0 ? wrapped_matches : unwrapped_matches);
    }
    INFO(kListPath << ":" << entry.line << ": " << entry.pattern);
    if (wrapped_matches > 0 && !is_glob(entry.pattern))
      FAIL_CHECK(entry.pattern << " is wrapped by libmpisentry: remove its line from the list");
    else if (unwrapped_matches == 0 && wrapped_matches == 0)
      FAIL_CHECK(entry.pattern << " matches no function of mpi.h: remove or correct its line");
    else if (unwrapped_matches == 0)
      FAIL_CHECK(entry.pattern << " matches only functions that libmpisentry wraps: remove its line");
  }

  int listed_local = 0, listed_other = 0;
  for (const auto& [category, count] : listed_by_category) (category == "local" ? listed_local : listed_other) += count;
  std::cout << declared.size() << " functions in mpi.h: " << wrapped << " wrapped, " << listed_local
            << " listed local, " << listed_other << " listed for another reason (";
  const char* separator = "";
  for (const auto& [category, count] : listed_by_category) {
    if (category == "local") continue;
    std::cout << separator << category << " " << count;
    separator = ", ";
  }
  std::cout << ")\n";
}

// The library is preloaded into programs that may bring their own fmt,
// spdlog, libbacktrace or C++ runtime pieces: anything it exported besides
// the MPI API could take their place or be taken by them.
TEST_CASE("libmpisentry exports the MPI API alone", "[api]") {
  const std::set<std::string> exported = exported_symbols();
  REQUIRE(exported.count("MPI_Send") == 1);  // guards against a parse that finds nothing
  for (const std::string& name : exported)
    if (!is_mpi_name(name)) FAIL_CHECK(name << " is exported by libmpisentry: only MPI_* may be (src/runtime/exports.map)");
}
