#include "records/communicators.hpp"

#include "records/handle_slots.hpp"
#include "records/message_tallies.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

namespace mpisentry::comms {
namespace {

using handle_slots::kEmptyKey;
using handle_slots::kRemovedKey;
constexpr std::size_t kSlots = 4096;
constexpr std::size_t kFreedKept = 256;  // freed communicators still known, for their pending requests

// Seeds that keep the ids of different kinds of creation apart.
constexpr std::uint64_t kChildSeed = 0xC411D;
constexpr std::uint64_t kGroupSeed = 0x6A0F;
constexpr std::uint64_t kInterSeed = 0x1A7E;
constexpr std::uint64_t kUnseenSeed = 0x5EE;
constexpr std::uint64_t kFromGroupsSeed = 0xF6A0;
constexpr std::uint64_t kFileSeed = 0xF11E;

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  // splitmix64's finalizer over the running hash and the value
  std::uint64_t z = hash ^ (value + 0x9E3779B97F4A7C15ull + (hash << 6) + (hash >> 2));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Never one of the fixed ids nor 0.
std::uint64_t as_id(std::uint64_t hash) { return hash < 16 ? hash + 16 : hash; }

std::uint64_t key_of(MPI_Comm comm) { return handle_slots::key_of(comm); }

// Files share the table: the top bit keeps their keys apart from communicators'.
std::uint64_t key_of(MPI_File file) { return handle_slots::key_of(file) | (std::uint64_t{1} << 63); }

// The lock-free part, read and counted by the wrappers: handle -> id and
// collectives entered.
struct Slot {
  std::atomic<std::uint64_t> key{kEmptyKey};
  std::atomic<std::uint64_t> id{0};
  std::atomic<std::uint64_t> entered{0};
  std::atomic<std::uint64_t> recent{0};  // CollectiveCount::recent
  std::atomic<tallies::CommTallies*> tallies{nullptr};  // made on its first message
  std::atomic<int> peer_count{-1};                        // Info::peers()'s size
};
Slot slots[kSlots];
Slot world_slot;
Slot self_slot;

// The slow part, under a lock: members and names, creation counters.
std::mutex mutex;
std::unordered_map<std::uint64_t, Info> live;
std::deque<Info> recently_freed;
// A freed communicator's last count: a member still inside its last
// collective must not seem to wait for a member that left it and freed it.
// Ids are never given again, so the count stays true.
std::deque<CollectiveCount> freed_counts;
std::unordered_map<std::uint64_t, std::uint64_t> creations;  // creation key -> communicators made so far
MPI_Group world_group = MPI_GROUP_NULL;

Slot* find_key(std::uint64_t key) { return handle_slots::find(slots, key); }

Slot* find_slot(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return &world_slot;
  if (comm == MPI_COMM_SELF) return &self_slot;
  return find_key(key_of(comm));
}

// Under the lock. False when the table has no room: the handle stays untracked.
bool insert_key(std::uint64_t key, const Info& info) {
  Slot* slot = handle_slots::claim(slots, key);
  if (slot == nullptr) return false;
  slot->id.store(info.id, std::memory_order_relaxed);
  slot->peer_count.store(static_cast<int>(info.peers().size()), std::memory_order_relaxed);
  slot->entered.store(0, std::memory_order_relaxed);
  slot->recent.store(0, std::memory_order_relaxed);
  slot->tallies.store(nullptr, std::memory_order_relaxed);
  slot->key.store(key, std::memory_order_release);
  return true;
}

std::vector<int> world_ranks(MPI_Group group) {
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> local(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) local[static_cast<std::size_t>(i)] = i;
  std::vector<int> world(local.size(), MPI_UNDEFINED);
  // Without MPI_COMM_WORLD (a program of sessions alone, which the checker
  // does not start in) the ranks stay unknown.
  if (world_group != MPI_GROUP_NULL)
    PMPI_Group_translate_ranks(group, size, local.data(), world_group, world.data());
  return world;
}

// A new communicator's groups, asked of MPI in the creating thread.
Info read_groups(MPI_Comm comm) {
  Info info;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  info.inter = inter != 0;
  MPI_Group group = MPI_GROUP_NULL;
  if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS) {
    info.local = world_ranks(group);
    PMPI_Group_free(&group);
  }
  if (info.inter && PMPI_Comm_remote_group(comm, &group) == MPI_SUCCESS) {
    info.remote = world_ranks(group);
    PMPI_Group_free(&group);
  }
  return info;
}

// The same on every member and on both sides of an inter-communicator.
std::uint64_t lowest_leader(const Info& info) {
  std::uint64_t leader = info.local.empty() ? 0 : static_cast<std::uint64_t>(info.local.front());
  if (!info.remote.empty()) leader = std::min(leader, static_cast<std::uint64_t>(info.remote.front()));
  return leader;
}

std::string name_of(std::uint64_t id) {
  if (id == kWorldId) return "MPI_COMM_WORLD";
  if (id == kSelfId) return "MPI_COMM_SELF";
  const auto found = live.find(id);
  return found != live.end() ? found->second.name : "a communicator";
}

// Under the lock: the n-th communicator (or file) made under `creation_key`
// gets its id, and the name "<how> #n of <parent>" that tells twins apart in
// reports (just `how` without a parent); `handle_key` is 0 on a member that
// is not in a new one.
void register_created(std::uint64_t handle_key, std::uint64_t creation_key, Info info, std::string_view how,
                      std::string_view parent = {}) {
  const std::uint64_t made_before = creations[creation_key]++;
  if (handle_key == 0) return;
  info.name = parent.empty() ? std::string(how) : fmt::format("{} #{} of {}", how, made_before + 1, parent);
  info.id = as_id(mix(mix(creation_key, made_before), lowest_leader(info)));
  if (insert_key(handle_key, info)) live[info.id] = std::move(info);
}

std::uint64_t created_key(MPI_Comm created) { return created == MPI_COMM_NULL ? 0 : key_of(created); }

// Under the lock: a communicator made by a call the checker did not see,
// named by its members (twins with the same members share the id).
std::uint64_t register_unseen(MPI_Comm comm) {
  // Outside MPI_Init and MPI_Finalize the program's call is erroneous, and MPI's error must name it, not
  // the checker's questions about the communicator.
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized) return 0;
  Info info = read_groups(comm);
  std::uint64_t hash = kUnseenSeed;
  for (int rank : info.local) hash = mix(hash, static_cast<std::uint64_t>(rank));
  for (int rank : info.remote) hash = mix(hash, static_cast<std::uint64_t>(rank) + (1ull << 32));
  info.id = as_id(hash);
  info.seen_created = false;
  info.name = "a communicator made by a call mpisentry did not see";
  const std::uint64_t id = info.id;
  if (!insert_key(key_of(comm), info)) return 0;
  live[id] = std::move(info);
  return id;
}

