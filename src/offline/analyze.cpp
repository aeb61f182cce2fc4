#include "offline/analyze.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <cstdint>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mpisentry::offline::analyze {

using recording::CommLog;
using recording::kAnyPeer;
using recording::kAnyTag;
using recording::kSelfComm;
using recording::kWorldComm;
using recording::Op;
using recording::OpKind;

bool Outcome::deadlock() const {
  return std::ranges::any_of(stopped, [](const Stopped& stop) { return !stop.after_cut; });
}

std::vector<Choice> Outcome::deadlock_choices() const {
  std::vector<Choice> made;
  for (const Choice& choice : choices)
    if (std::ranges::any_of(stopped, [&](const Stopped& stop) { return stop.rank == choice.rank && !stop.after_cut; }))
      made.push_back(choice);
  return made;
}

namespace {

[[noreturn]] void cannot(const CommLog& log, const Op& op, std::string_view problem) {
  throw std::invalid_argument(fmt::format("rank-{}.log line {}: {}", log.rank, op.line, problem));
}

// The members of every communicator the logs use, as MPI_COMM_WORLD ranks.
class Members {
 public:
  explicit Members(const std::vector<CommLog>& logs) : world_size_(static_cast<int>(logs.size())) {
    for (const CommLog& log : logs)
      for (const auto& [id, comm] : log.comms) {
        const auto [known, added] = comms_.try_emplace(id, comm);
        if (!added && (known->second.members != comm.members || known->second.inter != comm.inter))
          throw std::invalid_argument(fmt::format(
              "rank-{}.log: communicator {} has members {} here and {} in another rank's log: the logs are not of "
              "one run",
              log.rank, id, fmt::join(comm.members, " "), fmt::join(known->second.members, " ")));
      }
  }
  // How many ranks `comm` has; 0 for an inter-communicator.
  int size(std::uint64_t comm) const {
    if (comm == kWorldComm) return world_size_;
    if (comm == kSelfComm) return 1;
    const recording::Communicator& c = comms_.at(comm);
    return c.inter ? 0 : static_cast<int>(c.members.size());
  }
  int world_rank(std::uint64_t comm, int rank, int self) const {
    if (comm == kWorldComm) return rank;
    if (comm == kSelfComm) return self;
    return comms_.at(comm).members[static_cast<std::size_t>(rank)];
  }
  template <typename Visit>
  void each_member(std::uint64_t comm, int self, Visit&& visit) const {
    for (int rank = 0, n = size(comm); rank < n; ++rank) visit(world_rank(comm, rank, self));
  }

 private:
  int world_size_;
  std::unordered_map<std::uint64_t, recording::Communicator> comms_;
};

bool waits_for(OpKind kind) { return kind == OpKind::WaitAll || kind == OpKind::WaitAny; }
bool has_comm(OpKind kind) { return !waits_for(kind) && kind != OpKind::Opaque; }
bool sends(OpKind kind) { return kind == OpKind::Send || kind == OpKind::StartSend || kind == OpKind::SendReceive; }
bool receives(OpKind kind) {
  return kind == OpKind::Receive || kind == OpKind::StartReceive || kind == OpKind::SendReceive;
}

// The source and tag an operation receives with (a SendReceive's second half).
int source_of(const Op& op) { return op.kind == OpKind::SendReceive ? op.source : op.peer; }
int receive_tag_of(const Op& op) { return op.kind == OpKind::SendReceive ? op.receive_tag : op.tag; }

std::string peer_text(int value) { return value == kAnyPeer ? "*" : std::to_string(value); }

// ---------------------------------------------------------------------------
// The run.

// What the run's maps are keyed by, each map by one kind: a channel (dest,
// sender, comm), a place (dest, comm, tag; sender kAnyPeer), a rank's
// communicator (dest, comm), a count (dest, sender or kAnyPeer, comm, tag or
// kAnyTag).
struct Key {
  int dest, sender;
  std::uint64_t comm;
  int tag;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::uint64_t h = k.comm * 0x9e3779b97f4a7c15ULL;
    h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.dest)) << 32 | static_cast<std::uint32_t>(k.sender)) +
         0x7f4a7c159e3779b9ULL + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint32_t>(k.tag) + (h << 6) + (h >> 2);
    return h;
  }
};

struct Message {
  int sender, dest, tag;
  std::uint64_t comm;
  bool sender_waits;   // it completes when received (synchronous, or zero buffering)
  std::uint64_t request;  // the sender's, 0: a blocking send
  bool matched = false;
};

struct Receive {
  int rank;
  std::uint64_t comm;
  int source, tag;  // MPI_COMM_WORLD rank or kAnyPeer; kAnyTag
  std::size_t op;
  std::uint64_t request;  // 0: a blocking receive
  bool matched = false;
  bool matches(const Message& m) const {
    return (source == kAnyPeer || source == m.sender) && (tag == kAnyTag || tag == m.tag);
  }
  // Whether it is one of the receives counted for (sender, tag) `key`: its
  // source and tag are within the key's.
  bool counts_in(const Key& key) const {
    return (key.sender == kAnyPeer || key.sender == source) && (key.tag == kAnyTag || key.tag == tag);
  }
};

