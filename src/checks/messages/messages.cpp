#include "checks/messages/messages.hpp"

#include <link.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "findings/findings.hpp"
#include "trackers/race_clock.hpp"
#include "trackers/requests.hpp"
#include "trackers/signature.hpp"
#include "trackers/stable_map.hpp"
#include "trackers/thread_lock.hpp"
#include "log/log.hpp"
#include "records/communicators.hpp"
#include "records/tick.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::checks {

namespace detail {
bool shadowing = false;
bool judging_races = false;
}

namespace {

// The message checks that are on.
struct MessageChecks {
  bool datatype = false;  // GLOBAL:MSG:DATATYPE:MISMATCH
  bool pending = false;   // GLOBAL:MSG:PENDING
  bool race = false;      // GLOBAL:MSG:RACE
  int max_pending = 20;   // CHECK-MAX-PENDING
  // LOCAL:MEMORY:ILLEGAL_MODIFICATION of receive buffers: a record carries
  // its send buffer's checksum, which a nonblocking receive compares with
  // the bytes it holds when completed. Needs the channel (another check
  // above on); not at MPI_THREAD_MULTIPLE, where records may pair with
  // another thread's receive.
  bool receive_buffers = false;
};

// Records an outbox holds before it goes as one batch: a batch of 64 is
// about 4 KiB, an eager message for MPI.
constexpr std::size_t kBatch = 64;

// The tag of batches on a shadow communicator, which carries nothing else.
constexpr int kBatchTag = 1;

// One sent message as its receiver gets it. Trivially copyable and the same
// on every rank (MPI_Init's handshake makes sure every rank runs this build).
struct Record {
  std::uint64_t number = 0;  // this sender's count of records, from 1
  std::int64_t count = 0;
  std::int64_t bytes = 0;
  std::uint64_t hash = 0;
  std::uint64_t call_site = 0;  // offset in the sender's executable + 1; 0: elsewhere
  std::int64_t sent_at = 0;     // GLOBAL:MSG:RACE: race_clock() once the send call started it; 0 without it
  std::uint64_t data_sum = 0;   // the send buffer's checksum, with kSummed (MessageChecks::receive_buffers)
  std::int32_t tag = 0;
  std::uint32_t type_text = 0;  // offset of the sender's datatype text in its batch
  std::uint16_t function = 0;   // FunctionId
  std::uint8_t flags = 0;
};
constexpr std::uint8_t kUntyped = 1, kKnown = 2, kMultipleThreads = 4, kCancel = 8, kSynchronous = 16, kSummed = 32;
static_assert(std::is_trivially_copyable_v<Record>);

// A batch on the wire: the header, `records` Records, then `text_bytes` of
// datatype texts, each ended by a NUL.
struct BatchHeader {
  std::uint32_t magic = 0x6d736231;  // "msb1"
  std::uint32_t records = 0;
  std::uint32_t text_bytes = 0;
};

// A record in its sender's outbox, with its datatype for the batch's text.
struct Outgoing {
  Record record;
  TypeRef type;
};

struct Outbox {
  std::vector<Outgoing> records;
};

// A record that arrived, waiting for its receive (or found pending).
struct Arrived {
  Record record;
  std::uint32_t type_text;  // index into the shadow's texts
};

// A receive that completed before its record arrived.
struct Taken {
  bool compare = false;  // the datatype check compares it (in order, type known, single thread)
  bool summed = false;   // its buffer's checksum is in data_sum (MessageChecks::receive_buffers; as in order)
  std::uint64_t data_sum = 0;
  const void* buffer = nullptr;
  FunctionId function = FunctionId::None;
  std::int64_t count = 0;
  std::int64_t received_bytes = 0;
  TypeRef type;
  const void* posted_at = nullptr;
  const void* completed_at = nullptr;
  std::uint64_t order = 0;  // GLOBAL:MSG:RACE: the rank's count of receives when it completed
  std::int64_t passed_over_at = 0;  // Receive::passed_over_at
  const void* passed_over_by = nullptr;
};

// GLOBAL:MSG:RACE. A receive from MPI_ANY_SOURCE raced with another rank
// when a message of that rank that it matches (communicator and tag) was
// sent before the receive returned and received only after it, or never:
// nothing the receiving rank did after it learnt which message it got can
// have caused that message, so with other timing the receive could have
// taken it. "Before" is read on CLOCK_MONOTONIC, which orders events as
// causality does within one kernel; a Lamport clock would need the sender's
// value at the receive, which a batched record brings only later. Ranks that
// read other clocks (another kernel or time namespace) are not compared. Not
// judged: a receive while a receive started before it was active on its
// communicator or a message probed by MPI_Mprobe was left to receive (MPI
// might have had to give that one the other message first), and one whose
// own message came from a synchronous send (that send returned once the
// receive matched it, before the receive returned, and its sender may have
// caused the other message then).
//
// Records arrive in batches, late: the receives wait for them in a window of
// the last kRaceWindow per communicator, and a message is compared with at
// most kRaceScan of them (the earliest that completed after it was sent).
constexpr std::size_t kRaceWindow = 4096;
constexpr std::size_t kRaceScan = 64;

// A receive or probe from MPI_ANY_SOURCE, in a window. A probe judges as a
// receive would that completed then: MPI gives a message to an active receive
// before a probe sees it, and no receive was active.
struct Wildcard {
  // Its own message: known when its record pairs with the receive (a probe
  // matches nothing: Ordinary).
  enum class Own : std::uint8_t { Unknown, Ordinary, Synchronous };
  std::uint64_t order;  // the rank's count of receives when it completed (a probe: those before it)
  std::int64_t at;      // when it returned (race_clock)
  int tag;              // as posted: MPI_ANY_TAG too
  int source;           // the comm rank whose message it took
  std::uint32_t place;  // in MessagesState::race_places
  Own own = Own::Unknown;
  bool counted = false;       // its race is counted in its place
  std::vector<int> raced_with;  // world ranks, kept until `own` is known
};

// A call site of receives or probes from MPI_ANY_SOURCE, or of Waitany,
// Waitsome, Testany or Testsome calls that passed over receives.
struct RacePlace {
  enum class Kind { Receives, Probes, Completions };
  const void* call_site = nullptr;
  Kind kind = Kind::Receives;
  std::int64_t calls = 0;
  std::int64_t judged = 0;  // calls judged (receives and probes)
  std::int64_t raced = 0;   // calls that raced; for Completions, the receives passed over that could have come first
  std::vector<int> took;        // world ranks whose messages they took, sorted
  std::vector<int> could_take;  // world ranks whose messages they could have taken, sorted
};

// The messages of one source and tag: at most one of the queues is not
// empty.
struct Stream {
  std::deque<Arrived> arrived;
  std::deque<Taken> taken;
};

struct BatchInFlight {
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<std::vector<char>> bytes;
};

struct Shadow {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request starting = MPI_REQUEST_NULL;  // the MPI_Comm_idup making `dup`, until usable_dup waits for it
  std::vector<int> peers;                   // world rank of each destination rank (the remote group's for inter)
  std::string name;                         // the program's communicator, for reports
  int rank = 0;                             // this rank in it
  // Sender's side.
  std::vector<Outbox> outboxes;            // by destination rank
  std::vector<std::int64_t> records_to;    // records sent in batches, by destination rank
  std::deque<BatchInFlight> in_flight;
  // Receiver's side.
  StableMap<Stream> streams;  // by stream_key
  std::int64_t records_arrived = 0;
  std::size_t taken_waiting = 0;  // receives waiting for their records
  std::size_t take_at = kBatch;   // taken_waiting at which batches are taken next
  std::vector<std::string> texts;  // datatype texts of arrived records, each once
  std::unordered_map<std::string, std::uint32_t> text_index;
  // Receives freed while active, as (source, tag), wildcards kept: the
  // messages they took have records that nobody pairs.
  std::vector<std::pair<int, int>> abandoned;
  std::deque<Wildcard> wildcards;  // GLOBAL:MSG:RACE's window, in completion order
};

struct PendingMessage {
  int source = 0;  // world rank
  int dest = 0;    // this rank in the message's communicator
  const Shadow* shadow = nullptr;
  Record record;
  std::string type;
};

// A mismatch found under the lock, reported after it: of the type
// signatures, or with `data`, of the bytes.
struct Mismatch {
  bool data = false;
  Taken taken;
  Record sent;
  std::string sent_type;
  int sender = 0;  // world rank
  int source = 0;  // comm rank
  std::string comm;
};

struct MessagesState {
  bool datatype_check = false;
  bool receive_buffers = false;
  bool pending_check = false;
  bool multiple_threads = false;
  std::atomic<bool> count_lost{false};  // lost_count_of_messages()
  int max_pending = 20;
  std::uintptr_t exe_base = 0, exe_low = 0, exe_high = 0;  // the executable's load bias and mapped range
  SpinMutex mutex;  // guards the rest at MPI_THREAD_MULTIPLE (MessagesGuard)
  std::unordered_map<MPI_Comm, Shadow> shadows;
  MPI_Comm last_comm = MPI_COMM_NULL;  // the shadow found last, for the next lookup
  Shadow* last_shadow = nullptr;
  std::vector<std::pair<Shadow*, int>> filled;  // outboxes holding records
  std::uint32_t tick = 0;                        // the monitor's tick when they were last sent
  std::unordered_map<MPI_Message, MPI_Comm> probed;
  std::uint64_t next_number = 1;
  // GLOBAL:MSG:RACE.
  std::vector<std::uint64_t> clock_domains;  // by world rank: equal values read one clock
  std::uint64_t receives_completed = 0;
  std::vector<RacePlace> race_places;
  std::map<std::pair<const void*, RacePlace::Kind>, std::uint32_t> race_place_index;
};

MessagesState& messages_state() {
  static MessagesState* const instance = new MessagesState;  // never destroyed: wrappers may run during exit
  return *instance;
}

// The channel's lock.
class MessagesGuard : LockIfMultiple {
 public:
  MessagesGuard() : LockIfMultiple(messages_state().mutex, messages_state().multiple_threads) {}
};

int locate_executable(dl_phdr_info* info, size_t, void* data) {
  auto& s = *static_cast<MessagesState*>(data);
  s.exe_base = info->dlpi_addr;
  s.exe_low = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    s.exe_low = std::min<std::uintptr_t>(s.exe_low, info->dlpi_addr + segment.p_vaddr);
    s.exe_high = std::max<std::uintptr_t>(s.exe_high, info->dlpi_addr + segment.p_vaddr + segment.p_memsz);
  }
  return 1;  // the first object is the executable
}