std::uint64_t parent_id(MPI_Comm parent) {
  if (const Slot* slot = find_slot(parent)) return slot->id.load(std::memory_order_relaxed);
  return parent == MPI_COMM_NULL ? 0 : register_unseen(parent);
}

// Under the lock: a freed communicator or closed file, whose id was `id`.
void forget(Slot* slot, std::uint64_t id) {
  if (slot == nullptr || slot == &world_slot || slot == &self_slot || slot->id.load() != id) return;
  freed_counts.push_back(
      {id, slot->entered.load(std::memory_order_relaxed), slot->recent.load(std::memory_order_relaxed)});
  if (freed_counts.size() > kFreedKept) freed_counts.pop_front();
  slot->key.store(kRemovedKey, std::memory_order_release);
  if (auto found = live.find(id); found != live.end()) {
    recently_freed.push_back(std::move(found->second));
    live.erase(found);
    if (recently_freed.size() > kFreedKept) recently_freed.pop_front();
  }
}

}  // namespace

void initialize(int world_rank, int world_size) {
  const std::lock_guard lock(mutex);
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  world_slot.id = kWorldId;
  world_slot.peer_count = world_size;
  self_slot.id = kSelfId;
  self_slot.peer_count = 1;
  Info world{kWorldId, {}, {}, false, true, "MPI_COMM_WORLD"};
  for (int rank = 0; rank < world_size; ++rank) world.local.push_back(rank);
  live[kWorldId] = std::move(world);
  live[kSelfId] = Info{kSelfId, {world_rank}, {}, false, true, "MPI_COMM_SELF"};
}

