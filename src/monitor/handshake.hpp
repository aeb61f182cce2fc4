// The start-up handshake, once in MPI_Init before the monitor's first round:
// it makes the monitors' communicator and checks that every rank runs the
// same checker with settings it could load, without ever hanging. A rank
// without the checker (the library missing on its host, LD_PRELOAD not passed
// on) never joins: the others give up after a bound and say so. A rank with
// another version or a bad configuration is named by the first such rank.
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/exit_status.hpp"
#include "config/loading.hpp"
#include "config/settings.hpp"

namespace mpisentry::monitor::handshake {

// This host's name, as every message and report names it; "unknown" when
// the system does not say.
std::string host_name();

// This rank, as every message of the handshake names it.
struct Place {
  int rank = 0;
  std::string host;
};
// "rank 2 (host node2)"
std::string str(const Place& place);

// Which checker a rank runs: its version and the library's file.
struct Identity {
  std::string version;
  std::string path;
};

// The first exchange's format, which must never change between versions so
// that any two versions can tell each other apart: kIdentityBytes chars,
// the version NUL-padded to kVersionBytes, then the path NUL-padded to the
// end. Longer texts are cut.
inline constexpr std::size_t kVersionBytes = 64;
inline constexpr std::size_t kIdentityBytes = 4096;
using IdentityBlock = std::array<char, kIdentityBytes>;
IdentityBlock encode(const Identity& identity);
Identity decode(const IdentityBlock& block);

// What this rank prints when it is the first rank with something wrong: its
// version differs from rank 0's, or its settings failed to load
// (`config_errors`). Empty when nothing is wrong with it.
std::vector<std::string> problems(const Place& me, const Identity& mine, const Identity& rank0,
                                  std::span<const config::Problem> config_errors);

// What a rank prints when the others did not all join within `bound`.
std::vector<std::string> unanswered(const Place& me, config::Duration bound);

// The status every rank ends with when the handshake fails: that of a bad
// configuration, which stops the job before the program starts.
inline constexpr int kStoppedStatus = config::kStoppedStatus;

enum class Outcome {
  Agreed,      // go on: the monitors' communicator is ready
  Refused,     // some rank runs another version or has a bad configuration; said by the first such rank
  Unanswered,  // some rank did not join within the bound; said by this rank
};

struct Result {
  Outcome outcome = Outcome::Agreed;
  MPI_Comm comm = MPI_COMM_NULL;  // the monitors' communicator, when Agreed
};

// Collective over MPI_COMM_WORLD, after PMPI_Init_thread: every rank joins
// within `bound` or none goes on. Prints what is wrong (above); the caller
// ends the process unless Agreed.
Result run(const Place& me, const Identity& mine, std::span<const config::Problem> config_errors,
           config::Duration bound);

}  // namespace mpisentry::monitor::handshake