std::uint64_t call_site_of(const void* pc) {
  const MessagesState& s = messages_state();
  const auto address = reinterpret_cast<std::uintptr_t>(pc);
  return address >= s.exe_low && address < s.exe_high ? address - s.exe_base + 1 : 0;
}

// The sender's call site, symbolized in this process (the same executable).
std::vector<Frame> call_site_frames(std::uint64_t call_site) {
  if (call_site == 0) return {};
  static std::mutex mutex;
  static stacks::Symbolizer symbolizer;
  static const std::string executable = [] {
    char path[PATH_MAX];
    return realpath("/proc/self/exe", path) ? std::string(path) : std::string();
  }();
  const std::lock_guard lock(mutex);
  return symbolizer.symbolize_every_frame({stacks::FrameAddress{executable, call_site - 1, true}});
}

// The shadow's duplicate, usable: every member started its MPI_Comm_idup in
// the program's call, so this waits only for their progress.
MPI_Comm usable_dup(Shadow& shadow) {
  if (shadow.starting != MPI_REQUEST_NULL) {
    PMPI_Wait(&shadow.starting, MPI_STATUS_IGNORE);
    PMPI_Comm_set_errhandler(shadow.dup, MPI_ERRORS_RETURN);
  }
  return shadow.dup;
}

// Under the lock: the shadow of `comm`, or null.
Shadow* find_shadow(MPI_Comm comm) {
  MessagesState& s = messages_state();
  if (comm == s.last_comm && s.last_shadow) return s.last_shadow;
  const auto found = s.shadows.find(comm);
  if (found == s.shadows.end()) return nullptr;
  s.last_comm = comm;
  s.last_shadow = &found->second;
  return s.last_shadow;
}

// A stream's key: comm rank `source` (never negative) and `tag`, with the
// top bit set so that no key is StableMap's kNoKey.
std::uint64_t stream_key(int source, int tag) {
  return (std::uint64_t{1} << 63) | (static_cast<std::uint64_t>(static_cast<std::uint32_t>(source)) << 32) |
         static_cast<std::uint32_t>(tag);
}

int source_of(std::uint64_t stream_key) { return static_cast<int>((stream_key >> 32) & 0x7fffffff); }

// Under the lock: the stream of (source, tag), made when new.
Stream& stream_of(Shadow& shadow, int source, int tag) {
  bool added = false;
  return shadow.streams.get(stream_key(source, tag), added);  // streams are never erased: a new one is empty
}

// Under the lock: completed batches leave the front of the queue.
void reap_sent_batches(Shadow& shadow) {
  while (!shadow.in_flight.empty()) {
    int done = 0;
    PMPI_Test(&shadow.in_flight.front().request, &done, MPI_STATUS_IGNORE);
    if (!done) return;
    shadow.in_flight.pop_front();
  }
}

std::uint32_t intern_text(Shadow& shadow, const char* text) {
  const auto [found, added] = shadow.text_index.try_emplace(text, static_cast<std::uint32_t>(shadow.texts.size()));
  if (added) shadow.texts.emplace_back(text);
  return found->second;
}

Signature signature_of(const Record& r) {
  Signature sig;
  sig.bytes = r.bytes;
  sig.hash = r.hash;
  sig.untyped = (r.flags & kUntyped) != 0;
  sig.known = (r.flags & kKnown) != 0;
  return sig;
}

