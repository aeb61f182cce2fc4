// The run's reports as a SARIF 2.1.0 log (read by tests/ci_reports into the
// SARIF object model of Debian's python3-sarif-python-om): one run of the tool
// "mpisentry", one result per report:
//
//  - ruleId: the check, "GLOBAL:DEADLOCK:HARD"; the rules list the checks
//    found, each with the checks table's help text and its level.
//  - level: "error" for a fatal report or an error, "warning", "note" for
//    information (GLOBAL:MSG:RACE).
//  - message: the rule that fired, or the finding's summary.
//  - locations: one per place of the program where ranks made a call of the
//    report: the program's innermost frame as file and line, its function as
//    a logical location, and "ranks 0-3: MPI_Ssend" as the location's
//    message. A file named by an absolute path is a file: URI. One the
//    stack names relative (a build that compiled it by a relative name, as
//    CMake's Makefiles do) is a relative reference with the uriBaseId
//    kCompileDirectory, which SARIF asks of a relative reference: the
//    directory the compiler ran in, which the stack does not give, so that
//    the run's originalUriBaseIds describe it without a URI and the consumer
//    supplies it (SARIF's resolution procedure lets it).
//  - properties: "rank", the rank that reported it, and "report", the text.
//
// A run with no report has an empty "results": checked, and nothing found.
#include <algorithm>
#include <cctype>
#include <iterator>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace mpisentry::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kCompileDirectory = "COMPILE_DIRECTORY";
constexpr const char* kSchemaUri = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

const char* level(Check check) {
  switch (severity(check)) {
    case Severity::Fatal:
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "error";
}

// RFC 3986: a path's bytes outside the unreserved characters, '/' and the
// sub-delimiters a path may hold, percent-encoded; "file://" before an
// absolute path.
std::string file_uri(const std::string& path) {
  constexpr std::string_view kKept = "-._~/!$&'()*+,;=:@";
  std::string uri = path.starts_with('/') ? "file://" : "";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x80 && std::isalnum(byte) != 0) || kKept.find(c) != std::string_view::npos) {
      uri += c;
    } else {
      constexpr const char* kHex = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xF];
    }
  }
  return uri;
}

Json location(const CiRecord::Place& place, int id) {
  const std::string ranks = compress_ranks(place.ranks);
  const std::string who = (place.ranks.size() == 1 ? "rank " : "ranks ") + ranks;
  Json where = {{"id", id},
                {"message", {{"text", who + ": " + (place.call.empty() ? "outside MPI" : place.call)}}}};
  const Frame& frame = place.frame;
  if (!frame.file.empty()) {
    Json artifact = {{"uri", file_uri(frame.file)}};
    if (!frame.file.starts_with('/')) artifact["uriBaseId"] = kCompileDirectory;
    Json physical = {{"artifactLocation", std::move(artifact)}};
    if (frame.line > 0) physical["region"] = {{"startLine", frame.line}};
    where["physicalLocation"] = std::move(physical);
  }
  where["logicalLocations"] = Json::array({{{"name", frame.function}, {"kind", "function"}}});
  return where;
}

}  // namespace

std::string format_sarif(const std::vector<CiRecord>& records) {
  Json rules = Json::array();
  int rule_index[kCheckCount];
  std::fill(std::begin(rule_index), std::end(rule_index), -1);
  Json results = Json::array();
  bool relative_files = false;
  for (const CiRecord& record : records) {
    int& index = rule_index[static_cast<int>(record.check)];
    if (index < 0) {
      index = static_cast<int>(rules.size());
      rules.push_back({{"id", check_name(record.check)},
                       {"shortDescription", {{"text", config::check_info(record.check).help}}},
                       {"defaultConfiguration", {{"level", level(record.check)}}}});
    }
    Json locations = Json::array();
    for (const CiRecord::Place& place : record.places) {
      locations.push_back(location(place, static_cast<int>(locations.size())));
      relative_files = relative_files || (!place.frame.file.empty() && !place.frame.file.starts_with('/'));
    }
    results.push_back({{"ruleId", check_name(record.check)},
                       {"ruleIndex", index},
                       {"level", level(record.check)},
                       {"message", {{"text", record.message}}},
                       {"locations", std::move(locations)},
                       {"properties", {{"rank", record.rank}, {"report", record.text}}}});
  }
  Json run = {{"tool", {{"driver", {{"name", "mpisentry"}, {"rules", std::move(rules)}}}}}};
  if (relative_files)
    run["originalUriBaseIds"] = {
        {kCompileDirectory,
         {{"description",
           {{"text", "the directory the compiler ran in, which the program's debug info names these files "
                     "relative to; not known to mpisentry"}}}}}};
  run["results"] = std::move(results);
  const Json log = {{"$schema", kSchemaUri}, {"version", "2.1.0"}, {"runs", Json::array({std::move(run)})}};
  return log.dump(2, ' ', false, Json::error_handler_t::replace) + '\n';
}

}  // namespace mpisentry::report
