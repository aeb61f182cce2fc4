#include "bed.hpp"

#include <cstdlib>
#include <sstream>

#include <catch2/catch.hpp>

namespace harness::bed {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0')
    FAIL(name << " is not set: the multi-host tests run inside the bed, through scripts/multihost");
  return value;
}

}  // namespace

const Hosts& hosts() {
  static const Hosts bed = [] {
    Hosts made;
    std::istringstream list(variable("MULTIHOST_HOSTS"));
    for (std::string address; std::getline(list, address, ',');) made.addresses.push_back(address);
    made.launcher = variable("MULTIHOST_LAUNCHER");
    made.head = variable("MULTIHOST_HEAD");
    return made;
  }();
  return bed;
}

std::string host_of(int rank, int per_host) {
  const int host_count = static_cast<int>(hosts().addresses.size());
  return "node" + std::to_string(rank / per_host % host_count + 1);
}

std::vector<std::string> plain_command(int ranks, int per_host, const Program& program,
                                       const std::vector<std::string>& args) {
  const Hosts& bed = hosts();
  std::string host_list;
  for (const std::string& address : bed.addresses) host_list += (host_list.empty() ? "" : ",") + address;
  std::vector<std::string> command{MPIEXEC,  "-launcher", "ssh",    "-launcher-exec", bed.launcher,
                                   "-hosts", host_list,   "-localhost", bed.head,     "-n",
                                   std::to_string(ranks), "-ppn", std::to_string(per_host), program.executable};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

std::vector<std::string> checked_command(const Workspace& workspace, int ranks, int per_host, const Program& program,
                                         const std::vector<std::string>& options,
                                         const std::vector<std::string>& args) {
  std::vector<std::string> command = with(checker_prefix(workspace, options), {"--"});
  const std::vector<std::string> job = plain_command(ranks, per_host, program, args);
  command.insert(command.end(), job.begin(), job.end());
  return command;
}

JobResult run_checked(const Workspace& workspace, int ranks, int per_host, const Program& program,
                      const std::vector<std::string>& options, const std::vector<std::string>& args) {
  return run_job(workspace, checked_command(workspace, ranks, per_host, program, options, args));
}

}  // namespace harness::bed