struct Collective {
  int arrived = 0;
  std::vector<std::pair<int, std::uint64_t>> requests;  // nonblocking ones' (rank, request)
};

struct RankState {
  std::size_t pc = 0;
  bool begun = false;   // ops[pc]'s posts are made
  bool queued = false;
  int message = -1, receive = -1;  // of ops[pc]
  std::uint64_t collective = 0;    // ops[pc]'s: its sequence number on its communicator
  struct Request {
    bool complete = false;
    std::size_t op = 0;             // its start
    int message = -1, receive = -1;  // a send's, a receive's
    std::uint64_t collective = 0;   // a collective's sequence number
  };
  std::unordered_map<std::uint64_t, Request> requests;  // started, by number
  std::unordered_map<std::uint64_t, std::uint64_t> collectives_entered;  // by communicator
};

class Run {
 public:
  Run(const std::vector<CommLog>& logs, Buffering buffering)
      : logs_(logs), members_(logs), buffering_(buffering), ranks_(logs.size()) {
    // How many messages each destination will get, and how many its
    // receives will take, counted by (sender, tag), (sender, any tag), (any
    // sender, tag) and (any sender, any tag): a receive counts in those its
    // source and tag are within.
    for (const CommLog& log : logs)
      for (const Op& op : log.ops) {
        if (sends(op.kind))
          for (const Key& key : counts_of(world(log, op, op.peer), log.rank, op.comm, op.tag))
            ++left(key).messages;
        if (receives(op.kind))
          for (const Key& key : receive_counts(log.rank, world(log, op, source_of(op)), op.comm,
                                               receive_tag_of(op)))
            ++left(key).receives;
      }
  }

  Outcome go() {
    for (int rank = 0; rank < static_cast<int>(logs_.size()); ++rank) wake(rank);
    for (;;) {
      while (!runnable_.empty() || !to_match_.empty()) {
        if (!to_match_.empty()) {
          const Key place = to_match_.front();
          to_match_.pop_front();
          match(place.dest, place.comm);
          continue;
        }
        const int rank = runnable_.front();
        runnable_.pop_front();
        ranks_[rank].queued = false;
        advance(rank);
      }
      if (!take_a_wildcard()) break;
    }
    return outcome();
  }

 private:
  struct Left {
    std::int64_t messages = 0;  // sent or to be sent, not yet received
    std::int64_t receives = 0;  // receives counted here, not yet matched
  };
  Left& left(const Key& key) { return left_[key]; }
  // The counts a message from `sender` with `tag` to `dest` is in, by these indices.
  static constexpr std::size_t kSenderTag = 0, kSender = 1, kTag = 2;
  static std::array<Key, 4> counts_of(int dest, int sender, std::uint64_t comm, int tag) {
    return {Key{dest, sender, comm, tag}, Key{dest, sender, comm, kAnyTag}, Key{dest, kAnyPeer, comm, tag},
            Key{dest, kAnyPeer, comm, kAnyTag}};
  }
  static std::array<Key, 4> counts_of(const Message& m) { return counts_of(m.dest, m.sender, m.comm, m.tag); }
  // The counts a receive from `source` (or kAnyPeer) with `tag` (or kAnyTag) is in.
  static std::vector<Key> receive_counts(int rank, int source, std::uint64_t comm, int tag) {
    std::vector<Key> keys;
    for (const int each_source : {source, kAnyPeer})
      for (const int each_tag : {tag, kAnyTag})
        if (const Key key{rank, each_source, comm, each_tag}; std::ranges::find(keys, key) == keys.end())
          keys.push_back(key);
    return keys;
  }
  // The unmatched messages of a count (never the count of any sender and any
  // tag, which every receive is in).
  std::vector<int> messages_within(const Key& key) {
    std::vector<int> ids;
    const auto add = [&](const auto& queue, bool any_tag) {
      for (const int id : queue)
        if (!messages_[id].matched && (any_tag || messages_[id].tag == key.tag)) ids.push_back(id);
    };
    if (key.sender != kAnyPeer) add(channels_[channel_key(key.dest, key.sender, key.comm)], key.tag == kAnyTag);
    else if (key.tag != kAnyTag) add(arrived_[place_key(key.dest, key.comm, key.tag)], true);
    return ids;
  }
  static Key channel_key(int dest, int sender, std::uint64_t comm) { return {dest, sender, comm, 0}; }
  static Key place_key(int rank, std::uint64_t comm, int tag) { return {rank, kAnyPeer, comm, tag}; }
  static Key rank_comm_key(int rank, std::uint64_t comm) { return {rank, kAnyPeer, comm, 0}; }

  void wake(int rank) {
    if (ranks_[rank].queued) return;
    ranks_[rank].queued = true;
    runnable_.push_back(rank);
  }

  // The MPI_COMM_WORLD rank of `op`'s peer `rank` (kAnyPeer stays).
  int world(const CommLog& log, const Op& op, int rank) const {
    return rank == kAnyPeer ? kAnyPeer : members_.world_rank(op.comm, rank, log.rank);
  }

