#include "checks/message_races/message_races.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "log/log.hpp"
#include "stacks/stacks.hpp"
#include "trackers/message_channel.hpp"
#include "trackers/requests.hpp"

namespace mpisentry::checks {
namespace {

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
  std::uint32_t place;  // in RacesState::race_places
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


struct RacesState {
  std::vector<std::uint64_t> clock_domains;  // by world rank: equal values read one clock
  std::unordered_map<std::uint64_t, std::deque<Wildcard>> windows;  // by ShadowView::id, in completion order
  std::vector<RacePlace> race_places;
  std::map<std::pair<const void*, RacePlace::Kind>, std::uint32_t> race_place_index;
};

// Races are judged below MPI_THREAD_MULTIPLE only, where the program's MPI
// calls never overlap: no lock.
RacesState& races_state() {
  static RacesState* const instance = new RacesState;  // never destroyed: wrappers may run during exit
  return *instance;
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

// The index of the place of `kind` at `call_site`.
std::uint32_t race_place(const void* call_site, RacePlace::Kind kind) {
  RacesState& s = races_state();
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

// `call` completed at `at`, after `order` receives of the
// rank (counting itself, for a receive).
void note_wildcard(const ShadowView& shadow, const WildcardCall& call, std::uint64_t order, std::int64_t at) {
  RacesState& s = races_state();
  const std::uint32_t index =
      race_place(call.call_site, call.probe ? RacePlace::Kind::Probes : RacePlace::Kind::Receives);
  RacePlace& place = s.race_places[index];
  ++place.calls;
  add_rank(place.took, world_rank_of(shadow.peers, call.source));
  if (call.after_active || messages_probed_not_received()) return;
  std::deque<Wildcard>& wildcards = s.windows[shadow.id];
  if (wildcards.size() == kRaceWindow) wildcards.pop_front();
  wildcards.push_back({order, at, call.tag, call.source, index,
                              call.probe ? Wildcard::Own::Ordinary : Wildcard::Own::Unknown, false, {}});
  if (call.probe) ++place.judged;
}

// A race of `receive` counts once its own message is known
// to be no synchronous send's.
void count_race(Wildcard& receive) {
  if (receive.own != Wildcard::Own::Ordinary || receive.raced_with.empty()) return;
  RacePlace& place = races_state().race_places[receive.place];
  if (!receive.counted) ++place.raced;
  receive.counted = true;
  for (const int rank : receive.raced_with) add_rank(place.could_take, rank);
  receive.raced_with.clear();
}

// `record` is the own message of the rank's `order`-th
// receive.
void own_message(std::deque<Wildcard>& wildcards, std::uint64_t order, const MessageRecord& record) {
  if (wildcards.empty() || order == 0) return;
  const auto found = std::partition_point(wildcards.begin(), wildcards.end(),
                                          [&](const Wildcard& w) { return w.order < order; });
  if (found == wildcards.end() || found->order != order || found->own != Wildcard::Own::Unknown) return;
  if (record.flags & MessageRecord::kSynchronous) {
    found->own = Wildcard::Own::Synchronous;
    return;
  }
  found->own = Wildcard::Own::Ordinary;
  ++races_state().race_places[found->place].judged;
  count_race(*found);
}

// Whether comm rank `source` of `shadow` reads this rank's clock.
bool same_clock(const ShadowView& shadow, int source) {
  const RacesState& s = races_state();
  const int sender = world_rank_of(shadow.peers, source);
  return sender >= 0 && sender < static_cast<int>(s.clock_domains.size()) &&
         s.clock_domains[static_cast<std::size_t>(sender)] == s.clock_domains[static_cast<std::size_t>(world_rank())];
}

// The message of `record` from comm rank `source`, taken by
// the rank's `taken_order`-th receive (UINT64_MAX: by none), against the
// receives from MPI_ANY_SOURCE that completed before.
void judge_races(const ShadowView& shadow, std::deque<Wildcard>& wildcards, int source, const MessageRecord& record,
                 std::uint64_t taken_order) {
  if (record.sent_at == 0 || wildcards.empty() || !shadow.pairing_holds || !same_clock(shadow, source)) return;
  const int sender = world_rank_of(shadow.peers, source);
  auto receive = std::partition_point(wildcards.begin(), wildcards.end(),
                                      [&](const Wildcard& w) { return w.at <= record.sent_at; });
  for (std::size_t scanned = 0; receive != wildcards.end() && receive->order < taken_order &&
                                scanned < kRaceScan;
       ++receive, ++scanned) {
    if (receive->source == source || (receive->tag != MPI_ANY_TAG && receive->tag != record.tag) ||
        receive->own == Wildcard::Own::Synchronous)
      continue;
    add_rank(receive->raced_with, sender);
    count_race(*receive);
  }
}

// The message of `record` from comm rank `source`, taken by
// a receive that a Waitany, Waitsome, Testany or Testsome at `by` passed
// over at `at`: had it come first, the call could have returned that
// receive.
void judge_passed_over(const ShadowView& shadow, int source, const MessageRecord& record, std::int64_t at,
                       const void* by) {
  RacesState& s = races_state();
  if (at == 0 || record.sent_at == 0 || record.sent_at >= at || !shadow.pairing_holds || !same_clock(shadow, source))
    return;
  RacePlace& place = s.race_places[race_place(by, RacePlace::Kind::Completions)];
  ++place.raced;
  add_rank(place.could_take, world_rank_of(shadow.peers, source));
}

// The rules on `record`, the message that `taken` received.
void paired(const ShadowView& shadow, int source, const MessageRecord& record, const std::string&,
            const TakenReceive& taken) {
  const auto window = races_state().windows.find(shadow.id);
  if (window != races_state().windows.end()) {
    judge_races(shadow, window->second, source, record, taken.order);
    own_message(window->second, taken.order, record);
  }
  judge_passed_over(shadow, source, record, taken.passed_over_at, taken.passed_over_by);
}

// Where no other thread calls MPI: a record that no receive took, as a
// message received by none.
void unreceived(const ShadowView& shadow, int source, const MessageRecord& record, const std::string&, bool) {
  const auto window = races_state().windows.find(shadow.id);
  if (window != races_state().windows.end()) judge_races(shadow, window->second, source, record, UINT64_MAX);
}

// The window of a communicator freed: its id is never used again.
void shadow_gone(std::uint64_t id) { races_state().windows.erase(id); }

// One report of this rank's receives from MPI_ANY_SOURCE that raced.
void report_races() {
  const RacesState& s = races_state();
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

void receive_completed(const ShadowView& shadow, const Receive& receive, const MPI_Status& status,
                       const TakenReceive& taken, std::int64_t at, bool after_active) {
  if (at == 0) return;
  note_wildcard(shadow,
                {receive.posted_at ? receive.posted_at : receive.completed_at, false, receive.tag, status.MPI_SOURCE,
                 after_active},
                taken.order, at);
}

void probe_found(const ShadowView& shadow, int tag, const MPI_Status& status, const void* call_site,
                 std::uint64_t receives, std::int64_t at, bool after_active) {
  note_wildcard(shadow, {call_site, true, tag, status.MPI_SOURCE, after_active}, receives, at);
}

void passed_over(const void* call_site) {
  ++races_state().race_places[race_place(call_site, RacePlace::Kind::Completions)].calls;
}

}  // namespace

void start_message_races(const StartContext&) {
  if (!on(report::Check::MessageRace)) return;
  // On every rank, whatever its thread level, as the others do it.
  RacesState& s = races_state();
  int world_size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  s.clock_domains.assign(static_cast<std::size_t>(world_size), 0);
  const std::uint64_t mine = clock_domain();
  PMPI_Allgather(&mine, 1, MPI_UINT64_T, s.clock_domains.data(), 1, MPI_UINT64_T, shadow_of_world());
  // The channel times messages and receives below MPI_THREAD_MULTIPLE only.
  if (!judging_races()) {
    if (world_rank() == 0) log::info("GLOBAL:MSG:RACE judges no receive of a program at MPI_THREAD_MULTIPLE");
    return;
  }
  listen_to_channel({.receive_completed = receive_completed,
                     .probe_found = probe_found,
                     .paired = paired,
                     .unreceived = unreceived,
                     .shadow_gone = shadow_gone});
  listen_for_passed_over(passed_over);
}

// Nothing judged (MPI_THREAD_MULTIPLE, or no race) reports nothing.
void finish_message_races() { report_races(); }

}  // namespace mpisentry::checks
