#include "report/quote.hpp"

namespace mpisentry::report {
namespace {

// Length of the well-formed UTF-8 sequence that starts at text[at], or 0 when
// the bytes there are not one (stray continuation, overlong form, surrogate,
// past U+10FFFF, cut short).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) return 1;
  std::size_t length;
  char32_t code_point;
  char32_t smallest;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, smallest = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[at + i]);
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  if (code_point < smallest || code_point > 0x10FFFF || surrogate) return 0;
  return length;
}

// Copies each well-formed UTF-8 sequence of text unchanged, except single
// bytes that `escape` writes in its own form (returning true); bytes that are
// not UTF-8 go to `invalid`.
template <typename Escape, typename Invalid>
std::string quote(std::string_view text, Escape escape, Invalid invalid) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_sequence_length(text, at);
    if (length == 0) {
      invalid(out, static_cast<unsigned char>(text[at]));
      ++at;
      continue;
    }
    if (length > 1 || !escape(out, text[at])) out.append(text.substr(at, length));
    at += length;
  }
  return out;
}

}  // namespace

std::string dot_quote(std::string_view text) {
  const auto escape = [](std::string& out, char c) {
    switch (c) {
      case '"': out += "\\\""; return true;
      case '\\': out += "\\\\"; return true;
      case '\n': out += "\\n"; return true;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) return false;
        out += '?';
        return true;
    }
  };
  return '"' + quote(text, escape, [](std::string& out, unsigned char) { out += '?'; }) + '"';
}

std::string xml_escape(std::string_view text, bool attribute) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  const auto escape = [&](std::string& out, char c) {
    switch (c) {
      case '&': out += "&amp;"; return true;
      case '<': out += "&lt;"; return true;
      case '>': out += "&gt;"; return true;
      case '"': out += "&quot;"; return true;
      // In an attribute as references, which a parser keeps (it turns a
      // literal one there into a space); a parser turns every literal
      // carriage return into a newline.
      case '\n':
        if (!attribute) return false;
        out += "&#10;";
        return true;
      case '\t':
        if (!attribute) return false;
        out += "&#9;";
        return true;
      case '\r': out += "&#13;"; return true;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) return false;
        out += kReplacement;  // XML 1.0 has no form for the other control characters
        return true;
    }
  };
  return quote(text, escape, [&](std::string& out, unsigned char) { out += kReplacement; });
}

}  // namespace mpisentry::report