  void advance(int rank) {
    const CommLog& log = logs_[rank];
    RankState& state = ranks_[rank];
    while (state.pc < log.ops.size()) {
      const Op& op = log.ops[state.pc];
      if (!state.begun) {
        begin(rank, op);
        state.begun = true;
        if (op.request != 0) {
          RankState::Request& started = state.requests[op.request];  // complete as begin() found it
          started.op = state.pc;
          started.message = state.message;
          started.receive = state.receive;
          started.collective = state.collective;
        }
      }
      if (!done(rank, op)) return;
      ++state.pc;
      state.begun = false;
      state.message = state.receive = -1;
    }
  }

  bool sender_waits(const Op& op) const {
    return op.mode == SendMode::Synchronous || (op.mode == SendMode::Standard && buffering_ == Buffering::Zero);
  }

  void begin(int rank, const Op& op) {
    const CommLog& log = logs_[rank];
    RankState& state = ranks_[rank];
    const std::size_t index = state.pc;
    switch (op.kind) {
      case OpKind::Send:
      case OpKind::SendReceive:
      case OpKind::StartSend: {
        const bool waits = sender_waits(op);
        const std::uint64_t request = op.kind == OpKind::StartSend ? op.request : 0;
        if (request != 0) state.requests[request].complete = !waits;
        if (op.kind == OpKind::SendReceive) state.receive = post_receive(rank, op, index, 0);
        state.message = post_message(rank, world(log, op, op.peer), op.tag, op.comm, waits, request);
        break;
      }
      case OpKind::Receive:
      case OpKind::StartReceive: {
        const std::uint64_t request = op.kind == OpKind::StartReceive ? op.request : 0;
        if (request != 0) state.requests[request].complete = false;
        state.receive = post_receive(rank, op, index, request);
        break;
      }
      case OpKind::Collective:
      case OpKind::StartCollective: {
        const std::uint64_t sequence = ++state.collectives_entered[op.comm];
        state.collective = sequence;
        Collective& collective = collectives_[{op.comm, sequence}];
        if (op.kind == OpKind::StartCollective) {
          state.requests[op.request].complete = false;
          collective.requests.emplace_back(rank, op.request);
        }
        if (++collective.arrived == members_.size(op.comm)) {
          for (const auto& [member, request] : collective.requests) ranks_[member].requests[request].complete = true;
          members_.each_member(op.comm, rank, [&](int member) { wake(member); });
        }
        break;
      }
      case OpKind::Probe:
      case OpKind::WaitAll:
      case OpKind::WaitAny:
      case OpKind::Opaque: break;
    }
  }

  bool done(int rank, const Op& op) {
    RankState& state = ranks_[rank];
    const auto complete = [&](std::uint64_t request) { return state.requests.at(request).complete; };
    switch (op.kind) {
      case OpKind::Send: return !messages_[state.message].sender_waits || messages_[state.message].matched;
      case OpKind::Receive: return receives_[state.receive].matched;
      case OpKind::SendReceive:
        return receives_[state.receive].matched &&
               (!messages_[state.message].sender_waits || messages_[state.message].matched);
      case OpKind::Probe: return probe_finds(rank, op);
      case OpKind::Collective: return collectives_.at({op.comm, state.collective}).arrived == members_.size(op.comm);
      case OpKind::StartSend:
      case OpKind::StartReceive:
      case OpKind::StartCollective: return true;
      case OpKind::WaitAll: return std::ranges::all_of(op.requests, complete);
      case OpKind::WaitAny: return op.requests.empty() || std::ranges::any_of(op.requests, complete);
      case OpKind::Opaque: return true;  // validate() refuses them
    }
    return true;
  }

  // ----- messages and receives

  int post_message(int sender, int dest, int tag, std::uint64_t comm, bool waits, std::uint64_t request) {
    const int id = static_cast<int>(messages_.size());
    messages_.push_back({sender, dest, tag, comm, waits, request});
    channels_[channel_key(dest, sender, comm)].push_back(id);
    std::deque<int>& arrived = arrived_[place_key(dest, comm, tag)];
    if (arrived.empty()) {
      std::vector<int>& tags = tags_[rank_comm_key(dest, comm)];
      if (std::ranges::find(tags, tag) == tags.end()) tags.push_back(tag);
    }
    arrived.push_back(id);
    const std::array<Key, 4> counts = counts_of(messages_.back());
    const Key place = place_key(dest, comm, tag);
    if (slack(counts[kSenderTag]) <= 0 || slack(counts[kSender]) <= 0) starving_.by_sender[place].push_back(id);
    if (slack(counts[kTag]) <= 0) starving_.by_tag[place].push_back(id);
    if (left(counts[kSenderTag]).receives > 0 || left(counts[kSender]).receives > 0)
      needed_.by_sender[place].push_back(id);
    if (left(counts[kTag]).receives > 0) needed_.by_tag[place].push_back(id);
    wildcard_ready(dest, comm);
    to_match_.push_back(rank_comm_key(dest, comm));
    wake(dest);  // a probe may find it
    return id;
  }

