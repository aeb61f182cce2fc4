// The reports of a run as records for the CI reports (REPORT-JUNIT,
// REPORT-SARIF), and their file of JSON lines, one record a line:
//
// {"check": "GLOBAL:DEADLOCK:HARD", "rank": 0, "message": string, "text": string,
//  "places": [{"ranks": [int], "call": string,
//              "frame": {"function": string, "file": string, "line": int, "module": string}}]}
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace mpisentry::report {
namespace {

using Json = nlohmann::ordered_json;

// The check named `name`; false when no check has that name.
bool check_named(std::string_view name, Check& check) {
  for (int i = 0; i < kCheckCount; ++i)
    if (check_name(static_cast<Check>(i)) == name) {
      check = static_cast<Check>(i);
      return true;
    }
  return false;
}

// Adds `rank` to the place of the same call and frame, or a new place.
void add_place(std::vector<CiRecord::Place>& places, int rank, const std::string& call, const Frame& frame) {
  const auto same = std::find_if(places.begin(), places.end(), [&](const CiRecord::Place& place) {
    return place.call == call && place.frame == frame;
  });
  if (same == places.end())
    places.push_back({{rank}, call, frame});
  else if (same->ranks.back() != rank)
    same->ranks.push_back(rank);
}

}  // namespace

CiRecord ci_record(const Report& report, std::string text) {
  CiRecord record{report.check, 0, report.rule, std::move(text), {}};
  if (record.message.empty()) record.message = check_name(report.check);
  // A rank's own report (a signal's dump, a lost rank) holds that rank alone.
  if (report.ranks.size() == 1) record.rank = report.ranks.front().rank;
  for (const RankSnapshot& rank : report.ranks)
    for (const ThreadSnapshot& thread : rank.threads)
      if (!thread.stack.empty())
        add_place(record.places, rank.rank, thread.state == RankState::Running ? std::string() : thread.function,
                  thread.stack.front());
  return record;
}

CiRecord ci_record(const Finding& finding, std::string text) {
  CiRecord record{finding.check, finding.rank, fmt::format("{}", fmt::join(finding.summary, "\n")), std::move(text),
                  {}};
  if (record.message.empty()) record.message = check_name(finding.check);
  for (const Finding::Party& party : finding.parties)
    if (!party.stack.empty()) record.places.push_back({party.ranks, party.call, party.stack.front()});
  std::stable_sort(record.places.begin(), record.places.end(),
                   [](const CiRecord::Place& a, const CiRecord::Place& b) { return a.ranks < b.ranks; });
  return record;
}

std::string ci_record_line(const CiRecord& record) {
  Json places = Json::array();
  for (const CiRecord::Place& place : record.places)
    places.push_back({{"ranks", place.ranks},
                      {"call", place.call},
                      {"frame",
                       {{"function", place.frame.function},
                        {"file", place.frame.file},
                        {"line", place.frame.line},
                        {"module", place.frame.module}}}});
  const Json line = {{"check", check_name(record.check)},
                     {"rank", record.rank},
                     {"message", record.message},
                     {"text", record.text},
                     {"places", std::move(places)}};
  return line.dump(-1, ' ', false, Json::error_handler_t::replace) + '\n';
}

std::vector<CiRecord> read_ci_records(std::string_view lines) {
  std::vector<CiRecord> records;
  for (std::size_t start = 0; start < lines.size();) {
    std::size_t end = lines.find('\n', start);
    if (end == std::string_view::npos) end = lines.size();
    const std::string_view line = lines.substr(start, end - start);
    start = end + 1;
    const Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    CiRecord record;
    if (!json.is_object() || !check_named(json.value("check", ""), record.check)) continue;
    try {
      record.rank = json.at("rank").get<int>();
      record.message = json.at("message").get<std::string>();
      record.text = json.at("text").get<std::string>();
      for (const Json& place : json.at("places")) {
        const Json& frame = place.at("frame");
        record.places.push_back({place.at("ranks").get<std::vector<int>>(), place.at("call").get<std::string>(),
                                 {frame.at("function").get<std::string>(), frame.at("file").get<std::string>(),
                                  frame.at("line").get<int>(), frame.at("module").get<std::string>()}});
      }
    } catch (const Json::exception&) {
      continue;  // not a record of ours
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace mpisentry::report
