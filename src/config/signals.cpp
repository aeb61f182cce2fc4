// Signal keys' values: the unset word ("auto", "off"), a real-time signal,
// SIGUSR1 or SIGUSR2.
#include <csignal>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "config/text.hpp"

namespace mpisentry::config {
namespace {

constexpr std::string_view kRtMin = "SIGRTMIN";

struct NamedSignal {
  std::string_view name;
  int number;
};
const NamedSignal kNamed[] = {{"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}};

std::string expected(std::string_view unset_word) {
  return fmt::format("expected {}, SIGUSR1, SIGUSR2, a real-time signal SIGRTMIN+N with N from 0 to {}, or its "
                     "number from {} to {}",
                     unset_word, SIGRTMAX - SIGRTMIN, SIGRTMIN, SIGRTMAX);
}

std::string unusable(std::string_view text, std::string_view unset_word) {
  return in_quotes(text) + ": not a signal the checker may use; " + expected(unset_word);
}

}  // namespace

bool parse_signal(std::string_view text, std::string_view unset_word, int& out, std::string& error) {
  if (equals_ignoring_case(text, unset_word)) {
    out = kUnsetSignal;
    return true;
  }
  for (const NamedSignal& named : kNamed) {
    if (equals_ignoring_case(text, named.name)) {
      out = named.number;
      return true;
    }
  }
  if (equals_ignoring_case(text, "SIGKILL") || equals_ignoring_case(text, "SIGSTOP") ||
      text == std::to_string(SIGKILL) || text == std::to_string(SIGSTOP)) {
    error = in_quotes(text) + ": this signal cannot be caught; " + expected(unset_word);
    return false;
  }
  int number = 0;
  const std::string upper = to_upper(text);
  if (upper.starts_with(kRtMin)) {
    std::string_view offset = std::string_view(upper).substr(kRtMin.size());
    if (!offset.empty() && (offset.front() != '+' || !read_number(offset.substr(1), number) || number < 0)) {
      error = in_quotes(text) + ": not a signal; " + expected(unset_word);
      return false;
    }
    // Checked before adding SIGRTMIN, which would overflow on SIGRTMIN+2147483647.
    if (number > SIGRTMAX - SIGRTMIN) {
      error = unusable(text, unset_word);
      return false;
    }
    number += SIGRTMIN;
  } else if (!read_number(text, number)) {
    error = in_quotes(text) + ": not a signal; " + expected(unset_word);
    return false;
  }
  if (number < SIGRTMIN || number > SIGRTMAX) {
    if (number == SIGUSR1 || number == SIGUSR2) {
      out = number;
      return true;
    }
    error = unusable(text, unset_word);
    return false;
  }
  out = number;
  return true;
}

std::string format_signal(int signal, std::string_view unset_word) {
  if (signal == kUnsetSignal) return std::string(unset_word);
  for (const NamedSignal& named : kNamed)
    if (signal == named.number) return std::string(named.name);
  return fmt::format("{}+{}", kRtMin, signal - SIGRTMIN);
}

}  // namespace mpisentry::config
