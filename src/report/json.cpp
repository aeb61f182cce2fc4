// The report as one JSON object, for scripts and CI. Schema
// "mpisentry-report/5"; docs/report-schema.md has the field-by-field text:
//
// {
//   "schema": "mpisentry-report/5",
//   "check": "GLOBAL:DEADLOCK:HARD" | "...:POTENTIAL" | "...:NO_PROGRESS" | "...:UNSAFE" | "...:OUTSIDE_MPI"
//            | "LOCAL:EXIT:SIGNAL" | "LOCAL:EXIT:BEFORE_MPI_FINALIZE" | "DUMP",
//   "severity": "error" | "warning" | "info",  // error: fatal (the job ends); info: a dump on request
//   "aborts_job": bool,                 // the checker aborts the job (HARD, POTENTIAL)
//   "rule": string,                     // the rule that fired, in words
//   "threshold_seconds": number, "threshold_key": "DEADLOCK-TIMEOUT" | "DEADLOCK-WARNING",
//   "proven_at_once": bool (DEADLOCK-TIMEOUT auto, a verdict proven whatever the time),
//   "partial": bool,                    // some ranks deadlocked while others still run
//   "core": {"ranks": [int], "cycle": [int], "blocked_behind": [int],
//            "cycles": [{"ranks": [int], "cycle": [int]}]},  // one per deadlock; "cycle" is the first's
//   "waiting": [int], "culprits": [int],  // OUTSIDE_MPI (and a dump): who waits for which ranks outside MPI
//   "signal": null | string,            // DUMP and LOCAL:EXIT:SIGNAL: the signal, "SIGUSR1"
//   "arcs": [{"from": {"rank": int, "thread": int}, "to": int, "mode": "all" | "any", "possible": bool}],
//   "arcs_left_out": int,               // arcs the analysis used that "arcs" does not list (over 1,000,000)
//   "ranks": [{
//     "rank": int, "host": string, "pid": int,
//     "state": "running" | "blocked" | "polling" | "finalizing", "seconds": number, "activity": int,
//     "exit_status": null | int,        // exiting without MPI_Finalize with this status
//     "threads": [{
//       "id": int, "state": string, "seconds": number, "function": string, "call": string,
//       "wait_mode": "none" | "all" | "any", "waits_for": runs, "possibly_waits_for": runs,
//       "wait_reason": string,
//       "collective": null | {"comm_id": string, "sequence": int, "function": string, "root": int, "op": string},
//       "started_collectives": [{"collective": {...as above}, "waits_for": runs, "possibly_waits_for": runs}],
//       "converted_send": bool,
//       "messages": [{"send": bool, "peer": int, "tag": int, "comm_id": string}],
//       "stack": [{"function": string, "file": string, "line": int, "module": string}]
//     }],
//     "collectives": [{"comm_id": string, "entered": int}]
//   }],
//   "classes": [{"ranks": "0-1", "rank_list": [int], "representative": int,
//                "hosts": [{"host": string, "ranks": "0-1"}]}]  // where the class runs, by host
// }
//
// runs: a set of ranks as [[first, last], ...], ascending, inclusive: a
// collective's member on 100,000 ranks waits for [[0, 41], [43, 99999]].
//
// Adding a key is no change of schema: readers skip keys they do not know.
//
// Communicator ids are 64-bit and written as decimal strings, which readers
// whose numbers are doubles keep exact. Numbers that are not finite are
// written as null. Strings hold the bytes as given; bytes that are not UTF-8
// become U+FFFD.
#include <string>

#include <nlohmann/json.hpp>

#include "report/hosts.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

// Keys in the order of the schema above.
using Json = nlohmann::ordered_json;

std::string comm_id(std::uint64_t id) { return std::to_string(id); }

Json rank_runs(const RankSet& ranks) {
  Json runs = Json::array();
  for (const RankSet::Run& run : ranks.runs()) runs.push_back({run.first, run.last});
  return runs;
}

Json collective(const CollectiveCall& call) {
  if (call.comm_id == 0) return nullptr;
  return {{"comm_id", comm_id(call.comm_id)}, {"sequence", call.sequence}, {"function", call.function},
          {"root", call.root}, {"op", call.op}};
}

// `items` as an array, each made by to_item.
template <typename Item, typename ToItem>
Json array_of(const std::vector<Item>& items, ToItem to_item) {
  Json array = Json::array();
  for (const Item& item : items) array.push_back(to_item(item));
  return array;
}

