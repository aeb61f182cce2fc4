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
//   "partial": bool,                    // some ranks deadlocked while others still run
//   "core": {"ranks": [int], "cycle": [int], "blocked_behind": [int]},
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
// appear as \u00XX.
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/hosts.hpp"
#include "report/quote.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

std::string number(double value) { return std::isfinite(value) ? fmt::format("{}", value) : "null"; }

std::string rank_array(const std::vector<int>& ranks) { return fmt::format("[{}]", fmt::join(ranks, ",")); }

std::string rank_runs(const RankSet& ranks) {
  std::string out = "[";
  for (const RankSet::Run& run : ranks.runs())
    fmt::format_to(std::back_inserter(out), "{}[{},{}]", out.size() == 1 ? "" : ",", run.first, run.last);
  return out + "]";
}

std::string boolean(bool value) { return value ? "true" : "false"; }

std::string comm_id(std::uint64_t id) { return fmt::format("\"{}\"", id); }

// "[a,b,...]" with each item written by append_item(out, item).
template <typename Item, typename AppendItem>
void append_array(std::string& out, const std::vector<Item>& items, AppendItem append_item) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    append_item(out, items[i]);
  }
  out += ']';
}

void append_frame(std::string& out, const Frame& frame) {
  fmt::format_to(std::back_inserter(out), R"({{"function":{},"file":{},"line":{},"module":{}}})",
                 json_quote(frame.function), json_quote(frame.file), frame.line, json_quote(frame.module));
}

void append_message(std::string& out, const PendingMessage& message) {
  fmt::format_to(std::back_inserter(out), R"({{"send":{},"peer":{},"tag":{},"comm_id":{}}})",
                 boolean(message.send), message.peer, message.tag, comm_id(message.comm_id));
}

void append_collective(std::string& out, const CollectiveCall& collective) {
  if (collective.comm_id == 0) {
    out += "null";
    return;
  }
  fmt::format_to(std::back_inserter(out), R"({{"comm_id":{},"sequence":{},"function":{},"root":{},"op":{}}})",
                 comm_id(collective.comm_id), collective.sequence, json_quote(collective.function), collective.root,
                 json_quote(collective.op));
}

void append_started(std::string& out, const StartedCollective& started) {
  out += R"({"collective":)";
  append_collective(out, started.call);
  fmt::format_to(std::back_inserter(out), R"(,"waits_for":{},"possibly_waits_for":{}}})", rank_runs(started.waits_for),
                 rank_runs(started.possibly_waits_for));
}

void append_thread(std::string& out, const ThreadSnapshot& thread) {
  fmt::format_to(std::back_inserter(out),
                 R"({{"id":{},"state":"{}","seconds":{},"function":{},"call":{},"wait_mode":"{}","waits_for":{},)"
                 R"("possibly_waits_for":{},"wait_reason":{},"collective":)",
                 thread.id, to_string(thread.state), number(thread.seconds), json_quote(thread.function),
                 json_quote(thread.call), to_string(thread.wait_mode), rank_runs(thread.waits_for),
                 rank_runs(thread.possibly_waits_for), json_quote(thread.wait_reason));
  append_collective(out, thread.collective);
  out += R"(,"started_collectives":)";
  append_array(out, thread.started_collectives, append_started);
  fmt::format_to(std::back_inserter(out), R"(,"converted_send":{},"messages":)", boolean(thread.converted_send));
  append_array(out, thread.messages, append_message);
  out += R"(,"stack":)";
  append_array(out, thread.stack, append_frame);
  out += '}';
}

void append_collective_count(std::string& out, const CollectiveCount& count) {
  fmt::format_to(std::back_inserter(out), R"({{"comm_id":{},"entered":{}}})", comm_id(count.comm_id), count.entered);
}

void append_rank(std::string& out, const RankSnapshot& rank) {
  fmt::format_to(std::back_inserter(out),
                 R"({{"rank":{},"host":{},"pid":{},"state":"{}","seconds":{},"activity":{},"exit_status":{},"threads":)",
                 rank.rank, json_quote(rank.host), rank.pid, to_string(rank.state), number(rank.seconds), rank.activity,
                 rank.exit_status == RankSnapshot::kNotExiting ? "null" : std::to_string(rank.exit_status));
  append_array(out, rank.threads, append_thread);
  out += R"(,"collectives":)";
  append_array(out, rank.collectives, append_collective_count);
  out += '}';
}

void append_arc(std::string& out, const WaitArc& arc) {
  fmt::format_to(std::back_inserter(out), R"({{"from":{{"rank":{},"thread":{}}},"to":{},"mode":"{}","possible":{}}})",
                 arc.from.rank, arc.from.thread, arc.to, to_string(arc.mode), boolean(arc.possible));
}

void append_host(std::string& out, const HostGroup& group) {
  fmt::format_to(std::back_inserter(out), R"({{"host":{},"ranks":"{}"}})", json_quote(group.host),
                 compress_ranks(group.ranks));
}

void append_class(std::string& out, const RankClass& rank_class) {
  fmt::format_to(std::back_inserter(out), R"({{"ranks":"{}","rank_list":{},"representative":{},"hosts":)",
                 compress_ranks(rank_class.ranks), rank_array(rank_class.ranks), rank_class.representative->rank);
  append_array(out, group_by_host(rank_class.members), append_host);
  out += '}';
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

}  // namespace

std::string format_json(const Report& report) {
  std::string out = fmt::format(
      R"({{"schema":"mpisentry-report/5","check":"{}","severity":"{}","aborts_job":{},"rule":{},)"
      R"("threshold_seconds":{},"threshold_key":{},"partial":{},)"
      R"("core":{{"ranks":{},"cycle":{},"blocked_behind":{}}},"waiting":{},"culprits":{},"signal":{},)"
      "\n\"arcs\":",
      check_name(report.check), severity_word(severity(report.check)), boolean(aborts_job(report.check)),
      json_quote(report.rule), number(report.threshold_seconds), json_quote(report.threshold_key),
      boolean(report.partial), rank_array(report.core.core), rank_array(report.core.cycle),
      rank_array(report.core.blocked_behind), rank_array(report.waiting), rank_array(report.culprits),
      report.signal_number == 0 ? "null" : json_quote(signal_name(report.signal_number)));
  append_array(out, report.arcs, append_arc);
  fmt::format_to(std::back_inserter(out), ",\"arcs_left_out\":{},\n\"ranks\":[", report.arcs_left_out);
  for (std::size_t i = 0; i < report.ranks.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    append_rank(out, report.ranks[i]);
  }
  out += "],\n\"classes\":";
  append_array(out, merge_stacks(report.ranks, leading_ranks(report)), append_class);
  out += "}\n";
  return out;
}

}  // namespace mpisentry::report
