#include "fulfillsync/common/printable.hpp"


namespace fulfillsync::text {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `text` and its code point (Unicode's
// table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF); 0 when it is not one.
std::size_t utf8_sequence(std::string_view text, char32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char next = byte(i);
    if (next < (i == 1 ? low : 0x80) || next > (i == 1 ? high : 0xBF)) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  return length;
}

bool is_control(char32_t code_point) { return code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F); }

void append_escaped(std::string& out, std::string_view bytes) {
  constexpr char kHex[] = "0123456789abcdef";
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0x0F];
  }
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    char32_t code_point = 0;
    const std::size_t length = utf8_sequence(text, code_point);
    if (length == 0) {
      append_escaped(out, text.substr(0, 1));
      text.remove_prefix(1);
      continue;
    }
    if (is_control(code_point)) {
      append_escaped(out, text.substr(0, length));
    } else {
      out.append(text.substr(0, length));
    }
    text.remove_prefix(length);
  }
  return out;
}

}  // namespace fulfillsync::text
