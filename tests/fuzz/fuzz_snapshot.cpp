// The codec of what each rank sends rank 0 (deserialize, decode_gathered):
// bad bytes throw std::invalid_argument naming what was read and what is
// wrong with it,
// never anything else; what decodes re-encodes to bytes that decode to the
// same value and encode again to the same bytes (the encoder's form is a
// fixed point; the decoder also takes "007" for 7).
//
// Input: one byte choosing the reader (a snapshot, a gathered part without
// or with stacks), then the bytes to read.
#include "model/snapshot.hpp"
#include "fuzz.hpp"

#include <stdexcept>

using namespace mpisentry;

namespace {

enum class Reader { Snapshot, Gathered, GatheredWithStacks };

std::string read_and_encode(Reader reader, std::string_view bytes) {
  if (reader == Reader::Snapshot) return serialize(deserialize(bytes));
  const bool with_stacks = reader == Reader::GatheredWithStacks;
  const GatheredRank gathered = decode_gathered(bytes, with_stacks);
  fuzz::require(with_stacks || gathered.frames.empty(), "a part without stacks has no frames");
  return encode_gathered(gathered.snapshot, with_stacks, gathered.frames);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto reader = static_cast<Reader>(data[0] % 3);
  const std::string_view bytes = fuzz::text_of(data + 1, size - 1);
  std::string encoded;
  try {
    encoded = read_and_encode(reader, bytes);
  } catch (const std::invalid_argument& error) {
    const std::string_view message = error.what();
    const bool names_what = message.starts_with("rank snapshot ") || message.starts_with("a rank's gathered ");
    fuzz::require(names_what && message.size() > std::string_view("a rank's gathered stack ").size(),
                  "a rejection names what was read and says what is wrong with it", message);
    return 0;
  }
  std::string again;
  try {
    again = read_and_encode(reader, encoded);
  } catch (const std::invalid_argument& error) {
    fuzz::require(false, "the encoder's bytes decode", error.what());
  }
  fuzz::require(again == encoded, "decoding and encoding the encoder's bytes gives them back", encoded);
  return 0;
}
