// The multi-host bed that scripts/multihost makes (hosts node1..nodeN as
// network namespaces, messages over TCP between them) and the job lines that
// spread ranks over its hosts. The bed's tests are hidden from the plain
// suite (tags [.multihost], [.slurm]): scripts/multihost runs them inside the
// bed.
#pragma once

#include <string>
#include <vector>

#include "scenario.hpp"

namespace harness::bed {

// The bed's hosts, from scripts/multihost's variables; the test fails,
// saying how to run it, outside the bed.
struct Hosts {
  std::vector<std::string> addresses;  // node1's first
  std::string launcher;                // Hydra's -launcher-exec program
  std::string head;                    // mpiexec's own address (Hydra's -localhost)
};
const Hosts& hosts();

// The host name of the node that runs `rank` when `per_host` ranks run on
// each host in turn (Hydra's -ppn, hosts in order, wrapping around).
std::string host_of(int rank, int per_host);

// mpiexec over the bed's hosts, `per_host` ranks on each in turn.
std::vector<std::string> plain_command(int ranks, int per_host, const Program& program,
                                       const std::vector<std::string>& args = {});
// mpisentry <options> --report-file <workspace report> -- <plain_command>
std::vector<std::string> checked_command(const Workspace& workspace, int ranks, int per_host, const Program& program,
                                         const std::vector<std::string>& options,
                                         const std::vector<std::string>& args = {});
JobResult run_checked(const Workspace& workspace, int ranks, int per_host, const Program& program,
                      const std::vector<std::string>& options, const std::vector<std::string>& args = {});

}  // namespace harness::bed