void created_from(MPI_Comm parent, MPI_Comm created, const char* how) {
  const std::lock_guard lock(mutex);
  const std::uint64_t parent_key = parent_id(parent);
  Info info = created == MPI_COMM_NULL ? Info{} : read_groups(created);
  register_created(created_key(created), mix(kChildSeed, parent_key), std::move(info), how, name_of(parent_key));
}

void created_by_group(MPI_Comm parent, int tag, MPI_Comm created) {
  if (created == MPI_COMM_NULL) return;
  const std::lock_guard lock(mutex);
  Info info = read_groups(created);
  const std::uint64_t parent_key = parent_id(parent);
  const std::uint64_t key =
      mix(mix(mix(kGroupSeed, parent_key), static_cast<std::uint64_t>(tag)), lowest_leader(info));
  register_created(created_key(created), key, std::move(info), "MPI_Comm_create_group", name_of(parent_key));
}

void created_intercomm(int tag, MPI_Comm created) {
  if (created == MPI_COMM_NULL) return;
  const std::lock_guard lock(mutex);
  Info info = read_groups(created);
  const std::uint64_t a = info.local.empty() ? 0 : static_cast<std::uint64_t>(info.local.front());
  const std::uint64_t b = info.remote.empty() ? 0 : static_cast<std::uint64_t>(info.remote.front());
  const std::uint64_t key = mix(mix(mix(kInterSeed, std::min(a, b)), std::max(a, b)), static_cast<std::uint64_t>(tag));
  register_created(created_key(created), key, std::move(info), "MPI_Intercomm_create");
}

void created_from_groups(const char* stringtag, MPI_Comm created, const char* how) {
  if (created == MPI_COMM_NULL || stringtag == nullptr) return;
  const std::lock_guard lock(mutex);
  Info info = read_groups(created);
  std::uint64_t key = kFromGroupsSeed;
  for (const char* c = stringtag; *c != '\0'; ++c) key = mix(key, static_cast<unsigned char>(*c));
  register_created(key_of(created), mix(key, lowest_leader(info)), std::move(info),
                   fmt::format("{} \"{}\"", how, stringtag));
}

void opened_file(MPI_Comm comm, MPI_File file) {
  if (file == MPI_FILE_NULL) return;
  const std::lock_guard lock(mutex);
  const std::uint64_t parent_key = parent_id(comm);
  Info info = read_groups(comm);
  register_created(key_of(file), mix(kFileSeed, parent_key), std::move(info), "the file MPI_File_open",
                   name_of(parent_key));
}

Made made_on(MPI_Comm comm, std::uint64_t kind) {
  const std::lock_guard lock(mutex);
  const std::uint64_t comm_id = parent_id(comm);
  const std::uint64_t key = mix(kind, comm_id);
  return {as_id(mix(key, creations[key]++)), comm_id};
}

void freed(MPI_Comm comm, std::uint64_t id) {
  const std::lock_guard lock(mutex);
  forget(find_slot(comm), id);
}

void closed_file(MPI_File file, std::uint64_t id) {
  const std::lock_guard lock(mutex);
  forget(find_key(key_of(file)), id);
}

static_assert(static_cast<std::size_t>(FunctionId::Count) <= 0xffff, "CollectiveCount::recent keeps 16-bit ids");

