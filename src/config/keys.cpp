#include "config/keys.hpp"

#include "config/text.hpp"

#include <algorithm>
#include <charconv>

namespace mpisentry::config {
namespace {

template <class... Lambdas>
struct Overloaded : Lambdas... {
  using Lambdas::operator()...;
};
// clang 14 (the fuzz build's) does not deduce an aggregate's template arguments.
template <class... Lambdas>
Overloaded(Lambdas...) -> Overloaded<Lambdas...>;

constexpr Key key_table[] = {
#define MPISENTRY_TIMEOUT(name, member, help) {name, &Settings::member, help},
#define MPISENTRY_DURATION(name, member, default_value, help) {name, &Settings::member, help},
#define MPISENTRY_INTEGER(name, member, default_value, min, max, help) \
  {name, IntegerMember{&Settings::member, min, max}, help},
#define MPISENTRY_PATH(name, member, help) {name, &Settings::member, help},
#define MPISENTRY_AUTO_SWITCH(name, member, default_value, help) {name, &Settings::member, help},
#define MPISENTRY_DELAYS(name, member, help) {name, &Settings::member, help},
#define MPISENTRY_SIGNAL(name, member, unset_word, help) {name, SignalMember{&Settings::member, unset_word}, help},
#define MPISENTRY_PORTS(name, member, help) {name, &Settings::member, help},
#define MPISENTRY_INTERFACES(name, member, help) {name, &Settings::member, help},
#define MPISENTRY_SWITCH(name, member, default_value, help) {name, &Settings::member, help},
#include "config/flags.def"
};

// Intel Trace Collector's keys that mpisentry accepts with a notice (flags.def).
constexpr std::string_view itc_only_key_table[] = {
#define MPISENTRY_ITC_ONLY_KEY(name) name,
#include "config/flags.def"
};

bool parse_integer(std::string_view text, IntegerMember integer, int& out, std::string& error) {
  int value = 0;
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || status != std::errc{} || end != text.data() + text.size()) {
    error = in_quotes(text) + ": not a whole number";
    return false;
  }
  if (value < integer.min || value > integer.max) {
    error = in_quotes(text) + ": out of range (" + std::to_string(integer.min) + " to " +
            std::to_string(integer.max) + ")";
    return false;
  }
  out = value;
  return true;
}

// AutoSwitch's values as config files spell them, in the enum's order.
constexpr std::string_view auto_switch_words[] = {"auto", "on", "off"};

bool parse_auto_switch(std::string_view text, AutoSwitch& out, std::string& error) {
  for (std::size_t i = 0; i < std::size(auto_switch_words); ++i) {
    if (equals_ignoring_case(text, auto_switch_words[i])) {
      out = static_cast<AutoSwitch>(i);
      return true;
    }
  }
  error = in_quotes(text) + ": not one of";
  for (const std::string_view word : auto_switch_words)
    error += std::string(word == auto_switch_words[0] ? " " : ", ") + std::string(word);
  return false;
}

std::string quoted_if_needed(const std::string& text) {
  // Every blank that splits a config line's words, '#' and '"'.
  const bool plain = !text.empty() && text.find_first_of(" \t\r\f\v#\"") == std::string::npos;
  return plain ? text : in_quotes(text);
}

}  // namespace

std::span<const Key> keys() { return key_table; }

bool parse_switch(std::string_view word, bool& on) {
  for (const std::string_view yes : {"on", "true", "yes", "1"}) {
    if (equals_ignoring_case(word, yes)) {
      on = true;
      return true;
    }
  }
  for (const std::string_view no : {"off", "false", "no", "0"}) {
    if (equals_ignoring_case(word, no)) {
      on = false;
      return true;
    }
  }
  return false;
}

const Key* find_key(std::string_view name) {
  const auto found = std::ranges::find_if(key_table, [&](const Key& key) { return equals_ignoring_case(key.name, name); });
  return found == std::end(key_table) ? nullptr : found;
}

std::span<const std::string_view> itc_only_keys() { return itc_only_key_table; }

bool is_itc_only_key(std::string_view name) {
  return std::ranges::any_of(itc_only_key_table, [&](std::string_view key) { return equals_ignoring_case(key, name); });
}

