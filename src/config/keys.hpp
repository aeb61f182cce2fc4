// The run-time form of flags.def: what the parser, the launcher and the tests
// look keys up in.
#pragma once

#include "config/checks.hpp"
#include "config/settings.hpp"

#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace mpisentry::config {

struct IntegerMember {
  int Settings::*member;
  int min;
  int max;
};


// A signal number, kUnsetSignal for the key's unset word.
struct SignalMember {
  int Settings::*member;
  std::string_view unset_word;  // "auto" or "off"
};

// The Settings member a key sets; its type is the key's kind.
using Member = std::variant<Timeout Settings::*, Duration Settings::*, IntegerMember, std::string Settings::*,
                            AutoSwitch Settings::*, DelayInjection Settings::*, SignalMember, PortRange Settings::*,
                            InterfaceList Settings::*, bool Settings::*>;

// A key that takes one value: "DEADLOCK-TIMEOUT 1m".
struct Key {
  std::string_view name;
  Member member;
  std::string_view help;
};

inline constexpr std::string_view check_key = "CHECK";

std::span<const Key> keys();

namespace detail {
template <typename Pointer>
Pointer plain(const Pointer& member) { return member; }
inline int Settings::*plain(const IntegerMember& member) { return member.member; }
inline int Settings::*plain(const SignalMember& member) { return member.member; }
}  // namespace detail

// The name of the key that sets `member`; empty if none does.
template <typename T>
std::string_view name_of(T Settings::*member) {
  for (const Key& key : keys()) {
    const bool sets = std::visit(
        [&](const auto& kind) {
          const auto pointer = detail::plain(kind);
          if constexpr (std::is_same_v<std::remove_const_t<decltype(pointer)>, T Settings::*>) return pointer == member;
          return false;
        },
        key.member);
    if (sets) return key.name;
  }
  return {};
}

// A switch's value, case-insensitive: on, true, yes, 1 or off, false, no, 0.
// False, `on` unchanged, for any other word.
bool parse_switch(std::string_view word, bool& on);

// Case-insensitive; nullptr when `name` is not a key of the table.
const Key* find_key(std::string_view name);

// ITC keys that mpisentry accepts with a notice and otherwise ignores.
std::span<const std::string_view> itc_only_keys();
bool is_itc_only_key(std::string_view name);

// ("VT_", "DEADLOCK-TIMEOUT") -> "VT_DEADLOCK_TIMEOUT"
std::string env_name(std::string_view prefix, std::string_view key);
// "DEADLOCK-TIMEOUT" -> "--deadlock-timeout"
std::string option_name(std::string_view key);

// Reads `value` into the member `key` sets; on a bad value leaves `settings`
// as it was and says why in `error` ("\"9\": out of range (0 to 5)").
bool parse_value(const Key& key, std::string_view value, Settings& settings, std::string& error);

// A key's value in `settings` as config-file text: "1m", "2", "\"\"".
std::string value_text(const Key& key, const Settings& settings);
// What the value looks like, for help texts: "TIME", "0..5", "PATH", "auto|on|off".
std::string value_syntax(const Key& key);

// One config line per key and check, with its default:
// "DEADLOCK-TIMEOUT 1m", ..., "CHECK GLOBAL:DEADLOCK:HARD ON".
std::vector<std::string> default_listing();

}  // namespace mpisentry::config