  int post_receive(int rank, const Op& op, std::size_t index, std::uint64_t request) {
    const int source = source_of(op);
    const int id = static_cast<int>(receives_.size());
    receives_.push_back({rank, op.comm, world(logs_[rank], op, source),
                         receive_tag_of(op), index, request});
    posted_[rank_comm_key(rank, op.comm)].push_back(id);
    if (source == kAnyPeer) wildcard_ready(rank, op.comm);
    to_match_.push_back(rank_comm_key(rank, op.comm));
    return id;
  }

  std::int64_t slack(const Key& key) {
    const Left& l = left(key);
    return l.messages - l.receives;
  }
  // The count in which receive `r` taking message `m` leaves a later receive
  // without a message: one `r` is not counted in (its taking lowers the
  // messages and not the receives) whose every message left is one a
  // receive waits for.
  std::optional<Key> starved(const Message& m, const Receive& r) {
    for (const Key& key : counts_of(m))
      if (!r.counts_in(key) && slack(key) <= 0) return key;
    return std::nullopt;
  }
  // Whether a later receive that `r` is not counted with waits for m.
  bool needed(const Message& m, const Receive& r) {
    const std::array<Key, 4> counts = counts_of(m);
    return std::ranges::any_of(counts, [&](const Key& key) { return !r.counts_in(key) && left(key).receives > 0; });
  }

  // The first message of `sender` to `dest` on `comm` that `receive` matches.
  int first_match(const Receive& receive, int sender) {
    auto found = channels_.find(channel_key(receive.rank, sender, receive.comm));
    if (found == channels_.end()) return -1;
    std::deque<int>& queue = found->second;
    while (!queue.empty() && messages_[queue.front()].matched) queue.pop_front();
    for (const int id : queue)
      if (!messages_[id].matched && receive.matches(messages_[id])) return id;
    return -1;
  }

  // The receives on (rank, comm) posted before `receive`, not matched, that
  // match message `id`: MPI gives it to the first of them.
  bool taken_earlier(const std::deque<int>& posted, int receive, int id) const {
    for (const int earlier : posted) {
      if (earlier == receive) return false;
      if (!receives_[earlier].matched && receives_[earlier].matches(messages_[id])) return true;
    }
    return false;
  }

  // Receives from one source take their messages, in the order posted.
  void match(int rank, std::uint64_t comm) {
    std::deque<int>& posted = posted_[rank_comm_key(rank, comm)];
    while (!posted.empty() && receives_[posted.front()].matched) posted.pop_front();
    for (const int id : posted) {
      const Receive& receive = receives_[id];
      if (receive.matched || receive.source == kAnyPeer) continue;
      const int message = first_match(receive, receive.source);
      if (message >= 0 && !taken_earlier(posted, id, message)) pair(id, message);
    }
  }

  void pair(int receive_id, int message_id) {
    Receive& receive = receives_[receive_id];
    Message& message = messages_[message_id];
    receive.matched = message.matched = true;
    for (const Key& key : counts_of(message)) {
      --left(key).messages;
      if (receive.counts_in(key)) {
        --left(key).receives;
      } else if (slack(key) == 0) {
        // Every message of this count left is now one a receive waits for.
        auto& lists = key.sender == kAnyPeer ? starving_.by_tag : starving_.by_sender;
        for (const int id : messages_within(key)) lists[place_key(key.dest, key.comm, messages_[id].tag)].push_back(id);
      }
    }
    if (receive.request != 0) ranks_[receive.rank].requests[receive.request].complete = true;
    if (message.request != 0) ranks_[message.sender].requests[message.request].complete = true;
    wake(receive.rank);
    wake(message.sender);
    to_match_.push_back(rank_comm_key(receive.rank, receive.comm));  // later receives may take what it held back
  }

  bool probe_finds(int rank, const Op& op) {
    const int source = world(logs_[rank], op, op.peer);
    const Receive probe{rank, op.comm, source, op.tag, 0, 0};
    if (source != kAnyPeer) return first_match(probe, source) >= 0;
    for (const Key& place : places(rank, op.comm, op.tag)) {
      std::deque<int>& arrived = arrived_[place];
      while (!arrived.empty() && messages_[arrived.front()].matched) arrived.pop_front();
      if (!arrived.empty()) return true;
    }
    return false;
  }

  // Where messages to `rank` on `comm` of `tag` (or of every tag) wait.
  std::vector<Key> places(int rank, std::uint64_t comm, int tag) {
    if (tag != kAnyTag) return {place_key(rank, comm, tag)};
    std::vector<Key> found;
    for (const int each : tags_[rank_comm_key(rank, comm)]) found.push_back(place_key(rank, comm, each));
    return found;
  }

  // ----- receives from MPI_ANY_SOURCE

  void wildcard_ready(int rank, std::uint64_t comm) { ready_.push_back(rank_comm_key(rank, comm)); }

