// The checks of checks.def as code: their ids, names, severities and
// switches, and the patterns of "CHECK <pattern> ON|OFF".
#pragma once

#include <span>
#include <string_view>

namespace mpisentry {

enum class Check {
#define MPISENTRY_CHECK(id, name, member, severity, default_on, ends_job, itc, help) id,
#define MPISENTRY_REPORT(id, name, severity, help) id,
#define MPISENTRY_ITC_ONLY(name)
#include "config/checks.def"
};

inline constexpr int kCheckCount = 0
#define MPISENTRY_CHECK(id, name, member, severity, default_on, ends_job, itc, help) +1
#define MPISENTRY_REPORT(id, name, severity, help) +1
#define MPISENTRY_ITC_ONLY(name)
#include "config/checks.def"
    ;

enum class Severity { Fatal, Error, Warning, Info };

namespace config {

struct Settings;

struct CheckInfo {
  Check id;
  std::string_view name;     // "GLOBAL:DEADLOCK:HARD"
  Severity severity;
  bool Settings::*member;    // what "CHECK <name> ON|OFF" sets; nullptr for a report no key switches
  bool ends_job;             // the checker aborts the job after the report
  bool itc;                  // Intel Trace Collector has the check too
  std::string_view help;
};

// By id; every Check has one.
const CheckInfo& check_info(Check check);
// The checks that "CHECK <pattern> ON|OFF" switches, in the table's order.
std::span<const CheckInfo> switchable_checks();
// Every check of Intel Trace Collector's, those mpisentry implements and
// those it accepts with a notice.
std::span<const std::string_view> itc_checks();

// Case-insensitive; '*' matches any text within one level (no ':'), '**'
// matches across levels.
bool matches_check_pattern(std::string_view pattern, std::string_view check);

}  // namespace config
}  // namespace mpisentry
