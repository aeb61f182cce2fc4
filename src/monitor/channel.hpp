// The monitors' conversation: nonblocking collectives on a private duplicate
// of MPI_COMM_WORLD, completed by PMPI_Test with short sleeps (never
// PMPI_Wait or sched_yield: a sleeping thread gets the CPU back sooner from
// ranks that busy-poll). Every rank makes the same
// calls in the same order.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "monitor/rounds.hpp"

namespace mpisentry::monitor {

// Completes `request` by PMPI_Test with growing sleeps. False when `deadline`
// passes first: the request is still pending.
bool complete_by(MPI_Request& request, std::optional<std::chrono::steady_clock::time_point> deadline);

class Channel {
 public:
  // Takes over `comm`, the private duplicate of MPI_COMM_WORLD that the
  // start-up handshake made.
  explicit Channel(MPI_Comm comm);
  // Collective over the private communicator (from MPI_Finalize).
  void close();

  int rank() const { return rank_; }
  int size() const { return size_; }

  Summary allreduce(const Summary& mine);
  // Everyone's string at rank 0 (index = rank); empty elsewhere.
  std::vector<std::string> gather(const std::string& mine);
  std::string broadcast(const std::string& value_at_root);
  std::int32_t broadcast(std::int32_t value_at_root);

 private:
  void complete(MPI_Request& request) { complete_by(request, std::nullopt); }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Op combine_op_ = MPI_OP_NULL;
  MPI_Datatype summary_type_ = MPI_DATATYPE_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace mpisentry::monitor
