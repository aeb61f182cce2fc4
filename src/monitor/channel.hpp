// The monitors' conversation: a tree of TCP connections between the ranks'
// monitor threads, made once in MPI_Init. Never MPI: the program keeps the
// thread level it asked for, and no MPI call of the checker's thread can
// meet the program's. Every rank makes the same calls in the same order; a
// round costs each rank one message per tree link and direction, O(log P).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
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
  int pid = 0;                           // for reports of a rank the monitors lost
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

// A connection to another rank's monitor failed in a way that says nothing
// of the rank (a malformed message): checking can no longer go on in lockstep.
class ChannelBroken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A rank the monitors lost, as the rank that noticed it tells every other.
struct LostRank {
  enum class How : std::uint8_t {
    Ended,      // its monitor's connection closed or failed: the process is gone
    Silent,     // its monitor said nothing for the silence limit: stopped, or its node froze
    Ending,     // it said it ends: by a signal mpisentry handles (its own report says so), or MPI_Abort
  };
  int rank = -1;
  std::string host;
  int pid = 0;
  How how = How::Ended;
  int signal_number = 0;  // Ending: the signal, 0 for MPI_Abort
  std::int64_t at_ms = 0;  // when it was noticed, milliseconds since the epoch
  // Its state as its last round message told it (ranks: Channel::allreduce),
  // and how long before it was noticed; empty when no round carried one.
  std::string last_state;
  double state_age_seconds = 0;
  int noticed_by = -1;  // the rank whose monitor noticed it
};
std::string encode(const LostRank& lost);
// Throws std::invalid_argument on a malformed message.
LostRank decode_lost_rank(const std::string& bytes);

// A rank was lost: every rank still connected has been told (Channel
// passes it on before it throws), and checking cannot go on in lockstep.
class RankLost : public ChannelBroken {
 public:
  explicit RankLost(LostRank lost);
  const LostRank& lost() const { return lost_; }

 private:
  LostRank lost_;
};

// How a frame on a link is read: a frame is a kind byte, a length (u32, network order), the bytes.
enum class FrameKind : std::uint8_t {
  Data = 0,   // one step of a round
  Pulse = 1,  // the sender's process lives (Channel's pulse thread)
  Lost = 2,   // a LostRank, passed on to every link
};
struct Frame {
  FrameKind kind = FrameKind::Data;
  std::string bytes;
};
std::string frame(FrameKind kind, const std::string& bytes);
// Takes the complete frames off the front of `inbox`; throws
// std::invalid_argument on an unknown kind.
std::vector<Frame> take_frames(std::string& inbox);

class Channel {
 public:
  using Clock = std::chrono::steady_clock;
  // The longest MPI_Init waits for the tree's connections.
  static constexpr std::chrono::seconds kSetupBound{10};
  // The longest between two pulses.
  static constexpr std::chrono::milliseconds kLongestPulseGap{1000};

  // Collective over `comm` (a private communicator, the program's thread in
  // MPI_Init): every rank connects to its parent within kSetupBound. Null on
  // every rank when some link could not be made; each rank that failed has
  // said why, naming the ranks, hosts and addresses. A neighbour silent for
  // DEADLOCK-WARNING is lost.
  static std::unique_ptr<Channel> open(MPI_Comm comm, const config::Settings& settings);

  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  // close()
  ~Channel();
  // Stops the pulses and closes every link; what is called after throws
  // RankLost or does nothing (tell_ending). Not while the monitor's thread uses it.
  void close();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // From the monitor's thread once it runs: every live process pulses on
  // each link (kLongestPulseGap, or a quarter of the silence limit when
  // shorter), so that only a stopped process, or a monitor that showed no
  // sign of life for the silence limit outside bounded_work, falls silent.
  void start_pulses();
  // The monitor's thread shows it lives; while a BoundedWork lives it may
  // be busy without a sign (symbolizing, taking stacks), and still pulses.
  void alive();
  class BoundedWork {
   public:
    explicit BoundedWork(Channel* channel);
    ~BoundedWork();
    BoundedWork(const BoundedWork&) = delete;
    BoundedWork& operator=(const BoundedWork&) = delete;

   private:
    Channel* channel_;
  };

  // Every call below throws RankLost when a neighbour is lost (its link
  // closed, or it was silent for the silence limit) or news of a lost rank
  // arrives, and ChannelBroken on a malformed message.

  // Until `when`, or until `wake_fd` is readable, reading the links
  // meanwhile: a rank lost between rounds is known at once.
  void watch_until(Clock::time_point when, int wake_fd);
  // Every rank's summary combined. `my_state` (this rank's state in a
  // line, as a report prints it) goes to each neighbour with the round's
  // message; theirs are kept for a report of their loss.
  Summary allreduce(const Summary& mine, const std::string& my_state = {});
  // Everyone's string at rank 0 (index = rank); empty elsewhere.
  std::vector<std::string> gather(const std::string& mine);
  std::string broadcast(const std::string& value_at_root);
  std::int32_t broadcast(std::int32_t value_at_root);
  // From any thread: this rank ends, by `signal_number` (0: MPI_Abort);
  // each neighbour learns it before the link closes, and so does not take
  // the rank for lost. Never throws, never waits for long.
  void tell_ending(int signal_number);

 private:
  struct Link {
    int fd = -1;
    int rank = -1;
    std::string host;
    int pid = 0;
    std::string inbox;               // bytes read, not yet a whole frame
    std::deque<std::string> frames;  // data frames read, not yet taken
    Clock::time_point heard;         // when bytes last came
    std::string state;               // its last round's state, and when it came
    Clock::time_point state_at;
    bool at_end = false;     // it closed: lost once its frames are taken
    bool told_lost = false;  // a Lost frame went on it: no more frames
    std::unique_ptr<std::mutex> writing = std::make_unique<std::mutex>();  // monitor frames and pulses
  };
  Channel(int rank, int size, std::chrono::milliseconds silence_limit)
      : rank_(rank), size_(size), silence_limit_(silence_limit) {}
  std::vector<Link*> links();  // the open ones (the monitor's thread)
  std::vector<Link*> every_link();  // open or not: each read under its `writing` (other threads)
  void send(Link& link, const std::string& bytes, FrameKind kind = FrameKind::Data);
  std::string receive(Link& link);
  // Polls every link (and `wake_fd`, when not -1) until a data frame is on
  // `wanted` (when not null), `until`, or the wake fd is readable.
  void pump(Link* wanted, Clock::time_point until, int wake_fd);
  // Reads what `link` has; false at its end.
  bool read_some(Link& link);
  [[noreturn]] void lose(Link& link, LostRank::How how, const std::string& why);
  [[noreturn]] void pass_on(const Link& from, const LostRank& lost);
  void run_pulses();

  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds silence_limit_;
  Link parent_;  // fd -1 on rank 0
  std::vector<Link> children_;
  std::thread pulses_;
  std::mutex pulse_mutex_;
  std::condition_variable pulse_stop_;
  bool stopping_ = false;
  std::atomic<std::int64_t> alive_at_{0};  // Clock ticks of the monitor's last sign of life
  std::atomic<int> bounded_work_{0};
  std::atomic<bool> ending_{false};  // tell_ending was called
};

}  // namespace mpisentry::monitor