// Under the lock: whether `taken` broke the type matching rules against
// `sent`; the mismatch goes to `found`.
void compare(const Taken& taken, const Arrived& sent, Shadow& shadow, int source, std::vector<Mismatch>& found) {
  if (sent.record.flags & kMultipleThreads) return;
  if (taken.received_bytes != sent.record.bytes) return;  // truncation: MPI's own error
  if (taken.summed && (sent.record.flags & kSummed) && taken.data_sum != sent.record.data_sum)
    found.push_back({true, taken, sent.record, shadow.texts[sent.type_text], world_rank_of(shadow.peers, source),
                     source, shadow.name});
  if (!taken.compare) return;
  // A receive that got all it asked for is hashed as a whole (one run of a
  // basic type then takes no walk): the same signature as cut to its bytes.
  const bool whole = taken.received_bytes == taken.type->size * taken.count;
  const Signature mine = signature_of(*taken.type, taken.count, whole ? -1 : taken.received_bytes);
  if (!mine.differs_from(signature_of(sent.record))) return;
  found.push_back({false, taken, sent.record, shadow.texts[sent.type_text], world_rank_of(shadow.peers, source),
                   source, shadow.name});
}

// Which clock CLOCK_MONOTONIC is: the kernel (its boot id) and the time
// namespace. Unknown: this rank's own, like no other's.
std::uint64_t clock_domain() {
  std::string domain;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  if (!std::getline(boot_id, domain) || domain.empty())
    return std::hash<std::string>{}("unknown clock of rank " + std::to_string(world_rank()));
  char time_namespace[64] = {};
  if (readlink("/proc/self/ns/time", time_namespace, sizeof time_namespace - 1) > 0) domain += time_namespace;
  return std::hash<std::string>{}(domain);
}

void add_rank(std::vector<int>& ranks, int rank) {
  const auto at = std::lower_bound(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end() || *at != rank) ranks.insert(at, rank);
}

// Under the lock: the index of the place of `kind` at `call_site`.
std::uint32_t race_place(const void* call_site, RacePlace::Kind kind) {
  MessagesState& s = messages_state();
  const auto [index, added] =
      s.race_place_index.try_emplace({call_site, kind}, static_cast<std::uint32_t>(s.race_places.size()));
  if (added) {
    s.race_places.emplace_back().call_site = call_site;
    s.race_places.back().kind = kind;
  }
  return index->second;
}

// What a receive or probe from MPI_ANY_SOURCE asked for and got.
struct WildcardCall {
  const void* call_site;
  bool probe;
  int tag;            // as posted
  int source;         // the comm rank whose message it got
  bool after_active;  // a receive started before it was active
};

// Under the lock: `call` completed at `at`, after `order` receives of the
// rank (counting itself, for a receive).
void note_wildcard(Shadow& shadow, const WildcardCall& call, std::uint64_t order, std::int64_t at) {
  MessagesState& s = messages_state();
  const std::uint32_t index =
      race_place(call.call_site, call.probe ? RacePlace::Kind::Probes : RacePlace::Kind::Receives);
  RacePlace& place = s.race_places[index];
  ++place.calls;
  add_rank(place.took, world_rank_of(shadow.peers, call.source));
  if (call.after_active || !s.probed.empty()) return;
  if (shadow.wildcards.size() == kRaceWindow) shadow.wildcards.pop_front();
  shadow.wildcards.push_back({order, at, call.tag, call.source, index,
                              call.probe ? Wildcard::Own::Ordinary : Wildcard::Own::Unknown, false, {}});
  if (call.probe) ++place.judged;
}

// Under the lock: a race of `receive` counts once its own message is known
// to be no synchronous send's.
void count_race(Wildcard& receive) {
  if (receive.own != Wildcard::Own::Ordinary || receive.raced_with.empty()) return;
  RacePlace& place = messages_state().race_places[receive.place];
  if (!receive.counted) ++place.raced;
  receive.counted = true;
  for (const int rank : receive.raced_with) add_rank(place.could_take, rank);
  receive.raced_with.clear();
}

// Whether the records of `shadow` pair with the messages the receives took:
// not once a receive was freed while active or failed (it may have taken a
// message whose record the next receive then gets).
bool pairing_holds(const Shadow& shadow) {
  return shadow.abandoned.empty() && !messages_state().count_lost.load(std::memory_order_relaxed);
}

// Under the lock: `record` is the own message of the rank's `order`-th
// receive.
void own_message(Shadow& shadow, std::uint64_t order, const Record& record) {
  if (shadow.wildcards.empty() || order == 0) return;
  const auto found = std::partition_point(shadow.wildcards.begin(), shadow.wildcards.end(),
                                          [&](const Wildcard& w) { return w.order < order; });
  if (found == shadow.wildcards.end() || found->order != order || found->own != Wildcard::Own::Unknown) return;
  if (record.flags & kSynchronous) {
    found->own = Wildcard::Own::Synchronous;
    return;
  }
  found->own = Wildcard::Own::Ordinary;
  ++messages_state().race_places[found->place].judged;
  count_race(*found);
}

// Whether comm rank `source` of `shadow` reads this rank's clock.
bool same_clock(const Shadow& shadow, int source) {
  const MessagesState& s = messages_state();
  const int sender = world_rank_of(shadow.peers, source);
  return sender >= 0 && sender < static_cast<int>(s.clock_domains.size()) &&
         s.clock_domains[static_cast<std::size_t>(sender)] == s.clock_domains[static_cast<std::size_t>(world_rank())];
}

// Under the lock: the message of `record` from comm rank `source`, taken by
// the rank's `taken_order`-th receive (UINT64_MAX: by none), against the
// receives from MPI_ANY_SOURCE that completed before.
void judge_races(Shadow& shadow, int source, const Record& record, std::uint64_t taken_order) {
  if (!judging_races() || record.sent_at == 0 || shadow.wildcards.empty() || !pairing_holds(shadow) ||
      !same_clock(shadow, source))
    return;
  const int sender = world_rank_of(shadow.peers, source);
  auto receive = std::partition_point(shadow.wildcards.begin(), shadow.wildcards.end(),
                                      [&](const Wildcard& w) { return w.at <= record.sent_at; });
  for (std::size_t scanned = 0; receive != shadow.wildcards.end() && receive->order < taken_order &&
                                scanned < kRaceScan;
       ++receive, ++scanned) {
    if (receive->source == source || (receive->tag != MPI_ANY_TAG && receive->tag != record.tag) ||
        receive->own == Wildcard::Own::Synchronous)
      continue;
    add_rank(receive->raced_with, sender);
    count_race(*receive);
  }
}

// Under the lock: the message of `record` from comm rank `source`, taken by
// a receive that a Waitany, Waitsome, Testany or Testsome at `by` passed
// over at `at`: had it come first, the call could have returned that
// receive.
void judge_passed_over(Shadow& shadow, int source, const Record& record, std::int64_t at, const void* by) {
  MessagesState& s = messages_state();
  if (at == 0 || record.sent_at == 0 || record.sent_at >= at || !pairing_holds(shadow) || !same_clock(shadow, source))
    return;
  RacePlace& place = s.race_places[race_place(by, RacePlace::Kind::Completions)];
  ++place.raced;
  add_rank(place.could_take, world_rank_of(shadow.peers, source));
}