  // When nothing else can go on: one receive from MPI_ANY_SOURCE takes a
  // message, one that starves a later receive if it can. False when none can.
  bool take_a_wildcard() {
    while (!ready_.empty()) {
      const Key place = ready_.front();
      ready_.pop_front();
      std::deque<int>& posted = posted_[place];
      for (const int id : posted) {
        const Receive& receive = receives_[id];
        if (receive.matched || receive.source != kAnyPeer) continue;
        const auto [message, reason] = candidate(posted, id);
        if (message < 0) continue;
        choices_.push_back({receive.rank, receive.op, messages_[message].sender, messages_[message].tag, reason});
        ready_.push_front(place);  // its next receive from MPI_ANY_SOURCE, after the others went on
        pair(id, message);
        return true;
      }
    }
    return false;
  }

  // Message `id` as wildcard receive `receive` may take it: its sender's
  // first that it matches, and no earlier receive's.
  bool takeable(const std::deque<int>& posted, int receive, int id) {
    const Message& m = messages_[id];
    return !m.matched && receives_[receive].matches(m) && first_match(receives_[receive], m.sender) == id &&
           !taken_earlier(posted, receive, id);
  }

  // The message a wildcard receive takes: the first that starves a later
  // receive, else the first that a later receive waits for, else the first
  // that came. Entries that no receive can take any more go.
  std::pair<int, Reason> candidate(const std::deque<int>& posted, int receive_id) {
    const Receive& receive = receives_[receive_id];
    const std::vector<Key> where = places(receive.rank, receive.comm, receive.tag);
    // The first message in `wanted`'s lists at `where` that the receive may
    // take and `fits`; the lists by tag only for a receive of any tag (one
    // of one tag is counted with the others of its tag).
    const auto first_of = [&](Wanted& wanted, auto&& fits) -> int {
      for (auto* lists : {&wanted.by_sender, receive.tag == kAnyTag ? &wanted.by_tag : nullptr})
        for (const Key& place : where) {
          if (lists == nullptr) continue;
          std::vector<int>& ids = (*lists)[place];
          std::erase_if(ids, [&](int id) { return messages_[id].matched; });
          for (const int id : ids)
            if (takeable(posted, receive_id, id) && fits(messages_[id])) return id;
        }
      return -1;
    };
    if (const int id = first_of(starving_, [&](const Message& m) { return starved(m, receive).has_value(); }); id >= 0)
      return {id, starved(messages_[id], receive)->sender == kAnyPeer ? Reason::StarvesTag : Reason::Starves};
    if (const int id = first_of(needed_, [&](const Message& m) { return needed(m, receive); }); id >= 0)
      return {id, Reason::Needed};
    for (const Key& place : where) {
      std::deque<int>& arrived = arrived_[place];
      while (!arrived.empty() && messages_[arrived.front()].matched) arrived.pop_front();
      for (const int id : arrived)
        if (takeable(posted, receive_id, id)) return {id, Reason::First};
    }
    return {-1, Reason::First};
  }

  // ----- the outcome

  Outcome outcome() const {
    Outcome result;
    result.buffering = buffering_;
    result.choices = choices_;
    const int ranks = static_cast<int>(logs_.size());
    // Ranks waiting for a rank whose log ends (or for one that waits for
    // such a rank) wait for the end of the recorded run, not in a deadlock.
    std::vector<char> after_cut(ranks, 0);
    std::vector<std::vector<int>> waiters(ranks);
    std::deque<int> cut;
    std::vector<int> waiting_for_anyone;
    for (int rank = 0; rank < ranks; ++rank) {
      if (!stopped_in_op(rank)) {
        if (!logs_[rank].finalized) cut.push_back(rank);
        continue;
      }
      const Waited waited = waited_ranks(rank);
      if (waited.anyone) waiting_for_anyone.push_back(rank);
      for (const int other : waited.ranks) waiters[other].push_back(rank);
    }
    if (!cut.empty())
      for (const int rank : waiting_for_anyone)
        if (!after_cut[rank]) {
          after_cut[rank] = 1;
          cut.push_back(rank);
        }
    while (!cut.empty()) {
      const int rank = cut.front();
      cut.pop_front();
      for (const int waiter : waiters[rank])
        if (!after_cut[waiter]) {
          after_cut[waiter] = 1;
          cut.push_back(waiter);
        }
    }
    for (int rank = 0; rank < ranks; ++rank) {
      const CommLog& log = logs_[rank];
      const RankState& state = ranks_[rank];
      if (stopped_in_op(rank))
        result.stopped.push_back({rank, state.pc, false, after_cut[rank] != 0, why(rank, log.ops[state.pc])});
      else if (!log.finalized)
        result.stopped.push_back({rank, state.pc, true, true,
                                  "its log ends here without MPI_Finalize: the recorded run went no further on "
                                  "this rank (it hung, crashed or was stopped)"});
    }
    return result;
  }

  bool stopped_in_op(int rank) const { return ranks_[rank].pc < logs_[rank].ops.size(); }

