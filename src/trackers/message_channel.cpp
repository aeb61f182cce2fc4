#include "trackers/message_channel.hpp"

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

// Records an outbox holds before it goes as one batch: a batch of 64 is
// about 4 KiB, an eager message for MPI.
constexpr std::size_t kBatch = 64;

// The tag of batches on a shadow communicator, which carries nothing else.
constexpr int kBatchTag = 1;

using Record = MessageRecord;
constexpr std::uint8_t kUntyped = Record::kUntyped, kKnown = Record::kKnown,
                       kMultipleThreads = Record::kMultipleThreads, kCancel = Record::kCancel,
                       kSynchronous = Record::kSynchronous, kSummed = Record::kSummed;
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

// The messages of one source and tag: at most one of the queues is not
// empty.
struct Stream {
  std::deque<Arrived> arrived;
  std::deque<TakenReceive> taken;
};

struct BatchInFlight {
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<std::vector<char>> bytes;
};

struct Shadow {
  std::uint64_t id = 0;  // ShadowView::id
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
};

struct MessagesState {
  bool datatype_check = false;
  bool receive_buffers = false;
  bool multiple_threads = false;
  std::atomic<bool> count_lost{false};  // lost_count_of_messages()
  std::uintptr_t exe_base = 0, exe_low = 0, exe_high = 0;  // the executable's load bias and mapped range
  SpinMutex mutex;  // guards the rest at MPI_THREAD_MULTIPLE (MessagesGuard)
  std::unordered_map<MPI_Comm, Shadow> shadows;
  MPI_Comm last_comm = MPI_COMM_NULL;  // the shadow found last, for the next lookup
  Shadow* last_shadow = nullptr;
  std::vector<std::pair<Shadow*, int>> filled;  // outboxes holding records
  std::uint32_t tick = 0;                        // the monitor's tick when they were last sent
  std::unordered_map<MPI_Message, MPI_Comm> probed;
  std::uint64_t next_number = 1;
  std::uint64_t next_shadow_id = 1;
  std::uint64_t receives_completed = 0;  // GLOBAL:MSG:RACE: TakenReceive::order
  MessageListener listeners[kMaxListeners];
  int listener_count = 0;
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

// Each listener's hook `hook`, where it has one.
template <typename Hook, typename... Args>
void tell(Hook MessageListener::*hook, const Args&... args) {
  const MessagesState& s = messages_state();
  for (int i = 0; i < s.listener_count; ++i)
    if (const Hook h = s.listeners[i].*hook) h(args...);
}

// Once the lock is released: the listeners report what they found under it.
void after_lock() { tell(&MessageListener::after_lock); }

ShadowView view_of(const Shadow& shadow) {
  return {shadow.id, shadow.peers, shadow.name, shadow.rank,
          shadow.abandoned.empty() && !messages_state().count_lost.load(std::memory_order_relaxed)};
}

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

// Under the lock: one arrived record of comm rank `source`, paired with the
// receive that waited for it, if any.
void arrive(Shadow& shadow, int source, const Record& record, std::uint32_t type_text) {
  Stream& stream = stream_of(shadow, source, record.tag);
  if (record.flags & kCancel) {
    // The cancelled send's record came in an earlier batch or this one
    // (one sender's batches arrive in order): no receive took it.
    const auto cancelled = std::find_if(stream.arrived.begin(), stream.arrived.end(),
                                        [&](const Arrived& a) { return a.record.number == record.number; });
    if (cancelled != stream.arrived.end()) stream.arrived.erase(cancelled);
    return;
  }
  if (stream.taken.empty()) {
    stream.arrived.push_back({record, type_text});
    return;
  }
  tell(&MessageListener::paired, view_of(shadow), source, record, shadow.texts[type_text], stream.taken.front());
  stream.taken.pop_front();
  --shadow.taken_waiting;
}

// Under the lock: the outbox for `dest` goes as one batch; to this rank
// itself it goes straight into the streams (a batch to itself waited in
// MPI's queue of unexpected messages, and with threads every MPI_Iprobe of
// the program cost several times as much meanwhile).
void send_batch(Shadow& shadow, int dest) {
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
      arrive(shadow, dest, out.record, out.type ? last_text : no_text);
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
void send_filled(const Shadow* only = nullptr) {
  MessagesState& s = messages_state();
  auto keep = s.filled.begin();
  for (const auto& [shadow, dest] : s.filled) {
    if (only && shadow != only) {
      *keep++ = {shadow, dest};
      continue;
    }
    send_batch(*shadow, dest);
  }
  s.filled.erase(keep, s.filled.end());
}

// Under the lock: every batch that has arrived on `shadow`.
void take_batches(Shadow& shadow) {
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
      arrive(shadow, status.MPI_SOURCE, record, known->second);
    }
    shadow.records_arrived += header.records;
  }
}

