#include "sqlite_content_hash.hpp"

#include <sqlite3.h>

#include <iterator>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <fmt/format.h>

#include "canonical_row.hpp"
#include "fulfillsync/merchant/database_error.hpp"
#include "source_assembly.hpp"
#include "sqlite_change_time.hpp"
#include "sqlite_contract.hpp"
#include "sqlite_support.hpp"

namespace fulfillsync::merchant {
namespace {

// A value as the readers take it (sqlite_source_tables.cpp, read_field): its storage class kept.
Field field_of(sqlite3_value* value) {
  switch (sqlite3_value_type(value)) {
    case SQLITE_INTEGER: return Field::of(static_cast<std::int64_t>(sqlite3_value_int64(value)));
    case SQLITE_FLOAT: return Field{.type = Field::Type::real, .real = sqlite3_value_double(value)};
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      const bool text = sqlite3_value_type(value) == SQLITE_TEXT;
      const auto* bytes = static_cast<const char*>(sqlite3_value_blob(value));
      const auto size = static_cast<std::size_t>(sqlite3_value_bytes(value));
      return Field{.type = text ? Field::Type::text : Field::Type::blob,
                   .text = bytes == nullptr ? std::string() : std::string(bytes, size)};
    }
    default: return Field{};
  }
}

// The key as the readers take it (Column::getString): a number as SQLite's text of it, NULL as "".
std::string key_of(sqlite3_value* value) {
  sqlite3_value_bytes(value);  // converts a number to its text first, as getString does
  const auto* bytes = static_cast<const char*>(sqlite3_value_blob(value));
  const auto size = static_cast<std::size_t>(sqlite3_value_bytes(value));
  return bytes == nullptr ? std::string() : std::string(bytes, size);
}

// The SQL functions of each table: the aggregate over its lines and the hash of a row with them.
template <typename Row>
struct Functions : Source<Row> {
  static constexpr std::string_view hash =
      std::is_same_v<Row, OrderRow> ? "fulfillsync_order_hash" : "fulfillsync_return_hash";
  static constexpr std::string_view lines =
      std::is_same_v<Row, OrderRow> ? "fulfillsync_order_lines" : "fulfillsync_return_lines";
};

// The aggregate's state: a pointer in SQLite's aggregate context, to lines freed by the final call
// (which SQLite makes also when a statement is reset halfway).
using Lines = std::vector<canonical::Line>;

template <typename Row>
void line_step(sqlite3_context* context, int, sqlite3_value** arguments) {
  auto** lines = static_cast<Lines**>(sqlite3_aggregate_context(context, sizeof(Lines*)));
  if (lines == nullptr) {
    sqlite3_result_error_nomem(context);
    return;
  }
  try {
    if (*lines == nullptr) *lines = new Lines();
    canonical::Line line;
    const auto columns = Functions<Row>::line_columns();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      Field value = field_of(arguments[i]);
      canonical::append_column(line.text, columns[i], value);
      if (columns[i].name == "line_number") line.line_number = std::move(value);
    }
    (*lines)->push_back(std::move(line));
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(context);
  }
}

void lines_final(sqlite3_context* context) {
  auto** lines = static_cast<Lines**>(sqlite3_aggregate_context(context, 0));
  std::unique_ptr<Lines> owned(lines == nullptr ? nullptr : *lines);
  try {
    const std::string joined = owned ? canonical::join_lines(std::move(*owned)) : std::string();
    sqlite3_result_blob64(context, joined.data(), joined.size(), SQLITE_TRANSIENT);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(context);
  }
}

template <typename Row>
void hash(sqlite3_context* context, int, sqlite3_value** arguments) {
  try {
    std::string serialized;
    canonical::append(serialized, "reference_id", Field::of(key_of(arguments[0])));
    const auto columns = Functions<Row>::columns();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      canonical::append_column(serialized, columns[i], field_of(arguments[i + 1]));
    }
    sqlite3_value* lines = arguments[columns.size() + 1];
    if (const auto* bytes = static_cast<const char*>(sqlite3_value_blob(lines)); bytes != nullptr) {
      serialized.append(bytes, static_cast<std::size_t>(sqlite3_value_bytes(lines)));
    }
    const std::string hex = canonical::hex_sha256(serialized);
    sqlite3_result_text(context, hex.data(), static_cast<int>(hex.size()), SQLITE_TRANSIENT);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(context);
  }
}

void check(int status, std::string_view name) {
  if (status != SQLITE_OK) throw MerchantDatabaseError(fmt::format("registering {}: {}", name, sqlite3_errstr(status)));
}

template <typename Row>
void register_for(sqlite3* db) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY;
  const std::string lines(Functions<Row>::lines), hash_name(Functions<Row>::hash);
  check(sqlite3_create_function_v2(db, lines.c_str(), static_cast<int>(Functions<Row>::line_columns().size()), kFlags,
                                   nullptr, nullptr, line_step<Row>, lines_final, nullptr),
        lines);
  check(sqlite3_create_function_v2(db, hash_name.c_str(), static_cast<int>(Functions<Row>::columns().size() + 2), kFlags,
                                   nullptr, hash<Row>, nullptr, nullptr, nullptr),
        hash_name);
}

// The rows first (`page`: their columns, with change_time), then their lines, aggregated by parent
// for the keys of the page only (`parts`): one pass over the lines table per page even when it has no
// index on its parent (a view over a shop's own tables), index lookups when it has one.
template <typename Row>
std::string versions_sql(SQLite::Database& db, std::string_view rows) {
  std::string page = fmt::format("SELECT t.reference_id AS reference_id, {} AS change_time", kChangeTimeSql);
  std::string hash = fmt::format("{}(p.reference_id", Functions<Row>::hash);
  for (const auto& column : Functions<Row>::columns()) {
    fmt::format_to(std::back_inserter(page), ", t.{0} AS {0}", sql_name(column.name));
    fmt::format_to(std::back_inserter(hash), ", p.{}", sql_name(column.name));
  }
  std::string lines = fmt::format("{}(", Functions<Row>::lines);
  bool first = true;
  for (const auto& column : Functions<Row>::line_columns()) {
    fmt::format_to(std::back_inserter(lines), "{}{}", first ? "" : ", ",
                   select_column(db, Functions<Row>::lines_table, "l", column.name, column.optional));
    first = false;
  }
  const std::string parent = sql_name(Functions<Row>::parent);
  const std::string cancel = std::is_same_v<Row, OrderRow> ? fmt::format("p.{}", sql_name("cancel_requested")) : "NULL";
  return fmt::format(
      "WITH page AS ({0} FROM {1} AS t {2}), "
      "parts AS (SELECT l.{3} AS parent, {4}) AS lines FROM {5} AS l WHERE l.{3} IN (SELECT reference_id FROM page) "
      "GROUP BY l.{3}) "
      "SELECT p.reference_id, p.change_time, {6}, {7}, parts.lines) FROM page AS p LEFT JOIN parts ON parts.parent = "
      "p.reference_id ORDER BY p.reference_id",
      page, sql_name(Functions<Row>::table), rows, parent, lines, sql_name(Functions<Row>::lines_table), cancel, hash);
}

}  // namespace

void register_content_hash(SQLite::Database& db) {
  register_for<OrderRow>(db.getHandle());
  register_for<ReturnRow>(db.getHandle());
}

std::string row_versions_sql(SQLite::Database& db, SourceKind kind, std::string_view rows) {
  return kind == SourceKind::orders ? versions_sql<OrderRow>(db, rows) : versions_sql<ReturnRow>(db, rows);
}

}  // namespace fulfillsync::merchant
