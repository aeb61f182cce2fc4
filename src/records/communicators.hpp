// Communicators by identity: every communicator gets an id that all its
// members agree on, derived from its parent's id and how many communicators
// were made from that parent before (creation is collective over the parent,
// so every member counts the same), and a count of the collectives entered on
// it, so that the k-th collective on a communicator can be matched across its
// members. The checker keeps each communicator's members itself: the monitor
// never asks MPI about a handle the program may have freed.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/functions.hpp"
#include "model/snapshot.hpp"

namespace mpisentry::tallies {
class CommTallies;
}  // namespace mpisentry::tallies

namespace mpisentry::comms {

inline constexpr std::uint64_t kWorldId = 1;
inline constexpr std::uint64_t kSelfId = 2;

// At MPI_Init: MPI_COMM_WORLD and MPI_COMM_SELF.
void initialize(int world_rank, int world_size);

// After a communicator-creating call succeeded on `parent`. Every member of
// the parent calls it, `created` being MPI_COMM_NULL on those that are not in
// a new communicator. `how` names the call ("MPI_Comm_split").
void created_from(MPI_Comm parent, MPI_Comm created, const char* how);
// MPI_Comm_create_group: collective over the group only, told apart by tag.
void created_by_group(MPI_Comm parent, int tag, MPI_Comm created);
// MPI_Intercomm_create: the two groups agree through their leaders and tag.
void created_intercomm(int tag, MPI_Comm created);
// MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups: no parent,
// the members agree through the string tag and the lowest member (`how`
// names the call).
void created_from_groups(const char* stringtag, MPI_Comm created, const char* how);
// After MPI_File_open succeeded on `comm`: the file's collectives are
// collective over comm's members and are counted on the file's own id,
// derived like a communicator's from comm's.
void opened_file(MPI_Comm comm, MPI_File file);
// After MPI_File_close closed `file`, whose id was `id` before the call.
void closed_file(MPI_File file, std::uint64_t id);
// After MPI_Comm_free freed `comm`, whose id was `id` before the call: MPI
// may hand the handle out again, so only an entry still of that id goes.
void freed(MPI_Comm comm, std::uint64_t id);

// After a call collective over `comm` made an object that is not a
// communicator (an RMA window): the object's id, the same on every member,
// from the communicator's id, `kind` and how many objects of that kind were
// made on it before. Also returns the communicator's id.
struct Made {
  std::uint64_t id = 0;
  std::uint64_t comm_id = 0;
};
Made made_on(MPI_Comm comm, std::uint64_t kind);

struct Collective {
  std::uint64_t id = 0;        // 0: a communicator the checker cannot track
  std::uint64_t sequence = 0;  // 1 for the first collective on it
};
// From a collective's wrapper, in the calling thread: counts the call, and
// keeps `function` (as its base, without _c) among the last few, as
// CollectiveCount::recent says.
Collective enter_collective(MPI_Comm comm, FunctionId function) noexcept;
// The same for a file's collective; a file not opened through the checker
// (or MPI_FILE_NULL) is not tracked.
Collective enter_collective(MPI_File file) noexcept;

// The message tallies of a live communicator (records/message_tallies.hpp),
// made on its first message; null for MPI_COMM_NULL and when it cannot be
// tracked. Cheap for MPI_COMM_WORLD once made.
tallies::CommTallies* tallies_of(MPI_Comm comm) noexcept;

// The id of a live communicator; 0 when unknown. Cheap for MPI_COMM_WORLD.
std::uint64_t id_of(MPI_Comm comm) noexcept;
// How many ranks a rank argument on a live communicator may name (its
// remote group's size for an inter-communicator); -1 when unknown. Cheap for
// MPI_COMM_WORLD.
int peer_count(MPI_Comm comm) noexcept;
// The id of an open file; 0 when unknown.
std::uint64_t id_of(MPI_File file) noexcept;

struct Info {
  std::uint64_t id = 0;
  std::vector<int> local;   // MPI_COMM_WORLD ranks, in the communicator's rank order
  std::vector<int> remote;  // the remote group of an inter-communicator
  bool inter = false;
  bool seen_created = true;  // false: made by a call the checker did not see
  std::string name;          // "MPI_COMM_WORLD", "MPI_Comm_split #2 of MPI_COMM_WORLD"
  // Whom a rank argument (dest, source, root) names: the remote group on an
  // inter-communicator, else the members.
  const std::vector<int>& peers() const { return inter ? remote : local; }
  // The MPI_COMM_WORLD rank that a rank argument names; none out of range.
  std::optional<int> world_rank(int rank) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= peers().size()) return std::nullopt;
    return peers()[static_cast<std::size_t>(rank)];
  }
};
// For the monitor: by id (also shortly after the communicator was freed,
// for requests still pending on it).
std::optional<Info> info(std::uint64_t id);

// The collectives entered so far on every live communicator, and on the
// recently freed ones, by id.
std::vector<CollectiveCount> collective_counts();

}  // namespace mpisentry::comms