  // Whom a stopped rank waits for: ranks, or anyone (a receive from MPI_ANY_SOURCE).
  struct Waited {
    std::vector<int> ranks;
    bool anyone = false;
  };
  Waited waited_ranks(int rank) const {
    const RankState& state = ranks_[rank];
    const CommLog& log = logs_[rank];
    const Op& op = log.ops[state.pc];
    Waited waited;
    const auto source = [&](const Op& receive) {
      if (source_of(receive) == kAnyPeer) waited.anyone = true;
      else waited.ranks.push_back(world(log, receive, source_of(receive)));
    };
    const auto absent = [&](const Op& collective, std::uint64_t sequence) {
      const std::vector<int> members = absent_members(rank, collective, sequence);
      waited.ranks.insert(waited.ranks.end(), members.begin(), members.end());
    };
    const auto started = [&](const Op& start, std::uint64_t sequence) {
      if (start.kind == OpKind::StartSend) waited.ranks.push_back(world(log, start, start.peer));
      if (start.kind == OpKind::StartReceive) source(start);
      if (start.kind == OpKind::StartCollective) absent(start, sequence);
    };
    switch (op.kind) {
      case OpKind::Send: waited.ranks.push_back(messages_[state.message].dest); break;
      case OpKind::SendReceive:
        waited.ranks.push_back(messages_[state.message].dest);
        source(op);
        break;
      case OpKind::Receive:
      case OpKind::Probe: source(op); break;
      case OpKind::Collective: absent(op, state.collective); break;
      case OpKind::WaitAll:
      case OpKind::WaitAny:
        for (const std::uint64_t request : op.requests)
          if (const RankState::Request& start = state.requests.at(request); !start.complete) {
            started(log.ops[start.op], start.collective);
          }
        break;
      default: break;
    }
    return waited;
  }

  std::string rank_state(int rank) const {
    const RankState& state = ranks_[rank];
    const CommLog& log = logs_[rank];
    if (state.pc < log.ops.size()) return fmt::format("rank {} is stopped too", rank);
    return log.finalized ? fmt::format("rank {} has reached MPI_Finalize", rank)
                         : fmt::format("rank {}'s log ends", rank);
  }

  static std::string tag_text(int tag) { return tag == kAnyTag ? std::string("any tag") : fmt::format("tag {}", tag); }

  std::string sending_why(const Message& m, const Op& op) const {
    return fmt::format("its message ({}) waits for rank {} to receive it{}; {}", tag_text(m.tag), m.dest,
                       op.mode == SendMode::Synchronous ? "" : " (zero buffering)", rank_state(m.dest));
  }

  std::string receiving_why(int rank, const Receive& r) const {
    if (r.source == kAnyPeer) return fmt::format("no rank sends it a message it can take ({})", tag_text(r.tag));
    const auto found = left_.find(Key{rank, r.source, r.comm, r.tag});  // r.tag may be kAnyTag: any of them
    const bool none_left = found == left_.end() || found->second.messages <= 0;
    return fmt::format("it waits for a message from rank {} ({}): {}", r.source, tag_text(r.tag),
                       logs_[r.source].finalized && none_left
                           ? fmt::format("rank {} sends no more of them to it", r.source)
                           : rank_state(r.source));
  }

  // The members of `op`'s communicator that did not enter its collective #sequence.
  std::vector<int> absent_members(int rank, const Op& op, std::uint64_t sequence) const {
    std::vector<int> absent;
    members_.each_member(op.comm, rank, [&](int member) {
      const auto entered = ranks_[member].collectives_entered.find(op.comm);
      if (entered == ranks_[member].collectives_entered.end() || entered->second < sequence) absent.push_back(member);
    });
    return absent;
  }

  std::string collective_why(int rank, const Op& op, std::uint64_t sequence) const {
    const std::vector<int> absent = absent_members(rank, op, sequence);
    const std::size_t shown = std::min<std::size_t>(absent.size(), 8);
    return fmt::format("it waits for rank{} {}{} to enter collective #{} of communicator {}",
                       absent.size() == 1 ? "" : "s", fmt::join(absent.begin(), absent.begin() + shown, ", "),
                       absent.size() > shown ? fmt::format(" and {} more", absent.size() - shown) : "", sequence,
                       op.comm);
  }

  std::string why(int rank, const Op& op) const {
    const RankState& state = ranks_[rank];
    switch (op.kind) {
      case OpKind::Send:
      case OpKind::SendReceive:
        if (messages_[state.message].sender_waits && !messages_[state.message].matched)
          return sending_why(messages_[state.message], op);
        if (op.kind == OpKind::Send) break;
        return receiving_why(rank, receives_[state.receive]);
      case OpKind::Receive: return receiving_why(rank, receives_[state.receive]);
      case OpKind::Probe: return fmt::format("no message it matches comes ({})", tag_text(op.tag));
      case OpKind::Collective: return collective_why(rank, op, state.collective);
      case OpKind::WaitAll:
      case OpKind::WaitAny: {
        std::vector<std::string> open;
        for (const std::uint64_t request : op.requests) {
          const RankState::Request& start = state.requests.at(request);
          if (start.complete) continue;
          const Op& started = logs_[rank].ops[start.op];
          const std::string what = started.kind == OpKind::StartSend ? sending_why(messages_[start.message], started)
                                   : started.kind == OpKind::StartReceive
                                       ? receiving_why(rank, receives_[start.receive])
                                       : collective_why(rank, started, start.collective);
          open.push_back(fmt::format("request {} ({}, line {}): {}", request, started.function, started.line, what));
        }
        return fmt::format("it waits for {}", fmt::join(open, "; and for "));
      }
      default: break;
    }
    return "it cannot go on";
  }

