#include "monitor/handshake.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>

#include "log/log.hpp"

namespace mpisentry::monitor::handshake {
namespace {

void copy_cut(const std::string& text, char* into, std::size_t room) {
  std::copy_n(text.data(), std::min(text.size(), room), into);
}

std::string until_nul(const char* from, std::size_t room) { return std::string(from, std::find(from, from + room, '\0')); }

// Completes `request` by PMPI_Test with growing sleeps (a rank that never
// joins must not hold this one). False when `deadline` passes first.
bool complete_by(MPI_Request& request, std::chrono::steady_clock::time_point deadline) {
  long pause_us = 50;
  int done = 0;
  while (PMPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    const timespec pause{0, pause_us * 1000};
    nanosleep(&pause, nullptr);
    pause_us = std::min(pause_us * 2, 2000L);
  }
  return true;
}

}  // namespace

std::string host_name() {
  std::array<char, HOST_NAME_MAX + 1> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

std::string str(const Place& place) { return "rank " + std::to_string(place.rank) + " (host " + place.host + ")"; }

IdentityBlock encode(const Identity& identity) {
  IdentityBlock block{};
  copy_cut(identity.version, block.data(), kVersionBytes);
  copy_cut(identity.path, block.data() + kVersionBytes, kIdentityBytes - kVersionBytes);
  return block;
}

Identity decode(const IdentityBlock& block) {
  return {until_nul(block.data(), kVersionBytes),
          until_nul(block.data() + kVersionBytes, kIdentityBytes - kVersionBytes)};
}

std::vector<std::string> problems(const Place& me, const Identity& mine, const Identity& rank0,
                                  std::span<const config::Problem> config_errors) {
  std::vector<std::string> lines;
  // Compared as rank 0 received it, so that a cut path still matches.
  const Identity sent = decode(encode(mine));
  if (sent.version != rank0.version)
    lines.push_back(str(me) + " runs mpisentry " + sent.version + " (from " + sent.path + "), rank 0 runs " +
                    rank0.version + " (from " + rank0.path + "): every rank must preload the same mpisentry");
  for (const config::Problem& problem : config_errors) lines.push_back(str(me) + ": " + problem.str());
  if (lines.empty()) return lines;
  lines.push_back(std::string(config_errors.empty() ? "" : "bad configuration: ") +
                  "every rank stops before the program starts, with exit status " + std::to_string(kStoppedStatus));
  return lines;
}

std::vector<std::string> unanswered(const Place& me, config::Duration bound) {
  return {str(me) + ": the checker in some ranks did not answer in MPI_Init within " + config::format_duration(bound) +
              " (DEADLOCK-TIMEOUT)",
          "likely causes: the mpisentry library is missing on some host (look for ld.so's \"cannot be preloaded\" "
          "line in the job's output), or the launcher did not pass LD_PRELOAD on to every rank",
          "ending the job with MPI_Abort, exit status " + std::to_string(kStoppedStatus)};
}

Result run(const Place& me, const Identity& mine, std::span<const config::Problem> config_errors,
           config::Duration bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  Result result;
  const auto complete = [&](MPI_Request& request) {
    if (complete_by(request, deadline)) return true;
    for (const std::string& line : unanswered(me, bound)) log::error("{}", line);
    result.outcome = Outcome::Unanswered;
    return false;
  };

  // Nonblocking, so that a rank that never joins cannot hold this one.
  MPI_Request request;
  PMPI_Comm_idup(MPI_COMM_WORLD, &result.comm, &request);
  if (!complete(request)) return result;

  // The first exchange (see kIdentityBytes), then the agreement on the first
  // rank with something wrong: neither may ever change.
  IdentityBlock block = encode(mine);
  PMPI_Ibcast(block.data(), static_cast<int>(block.size()), MPI_CHAR, 0, result.comm, &request);
  if (!complete(request)) return result;
  const std::vector<std::string> lines = problems(me, mine, decode(block), config_errors);
  int mine_if_wrong = lines.empty() ? INT_MAX : me.rank;
  int first_wrong = INT_MAX;
  PMPI_Iallreduce(&mine_if_wrong, &first_wrong, 1, MPI_INT, MPI_MIN, result.comm, &request);
  if (!complete(request)) return result;
  if (first_wrong == INT_MAX) return result;

  if (first_wrong == me.rank)
    for (const std::string& line : lines) log::error("{}", line);
  PMPI_Comm_free(&result.comm);
  result.outcome = Outcome::Refused;
  return result;
}

}  // namespace mpisentry::monitor::handshake