Collective enter_collective(MPI_Comm comm, FunctionId function) noexcept {
  Slot* slot = find_slot(comm);
  if (slot == nullptr && comm != MPI_COMM_NULL) {
    const std::lock_guard lock(mutex);
    if (register_unseen(comm) != 0) slot = find_slot(comm);
  }
  if (slot == nullptr) return {};
  // Collectives on one communicator are ordered by the program: one writer at a time.
  const std::uint64_t sequence = slot->entered.load(std::memory_order_relaxed) + 1;
  slot->recent.store(CollectiveCount::add_recent(slot->recent.load(std::memory_order_relaxed),
                                                 static_cast<std::uint16_t>(function_info(function).plain)),
                     std::memory_order_relaxed);
  slot->entered.store(sequence, std::memory_order_relaxed);
  return {slot->id.load(std::memory_order_relaxed), sequence};
}

Collective enter_collective(MPI_File file) noexcept {
  Slot* slot = file == MPI_FILE_NULL ? nullptr : find_key(key_of(file));
  if (slot == nullptr) return {};
  const std::uint64_t sequence = slot->entered.load(std::memory_order_relaxed) + 1;
  slot->entered.store(sequence, std::memory_order_relaxed);
  return {slot->id.load(std::memory_order_relaxed), sequence};
}

std::uint64_t id_of(MPI_File file) noexcept {
  const Slot* slot = file == MPI_FILE_NULL ? nullptr : find_key(key_of(file));
  return slot ? slot->id.load(std::memory_order_relaxed) : 0;
}

std::uint64_t id_of(MPI_Comm comm) noexcept {
  const Slot* slot = find_slot(comm);
  return slot ? slot->id.load(std::memory_order_relaxed) : 0;
}

int peer_count(MPI_Comm comm) noexcept {
  const Slot* slot = find_slot(comm);
  return slot ? slot->peer_count.load(std::memory_order_relaxed) : -1;
}

tallies::CommTallies* tallies_of(MPI_Comm comm) noexcept {
  Slot* slot = find_slot(comm);
  if (slot != nullptr)
    if (tallies::CommTallies* made = slot->tallies.load(std::memory_order_acquire)) return made;
  if (comm == MPI_COMM_NULL) return nullptr;
  const std::lock_guard lock(mutex);
  if (slot == nullptr && register_unseen(comm) != 0) slot = find_slot(comm);
  if (slot == nullptr) return nullptr;
  if (tallies::CommTallies* made = slot->tallies.load(std::memory_order_acquire)) return made;
  const auto found = live.find(slot->id.load(std::memory_order_relaxed));
  if (found == live.end()) return nullptr;
  tallies::CommTallies* made = tallies::make(found->first, found->second.peers());
  slot->tallies.store(made, std::memory_order_release);
  return made;
}

std::optional<Info> info(std::uint64_t id) {
  const std::lock_guard lock(mutex);
  if (const auto found = live.find(id); found != live.end()) return found->second;
  for (const Info& freed_info : recently_freed)
    if (freed_info.id == id) return freed_info;
  return std::nullopt;
}

std::vector<CollectiveCount> collective_counts() {
  std::vector<CollectiveCount> counts;
  const auto add = [&counts](const Slot& slot) {
    const std::uint64_t entered = slot.entered.load(std::memory_order_relaxed);
    if (entered > 0)
      counts.push_back({slot.id.load(std::memory_order_relaxed), entered, slot.recent.load(std::memory_order_relaxed)});
  };
  add(world_slot);
  add(self_slot);
  for (const Slot& slot : slots) {
    const std::uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key != kEmptyKey && key != kRemovedKey) add(slot);
  }
  {
    const std::lock_guard lock(mutex);
    counts.insert(counts.end(), freed_counts.begin(), freed_counts.end());
  }
  std::sort(counts.begin(), counts.end(),
            [](const CollectiveCount& a, const CollectiveCount& b) { return a.comm_id < b.comm_id; });
  return counts;
}

}  // namespace mpisentry::comms