  const std::vector<CommLog>& logs_;
  Members members_;
  Buffering buffering_;
  std::vector<RankState> ranks_;
  std::deque<int> runnable_;
  std::vector<Message> messages_;
  std::vector<Receive> receives_;
  std::unordered_map<Key, std::deque<int>, KeyHash> channels_;  // channel_key: unmatched messages, in order sent
  std::unordered_map<Key, std::deque<int>, KeyHash> arrived_;   // place_key: messages, in order sent
  // Messages a receive from MPI_ANY_SOURCE should take, by place_key: through
  // a count of their sender, or of their tag from any sender.
  struct Wanted {
    std::unordered_map<Key, std::vector<int>, KeyHash> by_sender, by_tag;
  };
  Wanted starving_;  // whose taking may leave a later receive without a message
  Wanted needed_;    // that a later receive waits for
  std::unordered_map<Key, std::deque<int>, KeyHash> posted_;     // (rank, comm): receives in order posted
  std::unordered_map<Key, Left, KeyHash> left_;
  struct PairHash {
    std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& p) const noexcept {
      return std::hash<std::uint64_t>()(p.first * 0x9e3779b97f4a7c15ULL ^ p.second);
    }
  };
  std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, Collective, PairHash> collectives_;
  std::unordered_map<Key, std::vector<int>, KeyHash> tags_;     // (rank, comm): the tags of messages to it
  std::deque<Key> to_match_;  // (rank, comm): receives to match again
  std::deque<Key> ready_;     // (rank, comm): where a wildcard receive may take a message now
  std::vector<Choice> choices_;
};

}  // namespace

void validate(const std::vector<CommLog>& logs) {
  if (logs.empty()) throw std::invalid_argument("no logs");
  for (std::size_t rank = 0; rank < logs.size(); ++rank) {
    const CommLog& log = logs[rank];
    if (log.rank != static_cast<int>(rank) || log.ranks != static_cast<int>(logs.size()))
      throw std::invalid_argument(fmt::format("rank-{}.log: its header says rank {} of {}, not rank {} of {}", rank,
                                              log.rank, log.ranks, rank, logs.size()));
  }
  const Members members(logs);
  for (const CommLog& log : logs) {
    std::unordered_map<std::uint64_t, bool> started;
    for (const Op& op : log.ops) {
      if (op.kind == OpKind::Opaque)
        cannot(log, op, fmt::format("{} may wait for other ranks in a way analyze does not model; it cannot analyze "
                                    "this run", op.function));
      if (has_comm(op.kind)) {
        const int size = members.size(op.comm);
        if (size == 0)
          cannot(log, op, fmt::format("{} on an inter-communicator, which analyze does not model", op.function));
        const auto check_rank = [&](int rank, std::string_view what) {
          if (rank != kAnyPeer && rank >= size)
            cannot(log, op, fmt::format("the {} {} is not a rank of communicator {} ({} ranks)", what, rank, op.comm,
                                        size));
        };
        if (sends(op.kind)) check_rank(op.peer, "destination");
        if (receives(op.kind) || op.kind == OpKind::Probe) check_rank(source_of(op), "source");
      }
      if (op.request != 0 && !started.emplace(op.request, true).second)
        cannot(log, op, fmt::format("request {} started twice", op.request));
      for (const std::uint64_t request : op.requests) {
        if (request == recording::kUnknownRequest)
          cannot(log, op, fmt::format("{} waits for a request that a call analyze does not model started", op.function));
        if (!started.contains(request))
          cannot(log, op, fmt::format("{} waits for request {}, which no line before starts", op.function, request));
      }
    }
  }
}

Outcome run(const std::vector<CommLog>& logs, Buffering buffering) { return Run(logs, buffering).go(); }

bool receives_from_any_source(const Op& op) { return receives(op.kind) && source_of(op) == kAnyPeer; }