std::string env_name(std::string_view prefix, std::string_view key) {
  std::string name = std::string(prefix) + to_upper(key);
  std::ranges::replace(name, '-', '_');
  return name;
}

std::string option_name(std::string_view key) { return "--" + to_lower(key); }

bool parse_value(const Key& key, std::string_view value, Settings& settings, std::string& error) {
  return std::visit(Overloaded{
                        [&](Timeout Settings::*member) { return parse_timeout(value, settings.*member, error); },
                        [&](Duration Settings::*member) { return parse_duration(value, settings.*member, error); },
                        [&](IntegerMember integer) { return parse_integer(value, integer, settings.*integer.member, error); },
                        [&](std::string Settings::*member) {
                          settings.*member = value;
                          return true;
                        },
                        [&](AutoSwitch Settings::*member) { return parse_auto_switch(value, settings.*member, error); },
                        [&](DelayInjection Settings::*member) {
                          return parse_delay_injection(value, settings.*member, error);
                        },
                        [&](SignalMember signal) { return parse_signal(value, signal.unset_word, settings.*signal.member, error); },
                        [&](PortRange Settings::*member) { return parse_port_range(value, settings.*member, error); },
                        [&](InterfaceList Settings::*member) {
                          return parse_interface_list(value, settings.*member, error);
                        },
                        [&](bool Settings::*member) {
                          if (parse_switch(value, settings.*member)) return true;
                          error = in_quotes(value) + ": not on or off (on, true, yes, 1 or off, false, no, 0)";
                          return false;
                        },
                    },
                    key.member);
}

std::string value_text(const Key& key, const Settings& settings) {
  return std::visit(Overloaded{
                        [&](Timeout Settings::*member) { return format_timeout(settings.*member); },
                        [&](Duration Settings::*member) { return format_duration(settings.*member); },
                        [&](IntegerMember integer) { return std::to_string(settings.*integer.member); },
                        [&](std::string Settings::*member) { return quoted_if_needed(settings.*member); },
                        [&](AutoSwitch Settings::*member) { return std::string(auto_switch_words[static_cast<int>(settings.*member)]); },
                        [&](DelayInjection Settings::*member) { return format_delay_injection(settings.*member); },
                        [&](SignalMember signal) { return format_signal(settings.*signal.member, signal.unset_word); },
                        [&](PortRange Settings::*member) { return format_port_range(settings.*member); },
                        [&](InterfaceList Settings::*member) { return format_interface_list(settings.*member); },
                        [&](bool Settings::*member) { return std::string(settings.*member ? "on" : "off"); },
                    },
                    key.member);
}

std::string value_syntax(const Key& key) {
  return std::visit(Overloaded{
                        [](Timeout Settings::*) -> std::string { return "auto|TIME"; },
                        [](Duration Settings::*) -> std::string { return "TIME"; },
                        [](IntegerMember integer) { return std::to_string(integer.min) + ".." + std::to_string(integer.max); },
                        [](std::string Settings::*) -> std::string { return "PATH"; },
                        [](AutoSwitch Settings::*) { return std::string("auto|on|off"); },
                        [](DelayInjection Settings::*) -> std::string { return "off|SEED,PERCENT,DELAY"; },
                        [](SignalMember signal) { return std::string(signal.unset_word) + "|SIGRTMIN+N|SIGUSR1|SIGUSR2"; },
                        [](PortRange Settings::*) -> std::string { return "any|PORT|FIRST-LAST"; },
                        [](InterfaceList Settings::*) -> std::string { return "any|NAME,NAME..."; },
                        [](bool Settings::*) -> std::string { return "on|off"; },
                    },
                    key.member);
}

std::vector<std::string> default_listing() {
  const Settings defaults;
  std::vector<std::string> lines;
  for (const Key& key : key_table) lines.push_back(std::string(key.name) + ' ' + value_text(key, defaults));
  for (const CheckInfo& check : switchable_checks())
    lines.push_back(std::string(check_key) + ' ' + std::string(check.name) + (defaults.*check.member ? " ON" : " OFF"));
  return lines;
}

}  // namespace mpisentry::config
