// Every point-to-point message this rank has started and matched, per
// communicator and peer: the monitor's account of the messages in flight.
// A rank counts each message it starts to a peer (any send mode, blocking
// or not, each start of a persistent or partitioned send, a send-receive's
// send) and each message it matches from one (a completed receive, by its
// status; a matched probe, which takes the message); a send that
// MPI_Cancel undid is taken back. With MPI_PROC_NULL nothing is counted.
// The peer's count of what it sent, less this rank's count of what it
// matched, is what is in flight between them (MessageTally). Each side also
// sums the tags and their squares (wrapping), from which the judge recovers
// the tags of up to two messages in flight.
//
// Writers are the program's threads in the wrappers: plain stores under a
// seqlock per peer below MPI_THREAD_MULTIPLE, a spin on the same word above
// it; the monitor reads without a lock and retries a torn read.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "model/snapshot.hpp"

namespace mpisentry::tallies {

// One communicator's account: a pair of tallies per peer (its rank among the
// communicator's peers: the remote group of an inter-communicator).
class CommTallies {
 public:
  CommTallies(std::uint64_t comm_id, std::vector<int> peers_world);
  std::uint64_t comm_id() const noexcept { return comm_id_; }

  void sent(int peer, int tag) noexcept { add(peer, tag, &Peer::sent, 1); }
  void unsent(int peer, int tag) noexcept { add(peer, tag, &Peer::sent, -1); }
  void matched(int peer, int tag) noexcept { add(peer, tag, &Peer::matched, 1); }

  // The monitor: the peers with a message started or matched, as snapshot entries.
  void append_to(std::vector<MessageTally>& out) const;

 private:
  struct Direction {
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> sum{0};
    std::atomic<std::uint64_t> squares{0};
  };
  struct Peer {
    std::atomic<std::uint64_t> sequence{0};  // odd while written
    Direction sent;
    Direction matched;
  };
  void add(int peer, int tag, Direction Peer::*direction, int step) noexcept;

  std::uint64_t comm_id_;
  std::vector<int> peers_world_;
  std::vector<Peer> peers_;
};

// Under MPI_THREAD_MULTIPLE several threads may count on one peer at once.
void set_concurrent_writers(bool concurrent) noexcept;

// A message was sent on a communicator whose tallies could not be had.
void lost() noexcept;

// The tallies of every communicator that carried a message, and whether
// some could not be kept (the list is full, or lost()): then any message may
// be in flight.
std::vector<MessageTally> collect(bool& incomplete);

// Made once per communicator, on its first message, and never freed: a
// request started on a communicator outlives a free of it. Null when there
// is no room left.
CommTallies* make(std::uint64_t comm_id, std::vector<int> peers_world);

}  // namespace mpisentry::tallies