Json thread_json(const ThreadSnapshot& thread) {
  return {{"id", thread.id},
          {"state", to_string(thread.state)},
          {"seconds", thread.seconds},
          {"function", thread.function},
          {"call", thread.call},
          {"wait_mode", to_string(thread.wait_mode)},
          {"waits_for", rank_runs(thread.waits_for)},
          {"possibly_waits_for", rank_runs(thread.possibly_waits_for)},
          {"wait_reason", thread.wait_reason},
          {"collective", collective(thread.collective)},
          {"started_collectives", array_of(thread.started_collectives,
                                           [](const StartedCollective& started) {
                                             return Json{{"collective", collective(started.call)},
                                                         {"waits_for", rank_runs(started.waits_for)},
                                                         {"possibly_waits_for", rank_runs(started.possibly_waits_for)}};
                                           })},
          {"converted_send", thread.converted_send},
          {"messages", array_of(thread.messages,
                                [](const PendingMessage& message) {
                                  return Json{{"send", message.send}, {"peer", message.peer}, {"tag", message.tag},
                                              {"comm_id", comm_id(message.comm_id)}};
                                })},
          {"stack", array_of(thread.stack, [](const Frame& frame) {
             return Json{{"function", frame.function}, {"file", frame.file}, {"line", frame.line},
                         {"module", frame.module}};
           })}};
}

Json rank_json(const RankSnapshot& rank) {
  return {{"rank", rank.rank},
          {"host", rank.host},
          {"pid", rank.pid},
          {"state", to_string(rank.state)},
          {"seconds", rank.seconds},
          {"activity", rank.activity},
          {"exit_status", rank.exit_status == RankSnapshot::kNotExiting ? Json(nullptr) : Json(rank.exit_status)},
          {"threads", array_of(rank.threads, thread_json)},
          {"collectives", array_of(rank.collectives, [](const CollectiveCount& count) {
             return Json{{"comm_id", comm_id(count.comm_id)}, {"entered", count.entered}};
           })}};
}

Json class_json(const RankClass& rank_class) {
  return {{"ranks", compress_ranks(rank_class.ranks)},
          {"rank_list", rank_class.ranks},
          {"representative", rank_class.representative->rank},
          {"hosts", array_of(group_by_host(rank_class.members), [](const HostGroup& group) {
             return Json{{"host", group.host}, {"ranks", compress_ranks(group.ranks)}};
           })}};
}

const char* severity_word(Severity level) {
  switch (level) {
    case Severity::Fatal:
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "info";
  }
  return "error";
}

// Compact, non-UTF-8 bytes replaced rather than thrown on.
std::string dumped(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Appends the keys of `members` to the object under way in `out`, on a line
// of their own.
void append_members(std::string& out, const Json& members) {
  const std::string text = dumped(members);
  out += ",\n";
  out.append(text, 1, text.size() - 2);
}

}  // namespace

std::string format_json(const Report& report) {
  const Json head = {
      {"schema", "mpisentry-report/5"},
      {"check", check_name(report.check)},
      {"severity", severity_word(severity(report.check))},
      {"aborts_job", aborts_job(report.check)},
      {"rule", report.rule},
      {"threshold_seconds", report.threshold_seconds},
      {"threshold_key", report.threshold_key},
      {"proven_at_once", report.proven_at_once},
      {"partial", report.partial},
      {"core",
       {{"ranks", report.core.core},
        {"cycle", report.core.cycles.empty() ? std::vector<int>() : report.core.cycles.front().cycle},
        {"blocked_behind", report.core.blocked_behind},
        {"cycles", array_of(report.core.cycles, [](const DeadlockCycle& deadlock) {
           return Json{{"ranks", deadlock.ranks}, {"cycle", deadlock.cycle}};
         })}}},
      {"waiting", report.waiting},
      {"culprits", report.culprits},
      {"signal", report.signal_number == 0 ? Json(nullptr) : Json(signal_name(report.signal_number))}};
  // The arcs on a line, then the ranks one at a time, each on a line of its
  // own: 100,000 ranks never make one document in memory, and a reader can
  // grep a rank's line.
  std::string out = dumped(head);
  out.pop_back();  // the head's closing brace
  append_members(out, {{"arcs", array_of(report.arcs,
                                         [](const WaitArc& arc) {
                                           return Json{{"from", {{"rank", arc.from.rank}, {"thread", arc.from.thread}}},
                                                       {"to", arc.to},
                                                       {"mode", to_string(arc.mode)},
                                                       {"possible", arc.possible}};
                                         })},
                       {"arcs_left_out", report.arcs_left_out}});
  out += ",\n\"ranks\":[";
  for (std::size_t i = 0; i < report.ranks.size(); ++i) out += (i == 0 ? "\n" : ",\n") + dumped(rank_json(report.ranks[i]));
  out += ']';
  append_members(out, {{"classes", array_of(merge_stacks(report.ranks, leading_ranks(report)), class_json)}});
  out += "}\n";
  return out;
}

}  // namespace mpisentry::report
