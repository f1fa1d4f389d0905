#include "canonical_row.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "fulfillsync/common/crypto.hpp"

namespace fulfillsync::merchant::canonical {
namespace {

// SQLite's order of storage classes: NULL, numbers, text, blobs.
int storage_class(Field::Type type) {
  switch (type) {
    case Field::Type::null: return 0;
    case Field::Type::integer:
    case Field::Type::real: return 1;
    case Field::Type::text: return 2;
    case Field::Type::blob: return 3;
  }
  return 0;
}

// Whether `a` sorts before `b` in SQLite's ORDER BY (BINARY collation). Integers and reals compare
// by value: a long double holds every int64 exactly.
bool sorts_before(const Field& a, const Field& b) {
  const int a_class = storage_class(a.type), b_class = storage_class(b.type);
  if (a_class != b_class) return a_class < b_class;
  switch (a_class) {
    case 1: {
      if (a.type == Field::Type::integer && b.type == Field::Type::integer) return a.integer < b.integer;
      const auto value = [](const Field& f) {
        return f.type == Field::Type::integer ? static_cast<long double>(f.integer) : static_cast<long double>(f.real);
      };
      return value(a) < value(b);
    }
    case 2:
    case 3: return a.text < b.text;  // char_traits<char> compares as unsigned char: memcmp's order
    default: return false;
  }
}

}  // namespace

void append(std::string& out, std::string_view name, const Field& value) {
  out += name;
  auto to = std::back_inserter(out);  // formatted in place: the sweep hashes every open row
  switch (value.type) {
    case Field::Type::null: out += "=n;"; return;
    case Field::Type::integer: fmt::format_to(to, "=i{};", value.integer); return;
    case Field::Type::real: fmt::format_to(to, "=r{};", value.real); return;
    case Field::Type::text: fmt::format_to(to, "=t{}:", value.text.size()); break;
    case Field::Type::blob: fmt::format_to(to, "=b{}:", value.text.size()); break;
  }
  out += value.text;
  out += ';';
}

std::string join_lines(std::vector<Line> lines) {
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    if (sorts_before(a.line_number, b.line_number)) return true;
    if (sorts_before(b.line_number, a.line_number)) return false;
    return a.text < b.text;
  });
  std::string joined;
  for (const Line& line : lines) joined += line.text;
  return joined;
}

std::string hex_sha256(std::string_view canonical) {
  const std::string digest = crypto::sha256(canonical);
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (const unsigned char byte : digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0x0F];
  }
  return hex;
}

}  // namespace fulfillsync::merchant::canonical