// Under the lock: once per tick of the monitor, every filled outbox goes and
// every shadow takes its arrived batches.
void on_tick() {
  MessagesState& s = messages_state();
  const std::uint32_t now = tick::now();
  if (now == s.tick) return;
  s.tick = now;
  send_filled();
  for (auto& [comm, shadow] : s.shadows)
    if (shadow.starting == MPI_REQUEST_NULL) take_batches(shadow);
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
std::int64_t take_remaining(const std::vector<Shadow*>& shadows, std::int64_t expected) {
  const auto arrived = [&] {
    std::int64_t total = 0;
    for (const Shadow* shadow : shadows) total += shadow->records_arrived;
    return total;
  };
  const auto limit = std::chrono::steady_clock::now() + kDrainLimit;
  while (arrived() < expected && std::chrono::steady_clock::now() < limit) {
    const std::int64_t before = arrived();
    for (Shadow* shadow : shadows) take_batches(*shadow);
    if (arrived() == before) {
      const timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
    }
  }
  return std::max<std::int64_t>(expected - arrived(), 0);
}

// Where no other thread calls MPI: the records of `shadow` that no receive
// took go to the listeners, with whether a receive freed while active may
// have taken them.
void tell_unreceived(Shadow& shadow) {
  // The view before any abandoned receive is used up, as pairing read it.
  const ShadowView view = view_of(shadow);
  shadow.streams.for_each([&](std::uint64_t key, Stream& stream) {
    for (const Arrived& arrived : stream.arrived) {
      const int source = source_of(key);
      tell(&MessageListener::unreceived, view, source, arrived.record, shadow.texts[arrived.type_text],
           taken_by_abandoned(shadow, source, arrived.record.tag));
    }
  });
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

// Under the lock: `shadow` joins the table as the shadow of `comm`.
Shadow& add_shadow(MPI_Comm comm, Shadow&& shadow) {
  MessagesState& s = messages_state();
  shadow.id = s.next_shadow_id++;
  return s.shadows[comm] = std::move(shadow);
}

// Under the lock: `comm`'s shadow, out of the table.
Shadow remove_shadow(std::unordered_map<MPI_Comm, Shadow>::iterator found) {
  MessagesState& s = messages_state();
  send_filled(&found->second);
  usable_dup(found->second);  // before the move: MPI may write the handle until then
  Shadow shadow = std::move(found->second);
  s.shadows.erase(found);
  s.last_comm = MPI_COMM_NULL;
  s.last_shadow = nullptr;
  return shadow;
}

}  // namespace

Signature MessageRecord::signature() const {
  Signature sig;
  sig.bytes = bytes;
  sig.hash = hash;
  sig.untyped = (flags & kUntyped) != 0;
  sig.known = (flags & kKnown) != 0;
  return sig;
}

void listen_to_channel(const MessageListener& listener) {
  MessagesState& s = messages_state();
  if (s.listener_count < kMaxListeners) s.listeners[s.listener_count++] = listener;
}

bool summing_sends() noexcept { return messages_state().receive_buffers; }

bool count_of_messages_lost() noexcept { return messages_state().count_lost.load(std::memory_order_relaxed); }

bool messages_probed_not_received() { return !messages_state().probed.empty(); }

MPI_Comm shadow_of_world() {
  MessagesState& s = messages_state();
  const auto world = s.shadows.find(MPI_COMM_WORLD);
  return world == s.shadows.end() ? MPI_COMM_NULL : world->second.dup;
}

bool comparable(const MessageRecord& sent, const TakenReceive& taken) {
  return !(sent.flags & kMultipleThreads) && taken.received_bytes == sent.bytes;
}

void KeptPairs::keep(const ShadowView& shadow, int source, const MessageRecord& sent, const std::string& sent_type,
                     const TakenReceive& taken) {
  pairs_.push_back({taken, sent, sent_type, world_rank_of(shadow.peers, source), source, shadow.name});
}

std::string sent_call_text(const MessageRecord& r, const std::string& type, int dest_rank, const std::string& comm) {
  return fmt::format("{}(count={}, datatype={}, dest={}, tag={}, comm={})",
                     function_info(static_cast<FunctionId>(r.function)).name, r.count, type, dest_rank, r.tag, comm);
}

std::vector<Frame> sender_stack(const MessageRecord& record) {
  if (record.call_site == 0) return {};
  static std::mutex mutex;
  static stacks::Symbolizer symbolizer;
  static const std::string executable = [] {
    char path[PATH_MAX];
    return realpath("/proc/self/exe", path) ? std::string(path) : std::string();
  }();
  const std::lock_guard lock(mutex);
  return symbolizer.symbolize_every_frame({stacks::FrameAddress{executable, record.call_site - 1, true}});
}

void add_receive_parties(report::Finding& finding, const TakenReceive& t, const std::string& receive_call) {
  const int me = world_rank();
  if (t.posted_at) {
    finding.parties.push_back({{me}, "completed the receive", "", call_site_stack(t.completed_at)});
    finding.parties.push_back({{me}, "posted it", receive_call, call_site_stack(t.posted_at)});
  } else {
    finding.parties.push_back({{me}, "received it", receive_call, call_site_stack(t.completed_at)});
  }
}

void start_channel(const StartContext& context) {
  const bool datatype = on(report::Check::MessageDatatype), pending = on(report::Check::MessagePending),
             race = on(report::Check::MessageRace);
  const bool multiple_threads = context.multiple_threads;
  MessagesState& s = messages_state();
  s.multiple_threads = multiple_threads;
  s.datatype_check = datatype;
  // LOCAL:MEMORY:ILLEGAL_MODIFICATION of receive buffers: a record carries
  // its send buffer's checksum, which a nonblocking receive compares with
  // the bytes it holds when completed. Needs the channel (a GLOBAL:MSG check
  // on); not at MPI_THREAD_MULTIPLE, where records may pair with another
  // thread's receive.
  s.receive_buffers = on(report::Check::MemoryIllegalModification) && !multiple_threads &&
                      (datatype || pending || race);
  dl_iterate_phdr(locate_executable, &s);
  if (!datatype && !pending && !race) return;
  add_shadow(MPI_COMM_WORLD, make_shadow(MPI_COMM_WORLD));
  add_shadow(MPI_COMM_SELF, make_shadow(MPI_COMM_SELF));
  s.tick = tick::now();
  detail::shadowing = true;
  // At MPI_THREAD_MULTIPLE two threads' receives may complete in either
  // order, and the order of receives is what GLOBAL:MSG:RACE's rule reads.
  detail::judging_races = race && !multiple_threads;
  listen_for_messages({.send_started = sent,
                       .receive_completed = received,
                       .send_cancelled = cancelled_send,
                       .receive_abandoned = receive_abandoned,
                       .receive_failed = lost_count_of_messages,
                       .judging_races = judging_races()});
}

void communicator_created(MPI_Comm created) {
  if (created == MPI_COMM_NULL) return;
  Shadow shadow = make_shadow(created);
  const MessagesGuard guard;
  add_shadow(created, std::move(shadow));
}

void communicator_dup_started(MPI_Comm parent, MPI_Comm created) {
  int rank = 0;
  PMPI_Comm_rank(parent, &rank);
  Shadow shadow = shadow_of(created, rank);
  const MessagesGuard guard;
  Shadow& kept = add_shadow(created, std::move(shadow));
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
      send_batch(*shadow, dest);
      std::erase(s.filled, std::pair{shadow, dest});
    }
    on_tick();
  }
  after_lock();
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
  TakenReceive taken;
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
  {
    const MessagesGuard guard;
    Shadow* shadow = find_shadow(receive.comm);
    if (!shadow) return;
    if (judging_races()) {
      taken.order = ++s.receives_completed;
      taken.passed_over_at = receive.passed_over_at;
      taken.passed_over_by = receive.passed_over_by;
    }
    tell(&MessageListener::receive_completed, view_of(*shadow), receive, status, taken, at, after_active);
    Stream& stream = stream_of(*shadow, status.MPI_SOURCE, status.MPI_TAG);
    if (!stream.arrived.empty()) {
      const Arrived& sent = stream.arrived.front();
      tell(&MessageListener::paired, view_of(*shadow), status.MPI_SOURCE, sent.record, shadow->texts[sent.type_text],
           taken);
      stream.arrived.pop_front();
    } else {
      stream.taken.push_back(std::move(taken));
      // Many receives waiting: their batches are due. Not again before as
      // many more wait, so that a late sender costs no probe a receive.
      if (++shadow->taken_waiting >= shadow->take_at) {
        take_batches(*shadow);
        shadow->take_at = shadow->taken_waiting + kBatch;
      }
    }
    on_tick();
  }
  after_lock();
}

