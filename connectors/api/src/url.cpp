#include "fulfillsync/api/url.hpp"

#include <charconv>

namespace fulfillsync::api {

std::string url_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') || (byte >= '0' && byte <= '9') || byte == '-' ||
        byte == '.' || byte == '_' || byte == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

std::string url_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned value = 0;
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() &&
               std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr == text.data() + i + 3) {
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

Query parse_query_string(std::string_view text) {
  Query query;
  while (!text.empty()) {
    const std::size_t amp = text.find('&');
    const std::string_view pair = text.substr(0, amp);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      query.emplace_back(url_decode(pair.substr(0, eq)),
                         eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1)));
    }
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp + 1);
  }
  return query;
}

std::string encode_query(const Query& query) {
  std::string out;
  for (const auto& [name, value] : query) {
    if (!out.empty()) out += '&';
    out += url_encode(name);
    out += '=';
    out += url_encode(value);
  }
  return out;
}

Query query_of_link(std::string_view link) {
  const std::size_t mark = link.find('?');
  if (mark == std::string_view::npos) return {};
  std::string_view rest = link.substr(mark + 1);
  return parse_query_string(rest.substr(0, rest.find('#')));
}

}  // namespace fulfillsync::api
