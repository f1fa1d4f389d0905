// libFuzzer target for the merchant row mapping: source rows to POST /order and POST /return bodies,
// the cancel check and the content hash. Rejections with reasons are expected; a crash, a sanitizer
// report, or a broken promise (an accepted row that does not encode to JSON, a rejection without a
// reason, a cancel flag the two functions read apart, a hash that depends on updated_at) is a bug.
//
// Inputs are readable rows, one column a line, as the seed corpus shows:
//
//   [order]                      starts an order row ([return]: a return row)
//   reference_id=DEMO-1001       the key columns take the rest of the line as text
//   shipping_method=Standard     other columns: text...
//   location_id:int=8            ...or typed as SQLite stores them: :int, :real, :blob, :null
//   [line]                       starts a line of the last row
//   quantity:int=2
//
// Unknown columns and other lines are ignored; absent columns are NULL.
#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/api/models/encode.hpp"
#include "fulfillsync/daemon/mapping/request_mapping.hpp"

namespace {

using namespace fulfillsync;
using merchant::Field;

// The value of "name[:type]=value"; an integer or real that does not parse stays text.
Field parse_field(std::string_view type, std::string_view value) {
  if (type == "null") return Field{};
  if (type == "blob") return Field{.type = Field::Type::blob, .text = std::string(value)};
  const char* end = value.data() + value.size();
  if (type == "int") {
    std::int64_t number = 0;
    if (auto [ptr, error] = std::from_chars(value.data(), end, number); error == std::errc() && ptr == end) {
      return Field::of(number);
    }
  } else if (type == "real") {
    double number = 0;
    if (auto [ptr, error] = std::from_chars(value.data(), end, number); error == std::errc() && ptr == end) {
      return Field{.type = Field::Type::real, .real = number};
    }
  }
  return Field::of(std::string(value));
}

// Sets the column of that name, if the table has one.
template <typename Row>
void set_column(Row& row, std::span<const merchant::Column<Row>> columns, std::string_view name, const Field& value) {
  for (const auto& column : columns) {
    if (column.name == name) row.*column.member = value;
  }
}

struct Rows {
  std::vector<merchant::OrderRow> orders;
  std::vector<merchant::ReturnRow> returns;
};

Rows parse_rows(std::string_view input) {
  Rows rows;
  enum class Current { none, order, return_row } current = Current::none;
  bool in_line = false;
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    const std::string_view text = input.substr(0, newline);
    input.remove_prefix(newline == std::string_view::npos ? input.size() : newline + 1);
    if (text == "[order]") {
      rows.orders.emplace_back();
      current = Current::order;
      in_line = false;
      continue;
    }
    if (text == "[return]") {
      rows.returns.emplace_back();
      current = Current::return_row;
      in_line = false;
      continue;
    }
    if (text == "[line]") {
      if (current == Current::order) rows.orders.back().lines.emplace_back();
      if (current == Current::return_row) rows.returns.back().lines.emplace_back();
      in_line = current != Current::none;
      continue;
    }
    const std::size_t equals = text.find('=');
    if (current == Current::none || equals == std::string_view::npos) continue;
    std::string_view name = text.substr(0, equals);
    const std::string_view value = text.substr(equals + 1);
    std::string_view type;
    if (const std::size_t colon = name.find(':'); colon != std::string_view::npos) {
      type = name.substr(colon + 1);
      name = name.substr(0, colon);
    }
    if (current == Current::order) {
      merchant::OrderRow& row = rows.orders.back();
      if (in_line) set_column(row.lines.back(), merchant::order_line_columns(), name, parse_field(type, value));
      else if (name == "reference_id") row.reference_id = value;
      else if (name == "updated_at") row.updated_at = value;
      else set_column(row, merchant::order_columns(), name, parse_field(type, value));
    } else {
      merchant::ReturnRow& row = rows.returns.back();
      if (in_line) set_column(row.lines.back(), merchant::return_line_columns(), name, parse_field(type, value));
      else if (name == "reference_id") row.reference_id = value;
      else if (name == "updated_at") row.updated_at = value;
      else set_column(row, merchant::return_columns(), name, parse_field(type, value));
    }
  }
  return rows;
}

// An accepted row is sent whatever the configured version: its body must encode, as valid JSON.
template <typename Request>
void check_encodes_everywhere(const Request& request) {
  simdjson::dom::parser parser;
  for (const auto version : {api::ApiVersion::v2025_07, api::ApiVersion::v2026_01, api::ApiVersion::v2026_07}) {
    const api::Encoded body = api::encode(request, version);
    if (!body) std::abort();
    if (parser.parse(*body).error() != simdjson::SUCCESS) std::abort();
  }
}

template <typename Mapped>
void check_mapped(const Mapped& mapped) {
  if (mapped.ok()) check_encodes_everywhere(*mapped.request);
  else if (mapped.reason().empty()) std::abort();  // a rejected row must say why
}

// cancel_requested() and map_order() must read the flag alike (request_mapping.hpp): a value
// map_order accepts is NULL, 0 or 1, and 1 is a cancel.
void check_cancel_flag(const merchant::OrderRow& row, const std::vector<std::string>& problems) {
  for (const std::string& problem : problems) {
    if (problem.starts_with("fulfillsync_orders: cancel_requested ")) return;  // refused: no cancel either way
  }
  const Field& flag = row.cancel_requested;
  std::optional<double> value;
  if (flag.type == Field::Type::integer) value = static_cast<double>(flag.integer);
  if (flag.type == Field::Type::real) value = flag.real;
  if (flag.type == Field::Type::text && !flag.text.empty()) value = std::strtod(flag.text.c_str(), nullptr);
  if (value && *value != 0 && *value != 1) std::abort();
  if (daemon::cancel_requested(row) != (value == 1.0)) std::abort();
}

// The ledger recognises a row read again by its hash, which must ignore updated_at.
template <typename Row>
void check_hash(Row row) {
  const std::string hash = merchant::content_hash(row);
  row.updated_at += "+changed";
  if (merchant::content_hash(row) != hash) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Rows rows = parse_rows(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const merchant::OrderRow& row : rows.orders) {
    const auto mapped = daemon::map_order(row);
    check_mapped(mapped);
    check_cancel_flag(row, mapped.problems);
    check_hash(row);
  }
  for (const merchant::ReturnRow& row : rows.returns) {
    check_mapped(daemon::map_return(row));
    check_hash(row);
  }
  return 0;
}
