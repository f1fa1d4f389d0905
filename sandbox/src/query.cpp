#include "fulfillsync/sandbox/query.hpp"

#include <charconv>
#include <strings.h>

namespace fulfillsync::sandbox {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int high = hex_value(text[i + 1]);
      const int low = hex_value(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && text[i] == '+' ? ' ' : text[i]);
  }
  return out;
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || c == ',' || c == ':') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

Query::Query(std::string_view raw) {
  std::size_t start = 0;
  while (start <= raw.size() && !raw.empty()) {
    std::size_t end = raw.find('&', start);
    if (end == std::string_view::npos) end = raw.size();
    const std::string_view pair = raw.substr(start, end - start);
    if (!pair.empty()) {
      const auto equals = pair.find('=');
      if (equals == std::string_view::npos) {
        items_.emplace_back(percent_decode(pair), std::string());
      } else {
        items_.emplace_back(percent_decode(pair.substr(0, equals)), percent_decode(pair.substr(equals + 1)));
      }
    }
    start = end + 1;
    if (end == raw.size()) break;
  }
}

std::optional<std::string_view> Query::get(std::string_view name) const {
  for (const auto& [key, value] : items_) {
    if (same_name(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

std::string Query::with(std::string_view name, std::string_view value) const {
  std::string out;
  bool replaced = false;
  for (const auto& [key, old] : items_) {
    if (!out.empty()) out.push_back('&');
    out += percent_encode(key);
    out.push_back('=');
    if (same_name(key, name)) {
      out += percent_encode(value);
      replaced = true;
    } else {
      out += percent_encode(old);
    }
  }
  if (!replaced) {
    if (!out.empty()) out.push_back('&');
    out += percent_encode(name);
    out.push_back('=');
    out += percent_encode(value);
  }
  return out;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || result.ec != std::errc{} || result.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> Query::integer(std::string_view name, std::int64_t min, std::int64_t max,
                                           Validation& validation) const {
  const auto text = get(name);
  if (!text) return std::nullopt;
  const auto value = parse_int(*text);
  if (!value) {
    validation.add(std::string(name), "The value '" + std::string(*text) + "' is not valid for " + std::string(name) + ".");
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    validation.add(std::string(name), "The field " + std::string(name) + " must be between " + std::to_string(min) +
                                          " and " + std::to_string(max) + ".");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> Query::boolean(std::string_view name, Validation& validation) const {
  const auto text = get(name);
  if (!text) return std::nullopt;
  if (same_name(*text, "true")) return true;
  if (same_name(*text, "false")) return false;
  validation.add(std::string(name), "The value '" + std::string(*text) + "' is not valid for " + std::string(name) + ".");
  return std::nullopt;
}

std::optional<timestamps::TimePoint> Query::date_time(std::string_view name, Validation& validation) const {
  const auto text = get(name);
  if (!text) return std::nullopt;
  auto when = timestamps::parse_iso8601(*text);
  if (!when) {
    validation.add(std::string(name), "The value '" + std::string(*text) + "' is not valid for " + std::string(name) + ".");
  }
  return when;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(start, end - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) parts.emplace_back(part);
    start = end + 1;
  }
  return parts;
}

std::vector<std::string> Query::list(std::string_view name) const {
  std::vector<std::string> all;
  for (const auto& [key, value] : items_) {
    if (!same_name(key, name)) continue;
    for (auto& part : split_list(value)) all.push_back(std::move(part));
  }
  return all;
}

std::optional<std::vector<std::int64_t>> Query::integer_list(std::string_view name, Validation& validation) const {
  if (!get(name)) return std::nullopt;
  std::vector<std::int64_t> values;
  for (const auto& part : list(name)) {
    const auto value = parse_int(part);
    if (!value) {
      validation.add(std::string(name), "The value '" + part + "' is not valid for " + std::string(name) + ".");
      return std::nullopt;
    }
    values.push_back(*value);
  }
  return values;
}

std::optional<std::vector<std::int64_t>> Query::id_list(std::string_view name) const {
  if (!get(name)) return std::nullopt;
  std::vector<std::int64_t> values;
  for (const auto& part : list(name)) {
    if (const auto value = parse_int(part)) values.push_back(*value);
  }
  return values;
}

}  // namespace fulfillsync::sandbox