void probed(MPI_Message message, MPI_Comm comm) {
  if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return;
  const MessagesGuard guard;
  messages_state().probed[message] = comm;
}

void probe_found(MPI_Comm comm, int tag, const MPI_Status& status, const void* call_site) {
  if (status.MPI_SOURCE < 0) return;  // MPI_PROC_NULL
  const std::int64_t at = race_clock();
  const bool after_active = receive_active_before(comm, UINT64_MAX);
  MessagesState& s = messages_state();
  {
    const MessagesGuard guard;
    Shadow* shadow = find_shadow(comm);
    if (!shadow) return;
    tell(&MessageListener::probe_found, view_of(*shadow), tag, status, call_site, s.receives_completed, at,
         after_active);
    on_tick();
  }
  after_lock();
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
  {
    const MessagesGuard guard;
    const auto kept = s.shadows.find(comm);
    if (kept == s.shadows.end()) return;
    shadow = remove_shadow(kept);
  }
  // What each peer sent here: an all-to-all of counts, which means the same
  // on an inter-communicator (whose groups may differ in size) as on an
  // intra-communicator.
  std::vector<std::int64_t> sent_here(shadow.records_to.size(), 0);
  if (!shadow.records_to.empty())
    PMPI_Alltoall(shadow.records_to.data(), 1, MPI_INT64_T, sent_here.data(), 1, MPI_INT64_T, shadow.dup);
  std::int64_t expected = 0;
  for (const std::int64_t count : sent_here) expected += count;
  const std::int64_t missing = take_remaining({&shadow}, expected);
  after_lock();
  tell_unreceived(shadow);
  tell(&MessageListener::drained, missing, shadow.name, "MPI_Comm_free");
  tell(&MessageListener::shadow_gone, shadow.id);
  complete_sent_batches(shadow);
  PMPI_Comm_free(&shadow.dup);
}

void finish_channel() {
  if (!shadowing()) return;
  MessagesState& s = messages_state();
  int world_size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::vector<std::int64_t> records_to(static_cast<std::size_t>(world_size), 0);
  std::vector<Shadow*> live;
  MPI_Comm world_dup = MPI_COMM_NULL;
  {
    const MessagesGuard guard;
    send_filled();
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
  const std::int64_t missing = take_remaining(live, expected);
  after_lock();
  for (Shadow* shadow : live) tell_unreceived(*shadow);
  tell(&MessageListener::drained, missing, std::string("its communicators"), "MPI_Finalize");
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
