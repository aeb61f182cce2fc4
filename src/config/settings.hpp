// The checker's settings, read from ITC-style config files and environment
// variables. One table of keys (flags.def) makes the parser, the defaults, the
// environment names, the launcher's options and the help text.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mpisentry::config {

using Duration = std::chrono::microseconds;

// INJECT-DELAYS: "off", or "SEED,PERCENT,DELAY".
struct DelayInjection {
  bool on = false;
  std::uint64_t seed = 0;
  double percent = 0;  // of the calls, 0 to 100
  Duration delay{};
  bool operator==(const DelayInjection&) const = default;
};

// MONITOR-PORTS: the TCP ports the monitors listen on, "any" (the system
// picks one) or "FIRST-LAST".
struct PortRange {
  int first = 0;  // 0: any
  int last = 0;
  bool operator==(const PortRange&) const = default;
};

// MONITOR-INTERFACES: the network interfaces whose IPv4 addresses a monitor
// offers to the others, "any" (every one that is up) or names: "eth0,ib0".
struct InterfaceList {
  std::vector<std::string> names;  // empty: any
  bool operator==(const InterfaceList&) const = default;
};

// A key that the checker may decide (auto) or the user sets on or off.
enum class AutoSwitch { Auto, On, Off };

// DEADLOCK-TIMEOUT: "auto", or a time. With a time no HARD verdict comes
// before it, as in ITC. Under auto, a deadlock proven whatever the time
// (definite waits, no message in flight that can end one, every task held)
// is looked for once its ranks have been blocked kProvenAfter, and reported
// as soon as two looks confirm it; a verdict that needs waits only some MPI
// implementations make waits kAutoTimeout, ITC's default.
struct Timeout {
  bool automatic = true;
  std::chrono::microseconds time{};  // when not automatic
  bool operator==(const Timeout&) const = default;
};
inline constexpr std::chrono::microseconds kProvenAfter = std::chrono::milliseconds(400);
inline constexpr std::chrono::microseconds kAutoTimeout = std::chrono::minutes(1);
// How long ranks are blocked before a verdict proven whatever the time may be taken.
inline std::chrono::microseconds proven_after(const Timeout& timeout) {
  return timeout.automatic ? kProvenAfter : timeout.time;
}
// How long before any HARD verdict may be taken.
inline std::chrono::microseconds any_verdict_after(const Timeout& timeout) {
  return timeout.automatic ? kAutoTimeout : timeout.time;
}

// A signal key's value when it names no signal: the key's unset word, "auto"
// (the checker chooses) for STACK-SIGNAL, "off" (none) for DUMP-SIGNAL.
inline constexpr int kUnsetSignal = 0;

// One member per row of flags.def and per check of checks.def, which give
// each its type, default and meaning: deadlock_timeout, verbose, report_file,
// check_hard, ...
struct Settings {
#define MPISENTRY_TIMEOUT(name, member, help) Timeout member;
#define MPISENTRY_DURATION(name, member, default_value, help) Duration member = default_value;
#define MPISENTRY_INTEGER(name, member, default_value, min, max, help) int member = default_value;
#define MPISENTRY_PATH(name, member, help) std::string member;
#define MPISENTRY_AUTO_SWITCH(name, member, default_value, help) AutoSwitch member = default_value;
#define MPISENTRY_DELAYS(name, member, help) DelayInjection member;
#define MPISENTRY_SIGNAL(name, member, unset_word, help) int member = kUnsetSignal;
#define MPISENTRY_PORTS(name, member, help) PortRange member;
#define MPISENTRY_INTERFACES(name, member, help) InterfaceList member;
#define MPISENTRY_SWITCH(name, member, default_value, help) bool member = default_value;
#include "config/flags.def"
#define MPISENTRY_CHECK(id, name, member, severity, default_on, ends_job, itc, help) bool member = default_on;
#define MPISENTRY_REPORT(id, name, severity, help)
#define MPISENTRY_ITC_ONLY(name)
#include "config/checks.def"
  bool operator==(const Settings&) const = default;
};

// ITC time syntax: "1m+30s", "500l", "2.5", units c l s m h d w; a bare number is seconds.
bool parse_duration(std::string_view text, Duration& out, std::string& error);
// The shortest text that parse_duration reads back exactly: "90s", "250l", "1w+1c".
std::string format_duration(Duration d);
// DEADLOCK-TIMEOUT's syntax: "auto" or a time.
bool parse_timeout(std::string_view text, Timeout& out, std::string& error);
std::string format_timeout(const Timeout& timeout);

// INJECT-DELAYS' syntax: "off" or "SEED,PERCENT,DELAY" (7,5,300l: seed 7,
// 5 % of calls, 300 ms); DELAY in the time syntax. On error leaves `out` as
// it was and says what is wrong in `error`.
bool parse_delay_injection(std::string_view text, DelayInjection& out, std::string& error);
// The text parse_delay_injection reads back: "off", "7,5,300l".
std::string format_delay_injection(const DelayInjection& injection);

// MONITOR-PORTS' syntax: "any", "PORT" or "FIRST-LAST", ports 1 to 65535.
bool parse_port_range(std::string_view text, PortRange& out, std::string& error);
std::string format_port_range(const PortRange& ports);
// MONITOR-INTERFACES' syntax: "any" or interface names split by commas.
bool parse_interface_list(std::string_view text, InterfaceList& out, std::string& error);
std::string format_interface_list(const InterfaceList& interfaces);

// A signal for the checker's own use: the key's `unset_word` ("auto" or
// "off", read as kUnsetSignal), a real-time signal by number or as
// "SIGRTMIN+N", or SIGUSR1/SIGUSR2. On error leaves `out` as it was and says
// what is wrong in `error`.
bool parse_signal(std::string_view text, std::string_view unset_word, int& out, std::string& error);
// The text parse_signal reads back: `unset_word`, "SIGRTMIN+3", "SIGUSR1".
std::string format_signal(int signal, std::string_view unset_word);

}  // namespace mpisentry::config
