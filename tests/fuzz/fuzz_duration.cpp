// The time syntax (parse_duration: "1m+30s", "500l", "2.5"): a rejected text
// gets a message that quotes the text or the term at fault; an accepted one
// is written by format_duration as a text that reads back to the same time.
#include "config/settings.hpp"
#include "config/text.hpp"
#include "fuzz.hpp"

using namespace mpisentry;
using config::Duration;

namespace {

// The message quotes a piece of the input: '"', the piece, '": '.
bool quotes_input(std::string_view message, std::string_view input) {
  if (!message.starts_with('"')) return false;
  for (auto close = message.find("\": ", 1); close != std::string_view::npos; close = message.find("\": ", close + 1))
    if (input.find(message.substr(1, close - 1)) != std::string_view::npos) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  Duration parsed{-1};
  std::string error;
  if (!config::parse_duration(text, parsed, error)) {
    fuzz::require(parsed == Duration{-1}, "a rejected time leaves the value as it was", text);
    const bool blank = config::trim(text).empty();
    fuzz::require(blank ? !error.empty() : quotes_input(error, text), "a rejected time gets a message quoting it",
                  error);
    return 0;
  }
  fuzz::require(parsed >= Duration::zero(), "an accepted time is not negative", text);
  const std::string formatted = config::format_duration(parsed);
  Duration again{-1};
  std::string again_error;
  fuzz::require(config::parse_duration(formatted, again, again_error) && again == parsed,
                "format_duration's text reads back to the same time", formatted + " " + again_error);
  return 0;
}