// Under the lock: the rules on `record`, the message that `taken` received.
void judge_received(Shadow& shadow, int source, const Record& record, const Taken& taken) {
  judge_races(shadow, source, record, taken.order);
  own_message(shadow, taken.order, record);
  judge_passed_over(shadow, source, record, taken.passed_over_at, taken.passed_over_by);
}

// Where no other thread calls MPI: the records of `shadow` that no receive
// took, as messages received by none.
void judge_unreceived(Shadow& shadow) {
  if (!judging_races()) return;
  shadow.streams.for_each([&](std::uint64_t key, Stream& stream) {
    for (const Arrived& arrived : stream.arrived) judge_races(shadow, source_of(key), arrived.record, UINT64_MAX);
  });
}

// One report of this rank's receives from MPI_ANY_SOURCE that raced.
void report_races() {
  const MessagesState& s = messages_state();
  std::vector<const RacePlace*> raced;
  std::int64_t calm = 0, unjudged = 0;
  for (const RacePlace& place : s.race_places) {
    if (place.raced > 0) raced.push_back(&place);
    if (place.kind == RacePlace::Kind::Completions) continue;  // raced counts receives there, not calls
    calm += place.judged - place.raced;
    unjudged += place.calls - place.judged;
  }
  if (raced.empty()) return;
  const int me = world_rank();
  report::Finding finding;
  finding.check = report::Check::MessageRace;
  finding.summary.push_back(fmt::format(
      "Calls of rank {} raced at {} place{}: with other timing, each could have got another rank's message, or "
      "returned another request.",
      me, raced.size(), raced.size() == 1 ? "" : "s"));
  finding.summary.push_back(
      "Most races are intended (a master and its workers); a race matters where what the program computes or calls "
      "next depends on which message came first.");
  for (const RacePlace* place : raced) {
    const std::string place_text = stacks::place_text(place->call_site);
    const std::string could = fmt::format("rank{} {}", place->could_take.size() == 1 ? "" : "s",
                                          fmt::join(place->could_take, ", "));
    const auto plural = [](std::int64_t n, const char* one, const char* more) { return n == 1 ? one : more; };
    switch (place->kind) {
      case RacePlace::Kind::Receives:
      case RacePlace::Kind::Probes: {
        const bool probes = place->kind == RacePlace::Kind::Probes;
        finding.summary.push_back(fmt::format(
            "{}: {} {} from MPI_ANY_SOURCE {} messages from rank{} {}; {} raced, with {}", place_text, place->calls,
            probes ? plural(place->calls, "probe", "probes") : plural(place->calls, "receive", "receives"),
            probes ? "found" : "took", place->took.size() == 1 ? "" : "s", fmt::join(place->took, ", "), place->raced,
            could));
        break;
      }
      case RacePlace::Kind::Completions:
        finding.summary.push_back(fmt::format(
            "{}: {} {} of MPI_Waitany, MPI_Waitsome, MPI_Testany or MPI_Testsome returned requests while receives "
            "among the others were active; {} of those receives could have completed first, with messages of {}",
            place_text, place->calls, plural(place->calls, "call", "calls"), place->raced, could));
        break;
    }
    finding.parties.push_back({{me}, "called there", "", call_site_stack(place->call_site)});
  }
  if (calm > 0)
    finding.summary.push_back(fmt::format("{} other {} from MPI_ANY_SOURCE {} not found to race.", calm,
                                          calm == 1 ? "receive or probe" : "receives and probes",
                                          calm == 1 ? "was" : "were"));
  if (unjudged > 0)
    finding.summary.push_back(fmt::format(
        "{} {} not judged: a receive started before was still active, a message MPI_Mprobe took was not yet "
        "received, or its own message came from a synchronous send.",
        unjudged, unjudged == 1 ? "was" : "were"));
  finding.summary.push_back(
      "rule: a receive or probe from MPI_ANY_SOURCE raced with another rank when a message of that rank that it "
      "matches (communicator and tag) was sent before it returned and received only after it, or never, while no "
      "receive started before it was active and its own message came from no synchronous send; a call that "
      "returned some requests raced when a receive among the others, which no receive started before it competed "
      "with, took a message sent before the call returned (times read on the monotonic clock of the kernel both "
      "ranks run on).");
  finding.key = "race";
  report(std::move(finding));
}

// Under the lock: one arrived record of comm rank `source`, paired with the
// receive that waited for it, if any.
void arrive(Shadow& shadow, int source, const Record& record, std::uint32_t type_text, std::vector<Mismatch>& found) {
  Stream& stream = stream_of(shadow, source, record.tag);
  if (record.flags & kCancel) {
    // The cancelled send's record came in an earlier batch or this one
    // (one sender's batches arrive in order): no receive took it.
    const auto cancelled = std::find_if(stream.arrived.begin(), stream.arrived.end(),
                                        [&](const Arrived& a) { return a.record.number == record.number; });
    if (cancelled != stream.arrived.end()) stream.arrived.erase(cancelled);
    return;
  }
  const Arrived arrived{record, type_text};
  if (stream.taken.empty()) {
    stream.arrived.push_back(arrived);
    return;
  }
  const Taken& taken = stream.taken.front();
  judge_received(shadow, source, record, taken);
  compare(taken, arrived, shadow, source, found);
  stream.taken.pop_front();
  --shadow.taken_waiting;
}

// Under the lock: the outbox for `dest` goes as one batch; to this rank
// itself it goes straight into the streams (a batch to itself waited in
// MPI's queue of unexpected messages, and with threads every MPI_Iprobe of
// the program cost several times as much meanwhile).
void send_batch(Shadow& shadow, int dest, std::vector<Mismatch>& found) {
  Outbox& box = shadow.outboxes[static_cast<std::size_t>(dest)];
  if (box.records.empty()) return;
  int inter = 0;
  if (dest == shadow.rank && PMPI_Comm_test_inter(usable_dup(shadow), &inter) == MPI_SUCCESS && !inter) {
    // Each datatype's text interned once per batch, as the receiver of a
    // batch does: hashing it for every record cost more than the rest.
    const std::uint32_t no_text = intern_text(shadow, "");  // a record without a type (a cancel)
    const TypeInfo* last_type = nullptr;
    std::uint32_t last_text = no_text;
    for (const Outgoing& out : box.records) {
      if (out.type && out.type.get() != last_type) {
        last_type = out.type.get();
        last_text = intern_text(shadow, last_type->text.c_str());
      }
      arrive(shadow, dest, out.record, out.type ? last_text : no_text, found);
    }
    shadow.records_to[static_cast<std::size_t>(dest)] += static_cast<std::int64_t>(box.records.size());
    shadow.records_arrived += static_cast<std::int64_t>(box.records.size());
    box.records.clear();
    return;
  }
  // Each datatype's text once per batch; a batch mostly has one or two.
  std::vector<std::pair<const TypeInfo*, std::uint32_t>> offsets;
  std::string texts;
  auto bytes = std::make_unique<std::vector<char>>(sizeof(BatchHeader) + box.records.size() * sizeof(Record));
  for (std::size_t i = 0; i < box.records.size(); ++i) {
    Outgoing& out = box.records[i];
    if (out.type) {
      const auto known = std::find_if(offsets.begin(), offsets.end(),
                                      [&](const auto& entry) { return entry.first == out.type.get(); });
      if (known != offsets.end()) {
        out.record.type_text = known->second;
      } else {
        out.record.type_text = static_cast<std::uint32_t>(texts.size());
        offsets.emplace_back(out.type.get(), out.record.type_text);
        texts.append(out.type->text).push_back('\0');
      }
    }
    std::memcpy(bytes->data() + sizeof(BatchHeader) + i * sizeof(Record), &out.record, sizeof(Record));
  }
  if (texts.empty()) texts.push_back('\0');  // a record without a type (a cancel) points here
  BatchHeader header;
  header.records = static_cast<std::uint32_t>(box.records.size());
  header.text_bytes = static_cast<std::uint32_t>(texts.size());
  std::memcpy(bytes->data(), &header, sizeof(header));
  bytes->insert(bytes->end(), texts.begin(), texts.end());
  BatchInFlight batch;
  batch.bytes = std::move(bytes);
  if (PMPI_Isend(batch.bytes->data(), static_cast<int>(batch.bytes->size()), MPI_BYTE, dest, kBatchTag,
                 usable_dup(shadow), &batch.request) == MPI_SUCCESS) {
    shadow.records_to[static_cast<std::size_t>(dest)] += header.records;
    reap_sent_batches(shadow);
    shadow.in_flight.push_back(std::move(batch));
  }
  box.records.clear();
}

