// The report as one JSON object, for scripts and CI. Schema
// "mpisentry-report/1" (docs/report-schema.md has the field-by-field text):
//
// {
//   "schema": "mpisentry-report/1",
//   "check": "GLOBAL:DEADLOCK:HARD" | "GLOBAL:DEADLOCK:POTENTIAL" | "GLOBAL:DEADLOCK:NO_PROGRESS",
//   "severity": "error" | "warning",
//   "threshold_seconds": number,        // the DEADLOCK-TIMEOUT or DEADLOCK-WARNING in force
//   "threshold_key": "DEADLOCK-TIMEOUT" | "DEADLOCK-WARNING",
//   "partial": bool,                    // some ranks deadlocked while others still run
//   "core": {"ranks": [int], "cycle": [int], "blocked_behind": [int]},
//   "ranks": [{
//     "rank": int, "host": string, "pid": int,
//     "state": "running" | "blocked" | "polling" | "finalizing",
//     "seconds": number,                // blocked for, or without progress for
//     "function": string, "call": string,
//     "wait_mode": "none" | "all" | "any", "waits_for": [int], "wait_reason": string,
//     "converted_send": bool,
//     "stack": [{"function": string, "file": string, "line": int, "module": string}]
//   }],
//   "classes": [{"ranks": "0-1", "rank_list": [int], "representative": int}]
// }
//
// Numbers that are not finite are written as null. Strings hold the bytes as
// given; bytes that are not UTF-8 appear as \u00XX.
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/quote.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

std::string number(double value) { return std::isfinite(value) ? fmt::format("{}", value) : "null"; }

std::string rank_array(const std::vector<int>& ranks) { return fmt::format("[{}]", fmt::join(ranks, ",")); }

std::string boolean(bool value) { return value ? "true" : "false"; }

void append_frame(std::string& out, const Frame& frame) {
  fmt::format_to(std::back_inserter(out), R"({{"function":{},"file":{},"line":{},"module":{}}})",
                 json_quote(frame.function), json_quote(frame.file), frame.line, json_quote(frame.module));
}

void append_rank(std::string& out, const RankSnapshot& rank) {
  fmt::format_to(std::back_inserter(out),
                 R"({{"rank":{},"host":{},"pid":{},"state":"{}","seconds":{},"function":{},"call":{},)"
                 R"("wait_mode":"{}","waits_for":{},"wait_reason":{},"converted_send":{},"stack":[)",
                 rank.rank, json_quote(rank.host), rank.pid, to_string(rank.state), number(rank.seconds),
                 json_quote(rank.function), json_quote(rank.call), to_string(rank.wait_mode),
                 rank_array(rank.waits_for), json_quote(rank.wait_reason), boolean(rank.converted_send));
  for (std::size_t i = 0; i < rank.stack.size(); ++i) {
    if (i > 0) out += ',';
    append_frame(out, rank.stack[i]);
  }
  out += "]}";
}

}  // namespace

std::string format_json(const Report& report) {
  std::string out = fmt::format(
      R"({{"schema":"mpisentry-report/1","check":"{}","severity":"{}","threshold_seconds":{},"threshold_key":{},)"
      R"("partial":{},"core":{{"ranks":{},"cycle":{},"blocked_behind":{}}},"ranks":[)",
      check_name(report.check), report.check == Check::NoProgress ? "warning" : "error",
      number(report.threshold_seconds), json_quote(report.threshold_key), boolean(report.partial),
      rank_array(report.core.core), rank_array(report.core.cycle), rank_array(report.core.blocked_behind));
  for (std::size_t i = 0; i < report.ranks.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    append_rank(out, report.ranks[i]);
  }
  out += "],\n\"classes\":[";
  const std::vector<RankClass> classes = merge_stacks(report.ranks, report.core);
  for (std::size_t i = 0; i < classes.size(); ++i) {
    fmt::format_to(std::back_inserter(out), R"({}{{"ranks":"{}","rank_list":{},"representative":{}}})",
                   i == 0 ? "" : ",", compress_ranks(classes[i].ranks), rank_array(classes[i].ranks),
                   classes[i].representative->rank);
  }
  out += "]}\n";
  return out;
}

}  // namespace mpisentry::report
