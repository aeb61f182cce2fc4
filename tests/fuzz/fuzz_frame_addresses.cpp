// The text form of a rank's stack frames (parse_frame_addresses), which rank
// 0 reads from every rank: bad text throws std::invalid_argument saying what
// is wrong and at which byte, never anything else; what parses, serialized
// again, parses to the same frames and serializes to the same text.
#include "stacks/stacks.hpp"
#include "fuzz.hpp"

#include <stdexcept>

using namespace mpisentry;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  std::vector<stacks::FrameAddress> frames;
  try {
    frames = stacks::parse_frame_addresses(text);
  } catch (const std::invalid_argument& error) {
    const std::string_view message = error.what();
    fuzz::require(message.starts_with("bad frame addresses: ") && message.find(" at byte ") != std::string_view::npos,
                  "a rejection says what is wrong and where", message);
    return 0;
  }
  const std::string serialized = stacks::serialize(frames);
  std::vector<stacks::FrameAddress> again;
  try {
    again = stacks::parse_frame_addresses(serialized);
  } catch (const std::invalid_argument& error) {
    fuzz::require(false, "serialized frames parse", error.what());
  }
  fuzz::require(again == frames, "serialized frames parse to the same frames", serialized);
  fuzz::require(stacks::serialize(again) == serialized, "serializing is a fixed point", serialized);
  return 0;
}