// Under the lock: every outbox that holds records goes, or those of `only`.
void send_filled(std::vector<Mismatch>& found, const Shadow* only = nullptr) {
  MessagesState& s = messages_state();
  auto keep = s.filled.begin();
  for (const auto& [shadow, dest] : s.filled) {
    if (only && shadow != only) {
      *keep++ = {shadow, dest};
      continue;
    }
    send_batch(*shadow, dest, found);
  }
  s.filled.erase(keep, s.filled.end());
}

// Under the lock: every batch that has arrived on `shadow`.
void take_batches(Shadow& shadow, std::vector<Mismatch>& found) {
  std::vector<char> bytes;
  while (true) {
    int flag = 0;
    MPI_Status status;
    if (PMPI_Iprobe(MPI_ANY_SOURCE, kBatchTag, usable_dup(shadow), &flag, &status) != MPI_SUCCESS || !flag) return;
    int size = 0;
    PMPI_Get_count(&status, MPI_BYTE, &size);
    bytes.resize(static_cast<std::size_t>(std::max(size, 0)));
    if (PMPI_Recv(bytes.data(), size, MPI_BYTE, status.MPI_SOURCE, kBatchTag, shadow.dup, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
      return;
    BatchHeader header;
    if (bytes.size() < sizeof(header)) continue;
    std::memcpy(&header, bytes.data(), sizeof(header));
    const std::size_t texts_at = sizeof(header) + std::size_t{header.records} * sizeof(Record);
    if (header.magic != BatchHeader{}.magic || texts_at + header.text_bytes != bytes.size() || header.text_bytes == 0 ||
        bytes.back() != '\0') {
      log::debug("a batch of message records from comm rank {} is malformed: ignored", status.MPI_SOURCE);
      continue;
    }
    // Each text of the batch interned once: (its offset, its index).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> interned;
    for (std::uint32_t i = 0; i < header.records; ++i) {
      Record record;
      std::memcpy(&record, bytes.data() + sizeof(header) + i * sizeof(Record), sizeof(Record));
      if (record.type_text >= header.text_bytes) record.type_text = header.text_bytes - 1;
      auto known = std::find_if(interned.begin(), interned.end(),
                                [&](const auto& entry) { return entry.first == record.type_text; });
      if (known == interned.end())
        known = interned.insert(interned.end(),
                                {record.type_text, intern_text(shadow, bytes.data() + texts_at + record.type_text)});
      arrive(shadow, status.MPI_SOURCE, record, known->second, found);
    }
    shadow.records_arrived += header.records;
  }
}

// Under the lock: once per tick of the monitor, every filled outbox goes and
// every shadow takes its arrived batches.
void on_tick(std::vector<Mismatch>& found) {
  MessagesState& s = messages_state();
  const std::uint32_t now = tick::now();
  if (now == s.tick) return;
  s.tick = now;
  send_filled(found);
  for (auto& [comm, shadow] : s.shadows)
    if (shadow.starting == MPI_REQUEST_NULL) take_batches(shadow, found);
}

std::string sent_call_text(const Record& r, const std::string& type, int dest_rank, const std::string& comm) {
  return fmt::format("{}(count={}, datatype={}, dest={}, tag={}, comm={})",
                     function_info(static_cast<FunctionId>(r.function)).name, r.count, type, dest_rank, r.tag, comm);
}

// The receive's parties of a report: where it completed and where it was
// posted, or where a blocking receive took it.
void add_receive_parties(report::Finding& finding, const Taken& t, const std::string& receive_call) {
  const int me = world_rank();
  if (t.posted_at) {
    finding.parties.push_back({{me}, "completed the receive", "", call_site_stack(t.completed_at)});
    finding.parties.push_back({{me}, "posted it", receive_call, call_site_stack(t.posted_at)});
  } else {
    finding.parties.push_back({{me}, "received it", receive_call, call_site_stack(t.completed_at)});
  }
}

void report_modified_receive(const Mismatch& m) {
  const Taken& t = m.taken;
  const int me = world_rank();
  const char* function = function_info(t.function).name;
  report::Finding finding;
  finding.check = report::Check::MemoryIllegalModification;
  finding.summary = {
      fmt::format("The receive buffer of {} was written while MPI owned it: the {} B it holds when the receive "
                  "completed differ from the bytes rank {} sent (tag {}, {}).",
                  function, t.received_bytes, m.sender, m.sent.tag, m.comm),
      "MPI owns a receive buffer from the call that starts the receive until the call that completes it returns; "
      "the program may neither read nor write it. (If the sender reports its send buffer written while its send "
      "was pending, that write may be the cause instead.)"};
  add_receive_parties(finding, t,
                      fmt::format("{}(buf={}, count={}, datatype={}, source={}, tag={}, comm={})", function, t.buffer,
                                  t.count, t.type->text, m.source, m.sent.tag, m.comm));
  finding.parties.push_back({{m.sender}, "sent it", sent_call_text(m.sent, m.sent_type, me, m.comm),
                             call_site_frames(m.sent.call_site)});
  finding.key = fmt::format("modified receive {} {}", t.posted_at, m.sent.call_site);
  report(std::move(finding));
}

// After the lock: one report per mismatch, by the receiving rank.
void report_mismatches(const std::vector<Mismatch>& found) {
  for (const Mismatch& m : found) {
    if (m.data) {
      report_modified_receive(m);
      continue;
    }
    const Taken& t = m.taken;
    const TypeInfo& receive_type = *t.type;
    const std::string receive_amount = amount_text(receive_type, t.count);
    const int me = world_rank();
    report::Finding finding;
    finding.check = report::Check::MessageDatatype;
    finding.summary = {
        fmt::format("The type signature of a message from rank {} to rank {} (tag {}, {}) differs between send and "
                    "receive:",
                    m.sender, me, m.sent.tag, m.comm),
        fmt::format("sent as {} x {} ({} B), received as {}.", m.sent.count, m.sent_type, m.sent.bytes,
                    t.received_bytes == receive_type.size * t.count
                        ? receive_amount
                        : fmt::format("the first {} B of {}", t.received_bytes, receive_amount))};
    const char* function = function_info(t.function).name;
    const std::string receive_call = fmt::format("{}(count={}, datatype={}, source={}, tag={}, comm={})", function,
                                                 t.count, receive_type.text, m.source, m.sent.tag, m.comm);
    add_receive_parties(finding, t, receive_call);
    finding.parties.push_back({{m.sender}, "sent it", sent_call_text(m.sent, m.sent_type, me, m.comm),
                               call_site_frames(m.sent.call_site)});
    finding.key = fmt::format("datatype {} {} {} {} {}", function, receive_type.text, m.sent_type, m.sent.call_site,
                              m.sent.count);
    report(std::move(finding));
  }
}

// Whether `shadow` had a receive freed while active that may have taken a
// message from comm rank `source` with `tag`; if so, that receive is used up.
bool taken_by_abandoned(Shadow& shadow, int source, int tag) {
  for (auto receive = shadow.abandoned.begin(); receive != shadow.abandoned.end(); ++receive)
    if ((receive->first == MPI_ANY_SOURCE || receive->first == source) &&
        (receive->second == MPI_ANY_TAG || receive->second == tag)) {
      shadow.abandoned.erase(receive);
      return true;
    }
  return false;
}

// Takes the batches of `shadows` until `expected` records have arrived in
// all, as they come; returns how many did not come within kDrainLimit.
std::int64_t take_remaining(const std::vector<Shadow*>& shadows, std::int64_t expected, std::vector<Mismatch>& found) {
  const auto arrived = [&] {
    std::int64_t total = 0;
    for (const Shadow* shadow : shadows) total += shadow->records_arrived;
    return total;
  };
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  while (arrived() < expected && std::chrono::steady_clock::now() < limit) {
    const std::int64_t before = arrived();
    for (Shadow* shadow : shadows) take_batches(*shadow, found);
    if (arrived() == before) {
      const timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
    }
  }
  return std::max<std::int64_t>(expected - arrived(), 0);
}

// The records of `shadow` that no receive took, but those a receive freed
// while active may have taken.
void collect_pending(Shadow& shadow, std::vector<PendingMessage>& pending) {
  shadow.streams.for_each([&](std::uint64_t key, Stream& stream) {
    for (const Arrived& arrived : stream.arrived) {
      const int source = source_of(key);
      if (taken_by_abandoned(shadow, source, arrived.record.tag)) continue;
      pending.push_back({world_rank_of(shadow.peers, source), shadow.rank, &shadow, arrived.record,
                         shadow.texts[arrived.type_text]});
    }
  });
}

// One report of the messages sent to this rank on `where` and never
// received; `missing` of them did not even arrive.
void report_pending(std::vector<PendingMessage> pending, std::int64_t missing, const std::string& where,
                    const char* when) {
  const MessagesState& s = messages_state();
  const std::int64_t count = static_cast<std::int64_t>(pending.size()) + missing;
  if (!s.pending_check || count == 0) return;
  if (s.count_lost.load(std::memory_order_relaxed)) {
    log::debug("{} message(s) on {} look pending at {}, but a receive failed earlier: not reported", count, where,
               when);
    return;
  }
  // In the order each sender sent them.
  std::stable_sort(pending.begin(), pending.end(), [](const PendingMessage& a, const PendingMessage& b) {
    return std::tie(a.source, a.record.number) < std::tie(b.source, b.record.number);
  });
  report::Finding finding;
  finding.check = report::Check::MessagePending;
  const int me = world_rank();
  finding.summary.push_back(fmt::format("{} message{} sent to rank {} on {} and never received before {}:", count,
                                        count == 1 ? " was" : "s were", me, where, when));
  if (missing > 0)
    finding.summary.push_back(fmt::format("({} of them did not arrive within {} s)", missing,
                                          std::chrono::seconds(kDrainLimit).count()));
  finding.parties.push_back({{me}, fmt::format("calls {}", when), "", {}});
  std::size_t listed = 0;
  for (const PendingMessage& message : pending) {
    if (listed == static_cast<std::size_t>(s.max_pending)) {
      finding.summary.push_back(fmt::format("... and {} more, not listed (CHECK-MAX-PENDING {})",
                                            pending.size() - listed, s.max_pending));
      break;
    }
    ++listed;
    const Record& r = message.record;
    finding.summary.push_back(fmt::format("message {}: from rank {}, tag {}, {}, {} B ({} x {}), sent by {}", listed,
                                          message.source, r.tag, message.shadow->name, r.bytes, r.count, message.type,
                                          function_info(static_cast<FunctionId>(r.function)).name));
    finding.parties.push_back({{message.source},
                               fmt::format("sent message {}", listed),
                               sent_call_text(r, message.type, message.dest, message.shadow->name),
                               call_site_frames(r.call_site)});
  }
  finding.key = fmt::format("pending {} {}", where, pending.empty() ? 0 : pending.front().record.call_site);
  report(std::move(finding), /*own_stack=*/true);
}

// Every batch sent on `shadow` completed, as far as the receivers drained
// them; those that did not are cancelled.
void complete_sent_batches(Shadow& shadow) {
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  for (BatchInFlight& batch : shadow.in_flight) {
    int done = 0;
    while (PMPI_Test(&batch.request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done &&
           std::chrono::steady_clock::now() < limit)
      sched_yield();
    if (!done) {
      PMPI_Cancel(&batch.request);
      PMPI_Request_free(&batch.request);
      (void)batch.bytes.release();  // MPI may still read it
    }
  }
  shadow.in_flight.clear();
}

// The shadow of `comm`, where this process has `rank`, without its duplicate.
Shadow shadow_of(MPI_Comm comm, int rank) {
  Shadow shadow;
  shadow.rank = rank;
  if (const auto info = comms::info(comms::id_of(comm))) {
    shadow.peers = info->peers();
    shadow.name = info->name;
  } else {
    shadow.name = "a communicator";
  }
  shadow.outboxes.resize(shadow.peers.size());
  shadow.records_to.assign(shadow.peers.size(), 0);
  return shadow;
}

Shadow make_shadow(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  Shadow shadow = shadow_of(comm, rank);
  PMPI_Comm_dup(comm, &shadow.dup);
  PMPI_Comm_set_errhandler(shadow.dup, MPI_ERRORS_RETURN);
  return shadow;
}

// Under the lock: `comm`'s shadow, out of the table.
Shadow remove_shadow(std::unordered_map<MPI_Comm, Shadow>::iterator found, std::vector<Mismatch>& mismatches) {
  MessagesState& s = messages_state();
  send_filled(mismatches, &found->second);
  usable_dup(found->second);  // before the move: MPI may write the handle until then
  Shadow shadow = std::move(found->second);
  s.shadows.erase(found);
  s.last_comm = MPI_COMM_NULL;
  s.last_shadow = nullptr;
  return shadow;
}

}  // namespace

bool summing_sends() noexcept { return messages_state().receive_buffers; }

void start_messages(const StartContext& context) {
  const MessageChecks checks{.datatype = on(report::Check::MessageDatatype),
                             .pending = on(report::Check::MessagePending),
                             .race = on(report::Check::MessageRace),
                             .max_pending = context.settings.max_pending,
                             .receive_buffers = on(report::Check::MemoryIllegalModification)};
  const bool multiple_threads = context.multiple_threads;
  MessagesState& s = messages_state();
  s.multiple_threads = multiple_threads;
  s.datatype_check = checks.datatype;
  s.receive_buffers = checks.receive_buffers && !multiple_threads && (checks.datatype || checks.pending || checks.race);
  s.pending_check = checks.pending;
  s.max_pending = checks.max_pending;
  dl_iterate_phdr(locate_executable, &s);
  if (!checks.datatype && !checks.pending && !checks.race) return;
  s.shadows[MPI_COMM_WORLD] = make_shadow(MPI_COMM_WORLD);
  s.shadows[MPI_COMM_SELF] = make_shadow(MPI_COMM_SELF);
  s.tick = tick::now();
  detail::shadowing = true;
  if (checks.race) {
    // On every rank, whatever its thread level, as the others do it.
    int world_size = 1;
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    s.clock_domains.assign(static_cast<std::size_t>(world_size), 0);
    const std::uint64_t mine = clock_domain();
    PMPI_Allgather(&mine, 1, MPI_UINT64_T, s.clock_domains.data(), 1, MPI_UINT64_T,
                   s.shadows.at(MPI_COMM_WORLD).dup);
    // At MPI_THREAD_MULTIPLE two threads' receives may complete in either
    // order, and the order of receives is what the rule reads.
    detail::judging_races = !multiple_threads;
    if (multiple_threads && world_rank() == 0)
      log::info("GLOBAL:MSG:RACE judges no receive of a program at MPI_THREAD_MULTIPLE");
  }
  listen_for_messages({.send_started = sent,
                       .receive_completed = received,
                       .send_cancelled = cancelled_send,
                       .receive_abandoned = receive_abandoned,
                       .receive_failed = lost_count_of_messages,
                       .passed_over = passed_over,
                       .judging_races = judging_races()});
}

void communicator_created(MPI_Comm created) {
  if (created == MPI_COMM_NULL) return;
  Shadow shadow = make_shadow(created);
  const MessagesGuard guard;
  messages_state().shadows[created] = std::move(shadow);
}

void communicator_dup_started(MPI_Comm parent, MPI_Comm created) {
  int rank = 0;
  PMPI_Comm_rank(parent, &rank);
  Shadow shadow = shadow_of(created, rank);
  const MessagesGuard guard;
  Shadow& kept = messages_state().shadows[created] = std::move(shadow);
  // Into the kept shadow, whose address lasts: MPI may write the handle
  // until the request completes.
  PMPI_Comm_idup(parent, &kept.dup, &kept.starting);
}

std::uint64_t sent(FunctionId function, std::int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   const void* call_site, const BufferChecksum& data) {
  if (dest == MPI_PROC_NULL) return 0;
  MessagesState& s = messages_state();
  TypeRef info = type_info(type);
  const Signature sig = type == MPI_DATATYPE_NULL ? Signature{.known = false} : signature_of(*info, count);
  const std::uint64_t site = call_site_of(call_site);
  const std::int64_t sent_at = judging_races() ? race_clock() : 0;
  const std::uint8_t flags = (sig.untyped ? kUntyped : 0) | (sig.known ? kKnown : 0) |
                             (s.multiple_threads ? kMultipleThreads : 0) |
                             (function_info(function).mode == SendMode::Synchronous ? kSynchronous : 0) |
                             (data.taken ? kSummed : 0);
  std::vector<Mismatch> found;
  std::uint64_t number = 0;
  {
    const MessagesGuard guard;
    Shadow* shadow = find_shadow(comm);
    if (!shadow || dest < 0 || dest >= static_cast<int>(shadow->outboxes.size())) return 0;
    number = s.next_number++;
    Outbox& box = shadow->outboxes[static_cast<std::size_t>(dest)];
    if (box.records.empty()) s.filled.emplace_back(shadow, dest);
    // Written field by field where it lies: a record built aside and copied
    // was read back wide from its narrow stores, which waits (store
    // forwarding fails).
    Outgoing& out = box.records.emplace_back();
    out.type = std::move(info);
    Record& r = out.record;
    r.number = number;
    r.count = count;
    r.bytes = sig.bytes;
    r.hash = sig.hash;
    r.call_site = site;
    r.sent_at = sent_at;
    r.data_sum = data.taken ? data.value : 0;
    r.tag = tag;
    r.function = static_cast<std::uint16_t>(function);
    r.flags = flags;
    if (box.records.size() >= kBatch) {
      send_batch(*shadow, dest, found);
      std::erase(s.filled, std::pair{shadow, dest});
    }
    on_tick(found);
  }
  report_mismatches(found);
  return number;
}

void cancelled_send(std::uint64_t number, MPI_Comm comm, int dest, int tag) {
  if (number == 0) return;
  MessagesState& s = messages_state();
  const MessagesGuard guard;
  Shadow* shadow = find_shadow(comm);
  if (!shadow || dest < 0 || dest >= static_cast<int>(shadow->outboxes.size())) return;
  Outbox& box = shadow->outboxes[static_cast<std::size_t>(dest)];
  const auto waiting = std::find_if(box.records.begin(), box.records.end(),
                                    [&](const Outgoing& out) { return out.record.number == number; });
  if (waiting != box.records.end()) {
    box.records.erase(waiting);
    return;
  }
  // Sent already: its receiver drops it.
  Outgoing marker;
  marker.record.number = number;
  marker.record.tag = tag;
  marker.record.flags = kCancel;
  if (box.records.empty()) s.filled.emplace_back(shadow, dest);
  box.records.push_back(std::move(marker));
}

void received(const Receive& receive, const MPI_Status& status) {
  if (status.MPI_SOURCE == MPI_PROC_NULL || status.MPI_SOURCE < 0) return;
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  if (cancelled) return;
  MessagesState& s = messages_state();
  // Read before the wrapper returns: the program learns which message came
  // only then.
  const std::int64_t at = judging_races() && receive.source == MPI_ANY_SOURCE ? race_clock() : 0;
  const bool after_active =
      receive.after_active || (at != 0 && !receive.posted_at && receive_active_before(receive.comm, UINT64_MAX));
  Taken taken;
  const bool paired = receive.known_type && !s.multiple_threads && receive.in_order &&
                      (receive.posted_at || receive_in_order(receive.comm, status.MPI_SOURCE, status.MPI_TAG));
  taken.compare = s.datatype_check && paired;
  taken.summed = s.receive_buffers && paired && receive.posted_at && receive.buffer;
  if (taken.compare || taken.summed) {
    int received_bytes = 0;
    PMPI_Get_count(&status, MPI_BYTE, &received_bytes);
    taken.compare = taken.compare && received_bytes != MPI_UNDEFINED;
    taken.received_bytes = received_bytes;
    taken.function = receive.function;
    taken.count = receive.count;
    taken.type = type_info(receive.type);
    taken.posted_at = receive.posted_at;
    taken.completed_at = receive.completed_at;
    taken.buffer = receive.buffer;
  }
  if (taken.summed) {
    // The whole elements received, read in the call that completes the
    // receive, before the program has its buffer back.
    const std::int64_t size = taken.type->size;
    taken.summed = taken.received_bytes != MPI_UNDEFINED && size > 0 && taken.received_bytes % size == 0;
    BufferChecksum now;
    if (taken.summed) sum_into({receive.buffer, taken.received_bytes / size, receive.type}, now);
    taken.summed = now.taken;
    taken.data_sum = now.value;
  }
  std::vector<Mismatch> found;
  {
    const MessagesGuard guard;
    Shadow* shadow = find_shadow(receive.comm);
    if (!shadow) return;
    if (judging_races()) {
      taken.order = ++s.receives_completed;
      taken.passed_over_at = receive.passed_over_at;
      taken.passed_over_by = receive.passed_over_by;
    }
    if (at != 0) note_wildcard(*shadow,
                               {receive.posted_at ? receive.posted_at : receive.completed_at, false, receive.tag,
                                status.MPI_SOURCE, after_active},
                               taken.order, at);
    Stream& stream = stream_of(*shadow, status.MPI_SOURCE, status.MPI_TAG);
    if (!stream.arrived.empty()) {
      judge_received(*shadow, status.MPI_SOURCE, stream.arrived.front().record, taken);
      compare(taken, stream.arrived.front(), *shadow, status.MPI_SOURCE, found);
      stream.arrived.pop_front();
    } else {
      stream.taken.push_back(std::move(taken));
      // Many receives waiting: their batches are due. Not again before as
      // many more wait, so that a late sender costs no probe a receive.
      if (++shadow->taken_waiting >= shadow->take_at) {
        take_batches(*shadow, found);
        shadow->take_at = shadow->taken_waiting + kBatch;
      }
    }
    on_tick(found);
  }
  report_mismatches(found);
}

void probed(MPI_Message message, MPI_Comm comm) {
  if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return;
  const MessagesGuard guard;
  messages_state().probed[message] = comm;
}

void passed_over(const void* call_site) {
  const MessagesGuard guard;
  ++messages_state().race_places[race_place(call_site, RacePlace::Kind::Completions)].calls;
}

void probe_found(MPI_Comm comm, int tag, const MPI_Status& status, const void* call_site) {
  if (status.MPI_SOURCE < 0) return;  // MPI_PROC_NULL
  const std::int64_t at = race_clock();
  const bool after_active = receive_active_before(comm, UINT64_MAX);
  MessagesState& s = messages_state();
  std::vector<Mismatch> found;
  {
    const MessagesGuard guard;
    Shadow* shadow = find_shadow(comm);
    if (!shadow) return;
    note_wildcard(*shadow, {call_site, true, tag, status.MPI_SOURCE, after_active}, s.receives_completed, at);
    on_tick(found);
  }
  report_mismatches(found);
}

void lost_count_of_messages() { messages_state().count_lost.store(true, std::memory_order_relaxed); }

void receive_abandoned(MPI_Comm comm, int source, int tag) {
  const MessagesGuard guard;
  if (Shadow* shadow = find_shadow(comm)) shadow->abandoned.emplace_back(source, tag);
}

MPI_Comm take_probed(MPI_Message message) {
  MessagesState& s = messages_state();
  const MessagesGuard guard;
  const auto found = s.probed.find(message);
  if (found == s.probed.end()) return MPI_COMM_NULL;
  const MPI_Comm comm = found->second;
  s.probed.erase(found);
  return comm;
}

void communicator_freeing(MPI_Comm comm) {
  MessagesState& s = messages_state();
  Shadow shadow;
  std::vector<Mismatch> found;
  {
    const MessagesGuard guard;
    const auto kept = s.shadows.find(comm);
    if (kept == s.shadows.end()) return;
    shadow = remove_shadow(kept, found);
  }
  // What each peer sent here: an all-to-all of counts, which means the same
  // on an inter-communicator (whose groups may differ in size) as on an
  // intra-communicator.
  std::vector<std::int64_t> sent_here(shadow.records_to.size(), 0);
  if (!shadow.records_to.empty())
    PMPI_Alltoall(shadow.records_to.data(), 1, MPI_INT64_T, sent_here.data(), 1, MPI_INT64_T, shadow.dup);
  std::int64_t expected = 0;
  for (const std::int64_t count : sent_here) expected += count;
  const std::int64_t missing = take_remaining({&shadow}, expected, found);
  report_mismatches(found);
  judge_unreceived(shadow);
  std::vector<PendingMessage> pending;
  collect_pending(shadow, pending);
  report_pending(std::move(pending), missing, shadow.name, "MPI_Comm_free");
  complete_sent_batches(shadow);
  PMPI_Comm_free(&shadow.dup);
}

void finish_messages() {
  if (!shadowing()) return;
  MessagesState& s = messages_state();
  int world_size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::vector<std::int64_t> records_to(static_cast<std::size_t>(world_size), 0);
  std::vector<Shadow*> live;
  MPI_Comm world_dup = MPI_COMM_NULL;
  std::vector<Mismatch> found;
  {
    const MessagesGuard guard;
    send_filled(found);
    for (auto& [comm, shadow] : s.shadows) {
      for (std::size_t i = 0; i < shadow.records_to.size(); ++i)
        records_to[static_cast<std::size_t>(shadow.peers[i])] += shadow.records_to[i];
      usable_dup(shadow);
      live.push_back(&shadow);
    }
    world_dup = s.shadows.at(MPI_COMM_WORLD).dup;
  }
  // Every other thread is done with MPI: no lock from here on.
  std::int64_t expected = 0;
  PMPI_Reduce_scatter_block(records_to.data(), &expected, 1, MPI_INT64_T, MPI_SUM, world_dup);
  const std::int64_t missing = take_remaining(live, expected, found);
  report_mismatches(found);
  std::vector<PendingMessage> pending;
  for (Shadow* shadow : live) {
    judge_unreceived(*shadow);
    collect_pending(*shadow, pending);
  }
  report_pending(std::move(pending), missing, "its communicators", "MPI_Finalize");
  if (judging_races()) report_races();
  for (Shadow* shadow : live) complete_sent_batches(*shadow);
  detail::shadowing = false;
  detail::judging_races = false;
  // The shadows go as the program's communicators do: MPICH keeps a
  // communicator's memory past MPI_Finalize unless it was freed.
  for (auto& [comm, shadow] : s.shadows)
    if (shadow.dup != MPI_COMM_NULL) PMPI_Comm_free(&shadow.dup);
  s.shadows.clear();
  s.last_comm = MPI_COMM_NULL;
  s.last_shadow = nullptr;
}

}  // namespace mpisentry::checks