namespace {

// The event a logged operation has in its rank's recording: a receive or
// probe from MPI_ANY_SOURCE has one (MPI_Mprobe's is a probe's), the starts
// of a persistent receive none (MPI cannot change their source).
std::optional<recording::Kind> event_kind(const Op& op) {
  if (op.kind == OpKind::Probe)
    return op.peer == kAnyPeer ? std::optional(recording::Kind::Probe) : std::nullopt;
  if (!receives_from_any_source(op) || op.function.find("_init") != std::string::npos) return std::nullopt;
  return op.function.starts_with("MPI_Mprobe") ? recording::Kind::Probe : recording::Kind::Receive;
}

// `world`'s rank in the communicator of `op`.
int comm_rank(const CommLog& log, const Op& op, int world) {
  if (op.comm == kWorldComm) return world;
  if (op.comm == kSelfComm) return 0;
  const std::vector<int>& members = log.comms.at(op.comm).members;
  return static_cast<int>(std::ranges::find(members, world) - members.begin());
}

// The event number of each of `log`'s operations that has one in its
// recording (`events`, among its Tests, Iprobes, ...), by operation; npos
// for the others, and past the recording's end.
std::vector<std::size_t> events_of_ops(const CommLog& log, const std::vector<recording::Event>& events,
                                       const std::string& file) {
  std::vector<std::size_t> numbers(log.ops.size(), std::string::npos);
  std::size_t event = 0;
  for (std::size_t op = 0; op < log.ops.size(); ++op) {
    const std::optional<recording::Kind> kind = event_kind(log.ops[op]);
    if (!kind) continue;
    while (event < events.size() && events[event].kind != recording::Kind::Receive &&
           events[event].kind != recording::Kind::Probe)
      ++event;
    if (event == events.size()) break;
    if (events[event].kind != *kind)
      throw std::invalid_argument(fmt::format("{}: event {} is `{}` where {} has its event: not the logged run's "
                                              "recording",
                                              file, event, recording::event_text(events[event]), op_text(log, op)));
    numbers[op] = event++;
  }
  return numbers;
}

}  // namespace

explore::Schedule forcing(const std::vector<CommLog>& logs, const std::vector<recording::Recording>& recordings,
                          const Outcome& outcome) {
  explore::Schedule schedule;
  std::map<int, std::vector<recording::Event>> events;  // of the ranks with choices
  std::map<int, std::vector<std::size_t>> numbers;
  for (const Choice& choice : outcome.choices) {
    const CommLog& log = logs.at(static_cast<std::size_t>(choice.rank));
    const std::string file = fmt::format("rank-{}.record", choice.rank);
    if (!events.contains(choice.rank)) {
      const recording::Recording& recorded = recordings.at(static_cast<std::size_t>(choice.rank));
      if (recorded.header.ranks != log.ranks || recorded.header.command != log.command)
        throw std::invalid_argument(fmt::format("{}: missing, or not of the logged run (rank-{}.log ran `{}`)", file,
                                                choice.rank, log.command));
      events[choice.rank] = recorded.events();
      numbers[choice.rank] = events_of_ops(log, events[choice.rank], file);
    }
    const std::vector<recording::Event>& recorded = events[choice.rank];
    // A persistent receive's start, or one past the end of a cut recording,
    // runs free: the run may then go otherwise, never falsely confirm.
    const std::size_t event = numbers[choice.rank][choice.op];
    if (event == std::string::npos) continue;
    std::vector<recording::Event>& forced = schedule.forced[choice.rank];
    // Up to this one, as recorded, but receives from MPI_ANY_SOURCE that no
    // choice forces run free.
    for (std::size_t i = forced.size(); i <= event; ++i) {
      forced.push_back(recorded[i]);
      if (forced.back().kind == recording::Kind::Receive) forced.back().value = recording::kUnknown;
    }
    forced[event].value = comm_rank(log, log.ops[choice.op], choice.sender);
    schedule.changes.push_back({choice.rank, event, recorded[event].value, forced[event].value, recorded[event].kind});
  }
  return schedule;
}

std::string op_text(const CommLog& log, std::size_t index) {
  const Op& op = log.ops.at(index);
  std::string call;
  switch (op.kind) {
    case OpKind::Send:
    case OpKind::StartSend: call = fmt::format("{}(dest {}, tag {}, comm {})", op.function, op.peer, op.tag, op.comm); break;
    case OpKind::Receive:
    case OpKind::StartReceive:
    case OpKind::Probe:
      call = fmt::format("{}(source {}, tag {}, comm {})", op.function, op.peer == kAnyPeer ? "MPI_ANY_SOURCE" : peer_text(op.peer),
                         op.tag == kAnyTag ? "MPI_ANY_TAG" : std::to_string(op.tag), op.comm);
      break;
    case OpKind::SendReceive:
      call = fmt::format("{}(dest {}, tag {}, source {}, tag {}, comm {})", op.function, op.peer, op.tag,
                         op.source == kAnyPeer ? "MPI_ANY_SOURCE" : peer_text(op.source),
                         op.receive_tag == kAnyTag ? "MPI_ANY_TAG" : std::to_string(op.receive_tag), op.comm);
      break;
    case OpKind::Collective:
    case OpKind::StartCollective: call = fmt::format("{}(comm {})", op.function, op.comm); break;
    case OpKind::WaitAll:
    case OpKind::WaitAny: call = fmt::format("{}(requests {})", op.function, fmt::join(op.requests, ", ")); break;
    case OpKind::Opaque: call = op.function; break;
  }
  if (op.request != 0) call += fmt::format(" as request {}", op.request);
  const auto site = log.sites.find(op.site);
  return fmt::format("{} at {}, rank-{}.log line {}", call, site == log.sites.end() ? "an unknown place" : site->second,
                     log.rank, op.line);
}

}  // namespace mpisentry::offline::analyze
