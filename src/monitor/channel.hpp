// The monitors' conversation: a tree of TCP connections between the ranks'
// monitor threads, made once in MPI_Init. Never MPI: the program keeps the
// thread level it asked for, and no MPI call of the checker's thread can
// meet the program's. Every rank makes the same calls in the same order; a
// round costs each rank one message per tree link and direction, O(log P).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "monitor/rounds.hpp"

namespace mpisentry::monitor {

// Each rank's monitor connects to its parent's in a binomial tree, the shape
// of MPI's own reductions: rank r's parent is r without its lowest set bit,
// so the tree is ceil(log2 ranks) deep and no rank has more links than that
// plus one.
struct TreeLinks {
  int parent = -1;  // -1 for rank 0
  std::vector<int> children;
};
TreeLinks tree_links(int rank, int ranks);

// What a parent tells its children, over MPI in MPI_Init, so that they can connect.
struct Endpoint {
  std::string host;      // for messages
  std::string host_key;  // equal on ranks that share a network stack: they connect over loopback
  int port = 0;
  std::vector<std::uint32_t> addresses;  // IPv4, host byte order, the order to try them in
  std::uint64_t token = 0;               // a child proves with it that it belongs to this job
  std::string error;                     // why the parent cannot take connections; then nothing else is set
};
std::string encode(const Endpoint& endpoint);
// Throws std::invalid_argument on a malformed text.
Endpoint decode_endpoint(const std::string& text);
// The addresses to try, in order: loopback first when both ends share a
// network stack (`same_stack`), last otherwise.
std::vector<std::uint32_t> connect_order(const Endpoint& parent, bool same_stack);
// "10.77.0.1:40001"
std::string address_text(std::uint32_t address, int port);

// A connection to another rank's monitor closed or failed: checking can no
// longer go on in lockstep.
class ChannelBroken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Channel {
 public:
  // The longest MPI_Init waits for the tree's connections.
  static constexpr std::chrono::seconds kSetupBound{10};

  // Collective over `comm` (a private communicator, the program's thread in
  // MPI_Init): every rank connects to its parent within kSetupBound. Empty on
  // every rank when some link could not be made; each rank that failed has
  // said why, naming the ranks, hosts and addresses.
  static std::optional<Channel> open(MPI_Comm comm, const config::Settings& settings);

  Channel(Channel&& other) noexcept;
  Channel& operator=(Channel&&) = delete;
  ~Channel();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Each throws ChannelBroken when a connection fails.
  Summary allreduce(const Summary& mine);
  // Everyone's string at rank 0 (index = rank); empty elsewhere.
  std::vector<std::string> gather(const std::string& mine);
  std::string broadcast(const std::string& value_at_root);
  std::int32_t broadcast(std::int32_t value_at_root);

 private:
  struct Link {
    int fd = -1;
    int rank = -1;
    std::string host;
  };
  Channel(int rank, int size) : rank_(rank), size_(size) {}
  void send(const Link& link, const std::string& bytes);
  std::string receive(const Link& link);

  int rank_ = 0;
  int size_ = 1;
  Link parent_;  // fd -1 on rank 0
  std::vector<Link> children_;
};

}  // namespace mpisentry::monitor
