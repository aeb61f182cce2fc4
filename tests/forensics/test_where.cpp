// Where ranks run and where reports land: each rank class of the text report
// names its ranks' host and pids, and a relative REPORT-FILE (and REPORT-JSON)
// lands in the directory mpisentry started in even when rank 0 runs in
// another one.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// Each rank's pid as the JSON report's ranks[] give it.
std::map<int, int> pids_in_json(const std::string& json) {
  static const std::regex rank_entry(R"re("rank":(\d+),"host":"[^"]*","pid":(\d+))re");
  std::map<int, int> pids;
  for (auto match = std::sregex_iterator(json.begin(), json.end(), rank_entry); match != std::sregex_iterator();
       ++match)
    pids[std::stoi((*match)[1])] = std::stoi((*match)[2]);
  return pids;
}

}  // namespace

TEST_CASE("where: the text report's rank class names the host and each rank's pid", "[forensics][where]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(ssend_ring);
  const JobResult result =
      run_checked(workspace, 4, program, kDeadlockOptions);
  INFO(describe(result));
  REQUIRE(result.report);
  REQUIRE(result.report_json);
  const std::map<int, int> pids = pids_in_json(*result.report_json);
  REQUIRE(pids.size() == 4);
  // "where: host node1: ranks 0-3 (pids 4101-4104)": the i-th pid is the i-th rank's.
  const std::regex where_line(R"(\[0\] ERROR:\s+where: host (\S+): ranks 0-3 \(pids ([\d,-]+)\))");
  std::smatch match;
  REQUIRE(std::regex_search(*result.report, match, where_line));
  CHECK(match[1] == this_host());
  const std::vector<int> listed = expand_ranks(match[2]);
  REQUIRE(listed.size() == 4);
  for (int rank = 0; rank < 4; ++rank) CHECK(listed[rank] == pids.at(rank));
  CHECK(result.report_json->find(R"("hosts":[{"host":")" + this_host() + R"(","ranks":"0-3"}])") != std::string::npos);
}

TEST_CASE("where: relative report paths land where mpisentry started, not in rank 0's directory",
          "[forensics][where]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(recv_recv);
  const std::filesystem::path rank0_dir = workspace.dir() / "rank0";
  const std::filesystem::path rank1_dir = workspace.dir() / "rank1";
  std::filesystem::create_directories(rank0_dir);
  std::filesystem::create_directories(rank1_dir);
  // Hydra's MPMD line: each rank in a working directory of its own.
  std::vector<std::string> command{MPISENTRY_LAUNCHER, "--report-file", "relative.txt", "--report-json", "relative.json"};
  command.insert(command.end(), kDeadlockOptions.begin(), kDeadlockOptions.end());
  command.insert(command.end(), {"--", MPIEXEC, "-n", "1", "-wdir", rank0_dir.string(), program.executable, ":", "-n",
                                 "1", "-wdir", rank1_dir.string(), program.executable});
  const JobResult result = run_job(workspace, command);
  INFO(describe(result));
  CHECK(result.failed());
  const std::optional<std::string> report = read_file(workspace.dir() / "relative.txt");
  REQUIRE(report);
  CHECK(report->find("GLOBAL:DEADLOCK:HARD") != std::string::npos);
  CHECK(read_file(workspace.dir() / "relative.json").has_value());
  for (const std::filesystem::path& rank_dir : {rank0_dir, rank1_dir}) {
    CHECK_FALSE(std::filesystem::exists(rank_dir / "relative.txt"));
    CHECK_FALSE(std::filesystem::exists(rank_dir / "relative.json"));
  }
  const std::string started = std::filesystem::canonical(workspace.dir()).string();
  CHECK(result.err.find("report file " + started + "/relative.txt (relative paths are taken in the directory "
                        "mpisentry started in, " + started + ")") != std::string::npos);
}
