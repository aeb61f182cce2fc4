// Which rule fires on the ranks' snapshots, and whether a second look
// confirms it. Pure, like the wait-for graph it reads.
//
//  - HARD: definite waits (they hold in every conforming MPI implementation,
//    on requests confirmed incomplete) form a cycle or knot among stuck ranks.
//  - HARD: every rank is stuck and their calls cannot match: the k-th
//    collective on a communicator differs in function, root or operation
//    between members, or no call can complete even counting the waits that
//    hold only where MPI synchronizes (a collective on some ranks, other
//    calls on the others).
//  - Slow (a NO_PROGRESS warning after DEADLOCK-WARNING): every rank is stuck
//    in calls that may still complete together, or in waits the checker
//    cannot read. Never an abort.
//  - Unsafe (a warning): while some rank still runs, a cycle needs a possible
//    wait, such as a Bcast leaf waiting for another leaf.
// A verdict is taken only when two looks see it with no progress between them.
#pragma once

#include <string>
#include <vector>

#include "model/snapshot.hpp"

namespace mpisentry::monitor {

struct Verdict {
  enum class Kind { None, Hard, Slow, Unsafe };
  Kind kind = Kind::None;
  std::string rule;  // in words a user can check against the code
  DeadlockCore core;
  bool partial = false;              // some ranks still run
  bool with_possible_waits = false;  // the rule counted possible waits
  std::vector<int> involved;         // ranks whose activity must not change between looks

  bool operator==(const Verdict&) const = default;
};

struct JudgeSettings {
  // Ranks blocked this long may be in a verdict proven whatever the time:
  // definite waits, or collectives that cannot match (config::proven_after).
  double proven_seconds = 0;
  // Ranks blocked this long may be in any verdict, one that needs waits only
  // some MPI implementations make too (config::any_verdict_after).
  double timeout_seconds = 0;
  double warning_seconds = 0;  // DEADLOCK-WARNING
};

Verdict judge(const std::vector<RankSnapshot>& ranks, const JudgeSettings& settings);

// The second look saw the same verdict, and none of the ranks it involves
// entered, started or completed anything since the first.
bool confirms(const Verdict& first, const std::vector<RankSnapshot>& first_look, const Verdict& second,
              const std::vector<RankSnapshot>& second_look);

}  // namespace mpisentry::monitor
