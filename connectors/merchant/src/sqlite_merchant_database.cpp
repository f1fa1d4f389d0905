#include "fulfillsync/merchant/sqlite_merchant_database.hpp"

#include <array>
#include <charconv>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/schema/migrations.hpp"
#include "sqlite_contract.hpp"

namespace fulfillsync::merchant {
namespace {

// Identifiers here are the contract's names or the validated prefix; quoting them anyway keeps a
// name that happens to be a keyword working.
std::string sql_name(std::string_view identifier) {
  std::string out = "\"";
  for (char c : identifier) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A column qualified by its table's alias: SQLite reads an unqualified "name" that matches no column
// as a string literal, which would pass a missing column off as one full of its own name.
std::string column_of(std::string_view alias, std::string_view column) {
  return std::string(alias) + "." + sql_name(column);
}

bool is_plain_identifier(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// Runs `work`, turning SQLite's exceptions into a MerchantDatabaseError that names the database
// and what was being done.
template <typename Work>
auto guarded(const std::filesystem::path& path, std::string_view task, Work work) -> decltype(work()) {
  try {
    return work();
  } catch (const SQLite::Exception& e) {
    throw MerchantDatabaseError(fmt::format("merchant database {}: {}: {}", path.string(), task, e.what()));
  }
}

// Runs `work` in one IMMEDIATE transaction, guarded: the write lock is taken up front (waiting up to
// the busy timeout) instead of failing halfway when the merchant's application holds it.
template <typename Work>
auto in_write_transaction(SQLite::Database& db, const std::filesystem::path& path, std::string_view task, Work work)
    -> decltype(work()) {
  return guarded(path, task, [&] {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    if constexpr (std::is_void_v<decltype(work())>) {
      work();
      transaction.commit();
    } else {
      auto result = work();
      transaction.commit();
      return result;
    }
  });
}

Field read_field(const SQLite::Column& column) {
  const int type = column.getType();
  if (type == SQLite::INTEGER) return Field::of(static_cast<std::int64_t>(column.getInt64()));
  if (type == SQLite::FLOAT) return Field{.type = Field::Type::real, .real = column.getDouble()};
  if (type == SQLite::TEXT) return Field::of(column.getString());
  if (type == SQLite::BLOB) {
    return Field{.type = Field::Type::blob,
                 .text = std::string(static_cast<const char*>(column.getBlob()),
                                     static_cast<std::size_t>(column.getBytes()))};
  }
  return Field{};
}

// What distinguishes the two source tables with lines.
template <typename Row>
struct Source;
template <>
struct Source<OrderRow> {
  using Line = OrderLineRow;
  static constexpr std::string_view table = kOrdersTable, lines_table = kOrderLinesTable;
  static constexpr std::string_view parent = "order_reference_id";
  static auto columns() { return order_columns(); }
  static auto line_columns() { return order_line_columns(); }
};
template <>
struct Source<ReturnRow> {
  using Line = ReturnLineRow;
  static constexpr std::string_view table = kReturnsTable, lines_table = kReturnLinesTable;
  static constexpr std::string_view parent = "return_reference_id";
  static auto columns() { return return_columns(); }
  static auto line_columns() { return return_line_columns(); }
};

// updated_at as an instant in the contract's form (source_rows.hpp, change_time): strftime reads ISO
// 8601 with Z or an offset (converted to UTC), without one (as UTC), and `YYYY-MM-DD HH:MM:SS`.
// Anything else sorts after every time, marked, so it is reported rather than read in a wrong place.
// Read positions compare this, never the stored text.
constexpr std::string_view kChangeTimeSql =
    "coalesce(CASE WHEN typeof(t.updated_at) = 'text' THEN strftime('%Y-%m-%dT%H:%M:%fZ', t.updated_at) END, "
    "'~' || coalesce(t.updated_at, 'NULL'))";

template <typename Row>
std::string select_rows_sql(std::string_view where) {
  std::string sql = "SELECT t.reference_id, t.updated_at, " + std::string(kChangeTimeSql);
  for (const auto& column : Source<Row>::columns()) sql += ", " + column_of("t", column.name);
  return sql + " FROM " + sql_name(Source<Row>::table) + " AS t WHERE " + std::string(where);
}

template <typename Row>
std::string select_lines_sql(std::size_t keys) {
  const std::string parent = column_of("l", Source<Row>::parent);
  std::string sql = "SELECT " + parent;
  for (const auto& column : Source<Row>::line_columns()) sql += ", " + column_of("l", column.name);
  sql += " FROM " + sql_name(Source<Row>::lines_table) + " AS l WHERE " + parent + " IN (";
  for (std::size_t i = 0; i < keys; ++i) sql += i == 0 ? "?" : ", ?";
  return sql + ") ORDER BY " + parent + ", l.line_number";
}

// Fills the rows of `query` and their lines; the caller holds the read transaction.
template <typename Row>
std::vector<Row> collect(SQLite::Database& db, SQLite::Statement& query) {
  std::vector<Row> rows;
  const auto columns = Source<Row>::columns();
  while (query.executeStep()) {
    Row row;
    row.reference_id = query.getColumn(0).getString();
    row.updated_at = query.getColumn(1).getString();
    row.change_time = query.getColumn(2).getString();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      row.*columns[i].member = read_field(query.getColumn(static_cast<int>(i + 3)));
    }
    rows.push_back(std::move(row));
  }
  // Lines of the batch, a few hundred keys per statement (well below SQLite's parameter limit).
  constexpr std::size_t kKeysPerQuery = 500;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) index.emplace(rows[i].reference_id, i);
  const auto line_columns = Source<Row>::line_columns();
  for (std::size_t first = 0; first < rows.size(); first += kKeysPerQuery) {
    const std::size_t count = std::min(kKeysPerQuery, rows.size() - first);
    SQLite::Statement lines(db, select_lines_sql<Row>(count));
    for (std::size_t i = 0; i < count; ++i) lines.bind(static_cast<int>(i + 1), rows[first + i].reference_id);
    while (lines.executeStep()) {
      auto found = index.find(lines.getColumn(0).getString());
      if (found == index.end()) continue;
      typename Source<Row>::Line line;
      for (std::size_t i = 0; i < line_columns.size(); ++i) {
        line.*line_columns[i].member = read_field(lines.getColumn(static_cast<int>(i + 1)));
      }
      rows[found->second].lines.push_back(std::move(line));
    }
  }
  return rows;
}

void bind_optional(SQLite::Statement& statement, int index, const std::optional<std::string>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);
  }
}
void bind_optional(SQLite::Statement& statement, int index, const std::optional<std::int64_t>& value) {
  if (value) {
    statement.bind(index, static_cast<int64_t>(*value));
  } else {
    statement.bind(index);
  }
}
std::optional<std::string> text_of(const std::optional<timestamps::TimePoint>& when) {
  if (!when) return std::nullopt;
  return timestamps::format_iso8601_z(*when);
}

std::optional<std::string> optional_text(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getString();
}
std::optional<timestamps::TimePoint> optional_time(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return timestamps::parse_iso8601(column.getString());
}

void bind_value(SQLite::Statement& statement, int index, const std::string& value) { statement.bind(index, value); }
void bind_value(SQLite::Statement& statement, int index, std::int64_t value) {
  statement.bind(index, static_cast<int64_t>(value));
}
void bind_value(SQLite::Statement& statement, int index, const std::optional<std::string>& value) {
  bind_optional(statement, index, value);
}
void bind_value(SQLite::Statement& statement, int index, const std::optional<std::int64_t>& value) {
  bind_optional(statement, index, value);
}

// Runs a statement prepared once per call again for the next row, with `values` bound to ?1, ?2, ...
// in order; returns how many rows it changed.
template <typename... Values>
int run(SQLite::Statement& statement, const Values&... values) {
  statement.reset();
  int index = 0;
  (bind_value(statement, ++index, values), ...);
  return statement.exec();
}

// "INSERT INTO table (a, b) VALUES (?1, ?2)": `run` binds the values in the columns' order.
std::string insert_sql(const std::string& table, std::span<const std::string_view> columns) {
  std::string names, values;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    names += (i == 0 ? "" : ", ") + sql_name(columns[i]);
    values += fmt::format("{}?{}", i == 0 ? "" : ", ", i + 1);
  }
  return "INSERT INTO " + table + " (" + names + ") VALUES (" + values + ")";
}

// "a = excluded.a, b = excluded.b": an upsert's update of these columns to the values inserted.
std::string set_from_excluded(std::span<const std::string_view> columns) {
  std::string out;
  for (std::string_view column : columns) {
    out += (out.empty() ? "" : ", ") + sql_name(column) + " = excluded." + sql_name(column);
  }
  return out;
}

std::string json_array(const std::vector<std::string>& texts) {
  json::JsonWriter writer;
  writer.begin_array();
  for (const std::string& text : texts) writer.value(text);
  return writer.end_array().take();
}

std::string now_text() { return timestamps::format_iso8601_z(timestamps::Clock::now()); }

constexpr std::string_view kResultColumns =
    "reference_id, state, remote_id, remote_status, last_error, note, attempts, content_hash, first_seen_at, "
    "updated_at, remote_created_at";
constexpr std::string_view kOrderOnlyResultColumns = ", cancel_requested_at, cancelled_at";

SyncResult read_result_row(SQLite::Statement& query, SourceKind kind) {
  SyncResult result;
  result.reference_id = query.getColumn(0).getString();
  result.state = query.getColumn(1).getString();
  if (!query.getColumn(2).isNull()) result.remote_id = query.getColumn(2).getInt64();
  result.remote_status = optional_text(query.getColumn(3));
  result.last_error = optional_text(query.getColumn(4));
  result.note = optional_text(query.getColumn(5));
  result.attempts = query.getColumn(6).getInt64();
  result.content_hash = optional_text(query.getColumn(7));
  result.first_seen_at = optional_time(query.getColumn(8));
  result.updated_at = optional_time(query.getColumn(9)).value_or(timestamps::TimePoint{});
  result.remote_created_at = optional_time(query.getColumn(10));
  if (kind == SourceKind::orders) {
    result.cancel_requested_at = optional_time(query.getColumn(11));
    result.cancelled_at = optional_time(query.getColumn(12));
  }
  return result;
}

}  // namespace

SqliteMerchantDatabase::SqliteMerchantDatabase(const config::MerchantConfig& config, Access access)
    : path_(config.sqlite.path), prefix_(config.result_table_prefix) {
  if (!is_plain_identifier(prefix_)) {
    throw MerchantDatabaseError(fmt::format("result_table_prefix '{}' is not a plain SQL identifier", prefix_));
  }
  if (!std::filesystem::exists(path_)) {
    throw MerchantDatabaseError(fmt::format("merchant database {} does not exist", path_.string()));
  }
  try {
    if (access == Access::read_only) {
      side_files_.emplace(path_);
      db_ = sqlite::open_read_only(path_);
    } else {
      db_ = std::make_unique<SQLite::Database>(path_.string(), SQLite::OPEN_READWRITE);
    }
    // The merchant's application writes to the same file: wait for its locks rather than fail.
    db_->setBusyTimeout(static_cast<int>(config.sqlite.busy_timeout.count()));
    ping();
    if (access == Access::read_write) prepare_result_tables(config.manage_result_tables);
  } catch (const SQLite::Exception& e) {
    throw MerchantDatabaseError(fmt::format("merchant database {}: {}", path_.string(), e.what()));
  } catch (const sqlite::MigrationError& e) {
    throw MerchantDatabaseError(e.what());
  }
}

SqliteMerchantDatabase::~SqliteMerchantDatabase() = default;

std::string SqliteMerchantDatabase::describe() const { return fmt::format("sqlite {}", path_.string()); }

void SqliteMerchantDatabase::ping() {
  guarded(path_, "ping", [&] {
    // Reading the schema fails on a file that is not a database.
    SQLite::Statement probe(*db_, "SELECT count(*) FROM sqlite_master");
    probe.executeStep();
  });
}

void SqliteMerchantDatabase::prepare_result_tables(bool manage) {
  const ResultMigrations migrations(prefix_);
  if (!manage) {
    const int version = sqlite::schema_version(*db_, migrations.version_table());
    if (version != static_cast<int>(migrations.steps().size())) {
      throw MerchantDatabaseError(fmt::format(
          "merchant database {}: the result tables (prefix {}) are at schema version {}, this fulfillsync writes "
          "version {}; apply schema/merchant/results/*.sql with the prefix, or set "
          "merchant.manage_result_tables: true",
          path_.string(), prefix_, version, migrations.steps().size()));
    }
    return;
  }
  sqlite::migrate(*db_, migrations.steps(), migrations.version_table(),
                  fmt::format("the result tables in {}", path_.string()));
}

int SqliteMerchantDatabase::result_schema_version() {
  return guarded(path_, "reading the result tables' version",
                 [&] { return sqlite::schema_version(*db_, prefix_ + "schema_migrations"); });
}

std::string SqliteMerchantDatabase::result_table(SourceKind kind) const {
  return table(kind == SourceKind::orders ? "order_sync" : "return_sync");
}

std::string SqliteMerchantDatabase::table(std::string_view name) const { return sql_name(prefix_ + std::string(name)); }

std::vector<std::string> SqliteMerchantDatabase::check_source_tables() { return source_contract_problems(*db_); }

std::uint64_t SqliteMerchantDatabase::change_counter() {
  return guarded(path_, "data_version", [&] {
    SQLite::Statement query(*db_, "PRAGMA data_version");
    query.executeStep();
    return static_cast<std::uint64_t>(query.getColumn(0).getInt64());
  });
}

namespace {

template <typename Row>
std::vector<Row> read_range(SQLite::Database& db, const ReadRange& range) {
  const std::string time(kChangeTimeSql);
  std::string where = "(" + time + ", t.reference_id) > (?1, ?2)";
  if (range.through) where += " AND (" + time + ", t.reference_id) <= (?3, ?4)";
  SQLite::Statement query(db, select_rows_sql<Row>(where) + " ORDER BY 3, t.reference_id LIMIT ?5");
  query.bind(1, range.after.updated_at);
  query.bind(2, range.after.reference_id);
  if (range.through) {
    query.bind(3, range.through->updated_at);
    query.bind(4, range.through->reference_id);
  }
  query.bind(5, static_cast<int64_t>(range.limit));
  return collect<Row>(db, query);
}

template <typename Row>
std::vector<Row> read_keys(SQLite::Database& db, std::span<const std::string> keys) {
  std::vector<Row> rows;
  constexpr std::size_t kKeysPerQuery = 500;
  for (std::size_t first = 0; first < keys.size(); first += kKeysPerQuery) {
    const std::size_t count = std::min(kKeysPerQuery, keys.size() - first);
    std::string where = "t.reference_id IN (";
    for (std::size_t i = 0; i < count; ++i) where += i == 0 ? "?" : ", ?";
    SQLite::Statement query(db, select_rows_sql<Row>(where + ") ORDER BY t.updated_at, t.reference_id"));
    for (std::size_t i = 0; i < count; ++i) query.bind(static_cast<int>(i + 1), keys[first + i]);
    auto batch = collect<Row>(db, query);
    std::move(batch.begin(), batch.end(), std::back_inserter(rows));
  }
  return rows;
}

// One read transaction, so that rows and their lines are one snapshot; committed before returning.
template <typename Row, typename Read>
std::vector<Row> read_snapshot(SQLite::Database& db, const std::filesystem::path& path, Read read) {
  std::vector<Row> rows = guarded(path, fmt::format("reading {}", Source<Row>::table), [&] {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::DEFERRED);
    std::vector<Row> snapshot = read();
    transaction.commit();
    return snapshot;
  });
  for (Row& row : rows) row.content_hash = content_hash(row);
  return rows;
}

}  // namespace

std::vector<OrderRow> SqliteMerchantDatabase::read_orders(const ReadRange& range) {
  return read_snapshot<OrderRow>(*db_, path_, [&] { return read_range<OrderRow>(*db_, range); });
}
std::vector<ReturnRow> SqliteMerchantDatabase::read_returns(const ReadRange& range) {
  return read_snapshot<ReturnRow>(*db_, path_, [&] { return read_range<ReturnRow>(*db_, range); });
}
std::vector<OrderRow> SqliteMerchantDatabase::read_orders(std::span<const std::string> reference_ids) {
  return read_snapshot<OrderRow>(*db_, path_, [&] { return read_keys<OrderRow>(*db_, reference_ids); });
}
std::vector<ReturnRow> SqliteMerchantDatabase::read_returns(std::span<const std::string> reference_ids) {
  return read_snapshot<ReturnRow>(*db_, path_, [&] { return read_keys<ReturnRow>(*db_, reference_ids); });
}

namespace {

// Rows by key after `after_key` whose result row, if any, is not final.
template <typename Row>
std::vector<Row> read_open(SQLite::Database& db, const std::string& result_table, std::string_view after_key,
                           std::size_t limit) {
  const std::string final_state = std::is_same_v<Row, OrderRow>
                                      ? "r.state IN ('cancelled', 'cancel_rejected') OR "
                                        "r.remote_status IN ('Fulfilled', 'Cancelled')"
                                      : "r.remote_status IN ('Completed', 'Cancelled')";
  SQLite::Statement query(db, select_rows_sql<Row>("t.reference_id > ?1 AND NOT EXISTS (SELECT 1 FROM " +
                                                   result_table + " AS r WHERE r.reference_id = t.reference_id AND (" +
                                                   final_state + "))") +
                                  " ORDER BY t.reference_id LIMIT ?2");
  query.bind(1, std::string(after_key));
  query.bind(2, static_cast<int64_t>(limit));
  return collect<Row>(db, query);
}

}  // namespace

std::vector<OrderRow> SqliteMerchantDatabase::read_open_orders(std::string_view after_key, std::size_t limit) {
  return read_snapshot<OrderRow>(
      *db_, path_, [&] { return read_open<OrderRow>(*db_, result_table(SourceKind::orders), after_key, limit); });
}
std::vector<ReturnRow> SqliteMerchantDatabase::read_open_returns(std::string_view after_key, std::size_t limit) {
  return read_snapshot<ReturnRow>(
      *db_, path_, [&] { return read_open<ReturnRow>(*db_, result_table(SourceKind::returns), after_key, limit); });
}

std::int64_t SqliteMerchantDatabase::count_without_result(SourceKind kind, std::string_view since) {
  const std::string_view table = kind == SourceKind::orders ? kOrdersTable : kReturnsTable;
  return guarded(path_, fmt::format("counting {}", table), [&] {
    SQLite::Statement query(*db_, "SELECT count(*) FROM " + sql_name(table) + " AS t WHERE " +
                                      std::string(kChangeTimeSql) + " >= ?1 AND NOT EXISTS (SELECT 1 FROM " +
                                      result_table(kind) + " AS r WHERE r.reference_id = t.reference_id)");
    query.bind(1, std::string(since));
    query.executeStep();
    return query.getColumn(0).getInt64();
  });
}

std::int64_t SqliteMerchantDatabase::count_changes_after(SourceKind kind, const ChangeCursor& after) {
  const std::string_view table = kind == SourceKind::orders ? kOrdersTable : kReturnsTable;
  return guarded(path_, fmt::format("counting {}", table), [&] {
    SQLite::Statement query(*db_, "SELECT count(*) FROM " + sql_name(table) + " AS t WHERE (" +
                                      std::string(kChangeTimeSql) + ", t.reference_id) > (?1, ?2)");
    query.bind(1, after.updated_at);
    query.bind(2, after.reference_id);
    query.executeStep();
    return query.getColumn(0).getInt64();
  });
}

namespace {

constexpr std::string_view kChangeLogTable = "fulfillsync_changes";
constexpr std::string_view kChangeLogForgottenTable = "fulfillsync_changes_forgotten";

std::string_view source_table(SourceKind kind) { return kind == SourceKind::orders ? kOrdersTable : kReturnsTable; }

// A position in the change log is its seq as decimal text; "" is before the first.
std::int64_t parse_sequence(std::string_view position) {
  if (position.empty()) return 0;
  std::int64_t seq = 0;
  const auto [end, error] = std::from_chars(position.data(), position.data() + position.size(), seq);
  if (error != std::errc() || end != position.data() + position.size() || seq < 0) {
    throw MerchantDatabaseError(fmt::format("'{}' is not a position in {}", position, kChangeLogTable));
  }
  return seq;
}

bool change_log_exists(SQLite::Database& db) {
  SQLite::Statement query(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  query.bind(1, std::string(kChangeLogTable));
  query.executeStep();
  return query.getColumn(0).getInt64() > 0;
}

}  // namespace

bool SqliteMerchantDatabase::has_change_log() {
  return guarded(path_, "looking for the change log", [&] { return change_log_exists(*db_); });
}

std::string SqliteMerchantDatabase::change_log_end(SourceKind) {
  return guarded(path_, fmt::format("reading {}", kChangeLogTable), [&] {
    // sqlite_sequence keeps the highest seq ever given, even once every entry has been deleted.
    SQLite::Statement query(*db_, "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?1), 0)");
    query.bind(1, std::string(kChangeLogTable));
    query.executeStep();
    return std::to_string(query.getColumn(0).getInt64());
  });
}

ChangedKeys SqliteMerchantDatabase::changes_after(SourceKind kind, std::string_view after, std::size_t limit) {
  const std::int64_t from = parse_sequence(after);
  return guarded(path_, fmt::format("reading {}", kChangeLogTable), [&] {
    SQLite::Statement query(*db_, "SELECT seq, reference_id FROM " + sql_name(kChangeLogTable) +
                                      " WHERE source_table = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3");
    query.bind(1, std::string(source_table(kind)));
    query.bind(2, static_cast<int64_t>(from));
    query.bind(3, static_cast<int64_t>(limit));
    ChangedKeys changes;
    std::int64_t through = from;
    std::set<std::string> seen;
    while (query.executeStep()) {
      through = query.getColumn(0).getInt64();
      ++changes.entries;
      std::string key = query.getColumn(1).getString();
      if (seen.insert(key).second) changes.keys.push_back(std::move(key));
    }
    changes.through = std::to_string(through);
    changes.more = static_cast<std::size_t>(changes.entries) == limit;
    return changes;
  });
}

std::int64_t SqliteMerchantDatabase::count_rows_changed_after(SourceKind kind, std::string_view after) {
  const std::int64_t from = parse_sequence(after);
  return guarded(path_, fmt::format("counting {}", kChangeLogTable), [&] {
    SQLite::Statement query(*db_, "SELECT count(DISTINCT reference_id) FROM " + sql_name(kChangeLogTable) +
                                      " WHERE source_table = ?1 AND seq > ?2");
    query.bind(1, std::string(source_table(kind)));
    query.bind(2, static_cast<int64_t>(from));
    query.executeStep();
    return query.getColumn(0).getInt64();
  });
}

std::int64_t SqliteMerchantDatabase::forget_changes_through(SourceKind kind, std::string_view through,
                                                            std::size_t limit) {
  const std::int64_t last = parse_sequence(through);
  return in_write_transaction(*db_, path_, fmt::format("pruning {}", kChangeLogTable), [&] {
    SQLite::Statement remove(*db_, "DELETE FROM " + sql_name(kChangeLogTable) + " WHERE seq IN (SELECT seq FROM " +
                                       sql_name(kChangeLogTable) +
                                       " WHERE source_table = ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3)");
    remove.bind(1, std::string(source_table(kind)));
    remove.bind(2, static_cast<int64_t>(last));
    remove.bind(3, static_cast<int64_t>(limit));
    const int removed = remove.exec();
    SQLite::Statement mark(*db_, fmt::format("INSERT INTO {} (source_table, through) VALUES (?1, ?2) ON CONFLICT "
                                             "(source_table) DO UPDATE SET through = max(through, excluded.through)",
                                             sql_name(kChangeLogForgottenTable)));
    mark.bind(1, std::string(source_table(kind)));
    mark.bind(2, static_cast<int64_t>(last));
    mark.exec();
    return static_cast<std::int64_t>(removed);
  });
}

bool SqliteMerchantDatabase::changes_forgotten_after(SourceKind kind, std::string_view after) {
  const std::int64_t position = parse_sequence(after);
  return guarded(path_, fmt::format("reading {}", kChangeLogForgottenTable), [&] {
    SQLite::Statement query(*db_, fmt::format("SELECT coalesce((SELECT through FROM {} WHERE source_table = ?1), 0)",
                                              sql_name(kChangeLogForgottenTable)));
    query.bind(1, std::string(source_table(kind)));
    query.executeStep();
    return query.getColumn(0).getInt64() > position;
  });
}

bool SqliteMerchantDatabase::install_change_log() {
  return in_write_transaction(*db_, path_, "installing the change log (schema/merchant/change_log/)", [&] {
    const bool missing = !change_log_exists(*db_);
    for (const sqlite::Migration& step : schema::merchant_change_log_migrations()) db_->exec(std::string(step.sql));
    return missing;
  });
}

std::vector<std::int64_t> SqliteMerchantDatabase::watched_inventory_ids() {
  return guarded(path_, fmt::format("reading {}", kWatchedInventoryTable), [&] {
    std::vector<std::int64_t> ids;
    SQLite::Statement query(*db_, "SELECT DISTINCT inventory_id FROM " + sql_name(kWatchedInventoryTable) +
                                      " WHERE typeof(inventory_id) = 'integer' ORDER BY inventory_id");
    while (query.executeStep()) ids.push_back(query.getColumn(0).getInt64());
    return ids;
  });
}

void SqliteMerchantDatabase::write_results(SourceKind kind, std::span<const SyncResult> results) {
  if (results.empty()) return;
  const bool orders = kind == SourceKind::orders;
  std::string columns(kResultColumns);
  std::string values = "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10";
  std::string updates =
      "state = excluded.state, remote_id = excluded.remote_id, "
      // Once a pull has written the provider's status (remote_updated_at), it is newer than what the
      // create or cancel answer said: a later ledger write (a note, a replay) must not bring that back.
      "remote_status = CASE WHEN remote_updated_at IS NULL THEN excluded.remote_status ELSE remote_status END, "
      "last_error = excluded.last_error, note = excluded.note, attempts = excluded.attempts, "
      "content_hash = excluded.content_hash, updated_at = excluded.updated_at, "
      "remote_created_at = excluded.remote_created_at";
  if (orders) {
    columns += kOrderOnlyResultColumns;
    values += ", ?11, ?12";
    updates += ", cancel_requested_at = excluded.cancel_requested_at, cancelled_at = excluded.cancelled_at";
  }
  in_write_transaction(*db_, path_, fmt::format("writing {}", result_table(kind)), [&] {
    SQLite::Statement upsert(*db_, "INSERT INTO " + result_table(kind) + " (" + columns + ") VALUES (" + values +
                                       ") ON CONFLICT (reference_id) DO UPDATE SET " + updates +
                                       // An older result replayed after a newer one changes nothing.
                                       " WHERE excluded.updated_at >= updated_at");
    for (const SyncResult& result : results) {
      upsert.reset();
      upsert.bind(1, result.reference_id);
      upsert.bind(2, result.state);
      bind_optional(upsert, 3, result.remote_id);
      bind_optional(upsert, 4, result.remote_status);
      bind_optional(upsert, 5, result.last_error);
      bind_optional(upsert, 6, result.note);
      upsert.bind(7, static_cast<int64_t>(result.attempts));
      bind_optional(upsert, 8, result.content_hash);
      upsert.bind(9, timestamps::format_iso8601_z(result.updated_at));  // first_seen_at on insert
      bind_optional(upsert, 10, text_of(result.remote_created_at));
      if (orders) {
        bind_optional(upsert, 11, text_of(result.cancel_requested_at));
        bind_optional(upsert, 12, text_of(result.cancelled_at));
      }
      upsert.exec();
    }
  });
}

std::map<std::string, std::int64_t> SqliteMerchantDatabase::count_results_by_state(SourceKind kind) {
  return guarded(path_, fmt::format("reading {}", result_table(kind)), [&] {
    std::map<std::string, std::int64_t> counts;
    SQLite::Statement query(*db_, "SELECT state, count(*) FROM " + result_table(kind) + " GROUP BY state");
    while (query.executeStep()) counts[query.getColumn(0).getString()] = query.getColumn(1).getInt64();
    return counts;
  });
}

std::vector<SyncResult> SqliteMerchantDatabase::latest_results(SourceKind kind, std::string_view state,
                                                               std::size_t limit) {
  return guarded(path_, fmt::format("reading {}", result_table(kind)), [&] {
    std::string columns(kResultColumns);
    if (kind == SourceKind::orders) columns += kOrderOnlyResultColumns;
    SQLite::Statement query(*db_, "SELECT " + columns + " FROM " + result_table(kind) +
                                      " WHERE state = ? ORDER BY updated_at DESC, reference_id LIMIT ?");
    query.bind(1, std::string(state));
    query.bind(2, static_cast<int64_t>(limit));
    std::vector<SyncResult> results;
    while (query.executeStep()) results.push_back(read_result_row(query, kind));
    return results;
  });
}

std::vector<SyncResult> SqliteMerchantDatabase::results_after(SourceKind kind, std::string_view after_reference_id,
                                                              std::size_t limit) {
  return guarded(path_, fmt::format("reading {}", result_table(kind)), [&] {
    std::string columns(kResultColumns);
    if (kind == SourceKind::orders) columns += kOrderOnlyResultColumns;
    SQLite::Statement query(*db_, "SELECT " + columns + " FROM " + result_table(kind) +
                                      " WHERE reference_id > ? ORDER BY reference_id LIMIT ?");
    query.bind(1, std::string(after_reference_id));
    query.bind(2, static_cast<int64_t>(limit));
    std::vector<SyncResult> results;
    while (query.executeStep()) results.push_back(read_result_row(query, kind));
    return results;
  });
}

std::optional<SyncResult> SqliteMerchantDatabase::read_result(SourceKind kind, std::string_view reference_id) {
  return guarded(path_, fmt::format("reading {}", result_table(kind)), [&]() -> std::optional<SyncResult> {
    std::string columns(kResultColumns);
    if (kind == SourceKind::orders) columns += kOrderOnlyResultColumns;
    SQLite::Statement query(*db_, "SELECT " + columns + " FROM " + result_table(kind) + " WHERE reference_id = ?");
    query.bind(1, std::string(reference_id));
    if (!query.executeStep()) return std::nullopt;
    return read_result_row(query, kind);
  });
}


// --- What the pull jobs write.

namespace {

// In the order `run` binds them.
constexpr std::array<std::string_view, 18> kShipmentColumns = {
    "shipment_id", "order_id", "order_reference_id", "status", "status_detail_id", "status_detail_name",
    "location_id", "location_name", "ship_option", "created_date", "actual_fulfillment_date",
    "estimated_fulfillment_date", "delivery_date", "last_update_at", "invoice_amount", "invoice_currency_code",
    "is_tracking_uploaded", "synced_at"};
constexpr std::array<std::string_view, 12> kShipmentItemColumns = {
    "shipment_id", "line_number", "product_id", "product_reference_id", "sku", "product_name", "inventory_id",
    "lot", "expiration_date", "quantity", "quantity_committed", "serial_numbers"};
// written_at last: it is kept on conflict unless the tracking number changes.
constexpr std::array<std::string_view, 13> kTrackingColumns = {
    "shipment_id", "order_id", "order_reference_id", "tracking_number", "carrier", "carrier_service",
    "tracking_url", "scac", "bol", "pro_number", "shipping_date", "last_tracking_update_at", "written_at"};
constexpr std::array<std::string_view, 11> kLotColumns = {
    "inventory_id", "lot_number", "location_id", "location_name", "lot_date", "awaiting_quantity",
    "committed_quantity", "fulfillable_quantity", "internal_transfer_quantity", "on_hand_quantity", "synced_at"};
constexpr std::array<std::string_view, 7> kTimelineColumns = {
    "shipment_id", "seq", "timestamp", "log_type_id", "log_type_name", "log_type_text", "metadata"};

}  // namespace

void SqliteMerchantDatabase::write_shipments(std::span<const OrderStatusRecord> orders,
                                             std::span<const ShipmentRecord> shipments) {
  if (orders.empty() && shipments.empty()) return;
  in_write_transaction(*db_, path_, fmt::format("writing {}", table("shipments")), [&] {
    // Only orders the daemon pushed have a row; a status older than the one held changes nothing.
    SQLite::Statement order_status(*db_, "UPDATE " + result_table(SourceKind::orders) +
                                             " SET remote_status = ?1, remote_updated_at = ?2 WHERE reference_id = ?3"
                                             " AND (remote_updated_at IS NULL OR remote_updated_at <= ?2)");
    SQLite::Statement upsert_shipment(*db_, insert_sql(table("shipments"), kShipmentColumns) +
                                                " ON CONFLICT (shipment_id) DO UPDATE SET " +
                                                set_from_excluded(std::span(kShipmentColumns).subspan(1)) +
                                                " WHERE excluded.last_update_at >= last_update_at");
    SQLite::Statement delete_items(*db_, "DELETE FROM " + table("shipment_items") + " WHERE shipment_id = ?1");
    SQLite::Statement insert_item(*db_, insert_sql(table("shipment_items"), kShipmentItemColumns));
    // The merchant acknowledged a tracking number, not a shipment: a new number needs a new
    // acknowledgement. Whether it was marked uploaded is the shipment's, so that stays.
    SQLite::Statement upsert_tracking(
        *db_, insert_sql(table("tracking"), kTrackingColumns) + " ON CONFLICT (shipment_id) DO UPDATE SET " +
                  set_from_excluded(std::span(kTrackingColumns).subspan(1, kTrackingColumns.size() - 2)) +
                  ", written_at = CASE WHEN tracking_number = excluded.tracking_number THEN written_at"
                  " ELSE excluded.written_at END"
                  ", acknowledged_at = CASE WHEN tracking_number = excluded.tracking_number THEN acknowledged_at END");
    // The provider already lists it as uploaded (marked before the merchant database was restored
    // from a backup, or by another integration): there is nothing left to mark.
    SQLite::Statement already_marked(*db_, "UPDATE " + table("tracking") +
                                               " SET upload_marked_at = ?2"
                                               " WHERE shipment_id = ?1 AND upload_marked_at IS NULL");

    for (const OrderStatusRecord& order : orders) run(order_status, order.status, order.as_of, order.reference_id);

    const std::string now = now_text();
    for (const ShipmentRecord& shipment : shipments) {
      const int written = run(upsert_shipment, shipment.shipment_id, shipment.order_id, shipment.order_reference_id,
                              shipment.status, shipment.status_detail_id, shipment.status_detail_name,
                              shipment.location_id, shipment.location_name, shipment.ship_option, shipment.created_date,
                              shipment.actual_fulfillment_date, shipment.estimated_fulfillment_date,
                              shipment.delivery_date, shipment.last_update_at, shipment.invoice_amount,
                              shipment.invoice_currency_code, std::int64_t{shipment.is_tracking_uploaded}, now);
      if (written == 0) continue;  // an older record: its items and tracking are older too
      run(delete_items, shipment.shipment_id);
      for (const ShipmentItemRecord& item : shipment.items) {
        run(insert_item, shipment.shipment_id, std::int64_t{item.line_number}, item.product_id,
            item.product_reference_id, item.sku, item.product_name, item.inventory_id, item.lot, item.expiration_date,
            item.quantity, item.quantity_committed, json_array(item.serial_numbers));
      }
      if (const auto& tracking = shipment.tracking) {
        run(upsert_tracking, shipment.shipment_id, shipment.order_id, shipment.order_reference_id,
            tracking->tracking_number, tracking->carrier, tracking->carrier_service, tracking->tracking_url,
            tracking->scac, tracking->bol, tracking->pro_number, tracking->shipping_date,
            tracking->last_tracking_update_at, now);
        if (shipment.is_tracking_uploaded) run(already_marked, shipment.shipment_id, now);
      }
    }
  });
}

std::vector<TrackingToMark> SqliteMerchantDatabase::tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                                                     bool acknowledged_only) {
  return guarded(path_, fmt::format("reading {}", table("tracking")), [&] {
    SQLite::Statement query(*db_, "SELECT shipment_id, order_id FROM " + table("tracking") +
                                      " WHERE upload_marked_at IS NULL AND shipment_id > ?1"
                                      " AND (?2 = 0 OR acknowledged_at IS NOT NULL) ORDER BY shipment_id LIMIT ?3");
    query.bind(1, static_cast<int64_t>(after_shipment_id));
    query.bind(2, acknowledged_only ? 1 : 0);
    query.bind(3, static_cast<int64_t>(limit));
    std::vector<TrackingToMark> rows;
    while (query.executeStep()) rows.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getInt64()});
    return rows;
  });
}

void SqliteMerchantDatabase::record_tracking_marks(std::span<const TrackingMarkResult> results) {
  if (results.empty()) return;
  in_write_transaction(*db_, path_, fmt::format("writing {}", table("tracking")), [&] {
    // A failed attempt leaves upload_marked_at as it was; a success clears the last error.
    SQLite::Statement update(*db_, "UPDATE " + table("tracking") +
                                       " SET upload_marked_at = coalesce(?2, upload_marked_at),"
                                       " mark_error = CASE WHEN ?2 IS NULL THEN ?3 END, mark_attempts = ?4"
                                       " WHERE shipment_id = ?1");
    for (const TrackingMarkResult& result : results) {
      run(update, result.shipment_id, result.marked_at, result.error, std::int64_t{result.attempts});
    }
  });
}

void SqliteMerchantDatabase::write_return_statuses(std::span<const ReturnStatusRecord> returns) {
  if (returns.empty()) return;
  in_write_transaction(*db_, path_, fmt::format("writing {}", result_table(SourceKind::returns)), [&] {
    // Only returns the daemon pushed have a row; a status older than the one held changes nothing.
    SQLite::Statement update(*db_, "UPDATE " + result_table(SourceKind::returns) +
                                       " SET remote_status = ?1, remote_updated_at = ?2, arrived_at = ?3,"
                                       " processing_at = ?4, completed_at = ?5, cancelled_at = ?6,"
                                       " status_history = ?7, actions_taken = ?8 WHERE reference_id = ?9"
                                       " AND (remote_updated_at IS NULL OR remote_updated_at <= ?2)");
    for (const ReturnStatusRecord& record : returns) {
      run(update, record.status, record.as_of, record.arrived_at, record.processing_at, record.completed_at,
          record.cancelled_at, record.status_history_json, record.actions_taken_json, record.reference_id);
    }
  });
}

LotChanges SqliteMerchantDatabase::replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) {
  return in_write_transaction(*db_, path_, fmt::format("writing {}", table("inventory_lots")), [&] {
    // What is there now: to count the lots that change and to find those the provider no longer lists.
    std::map<std::pair<std::string, std::int64_t>, LotRecord> held;
    SQLite::Statement query(*db_, fmt::format("SELECT lot_number, location_id, location_name, lot_date, "
                                              "awaiting_quantity, committed_quantity, fulfillable_quantity, "
                                              "internal_transfer_quantity, on_hand_quantity FROM {} "
                                              "WHERE inventory_id = ?1",
                                              table("inventory_lots")));
    query.bind(1, static_cast<int64_t>(inventory_id));
    while (query.executeStep()) {
      LotRecord lot{.lot_number = query.getColumn(0).getString(),
                    .lot_date = optional_text(query.getColumn(3)),
                    .location_id = query.getColumn(1).getInt64(),
                    .location_name = optional_text(query.getColumn(2)),
                    .quantities = {.awaiting = query.getColumn(4).getInt64(),
                                   .committed = query.getColumn(5).getInt64(),
                                   .fulfillable = query.getColumn(6).getInt64(),
                                   .internal_transfer = query.getColumn(7).getInt64(),
                                   .on_hand = query.getColumn(8).getInt64()}};
      held.emplace(std::pair(lot.lot_number, lot.location_id), std::move(lot));
    }

    // Every listed lot is upserted, so synced_at says when its figures were last confirmed.
    SQLite::Statement upsert(*db_, insert_sql(table("inventory_lots"), kLotColumns) +
                                       " ON CONFLICT (inventory_id, lot_number, location_id) DO UPDATE SET " +
                                       set_from_excluded(std::span(kLotColumns).subspan(3)));
    LotChanges changes;
    const std::string now = now_text();
    for (const LotRecord& lot : lots) {
      const auto found = held.find(std::pair(lot.lot_number, lot.location_id));
      if (found == held.end() || found->second != lot) ++changes.written;
      if (found != held.end()) held.erase(found);
      const LotQuantitiesRecord& q = lot.quantities;
      run(upsert, inventory_id, lot.lot_number, lot.location_id, lot.location_name, lot.lot_date, q.awaiting,
          q.committed, q.fulfillable, q.internal_transfer, q.on_hand, now);
    }

    SQLite::Statement remove(*db_, "DELETE FROM " + table("inventory_lots") +
                                       " WHERE inventory_id = ?1 AND lot_number = ?2 AND location_id = ?3");
    for (const auto& [key, lot] : held) changes.removed += run(remove, inventory_id, key.first, key.second);
    return changes;
  });
}

int SqliteMerchantDatabase::remove_lots_except(std::span<const std::int64_t> inventory_ids) {
  return in_write_transaction(*db_, path_, fmt::format("writing {}", table("inventory_lots")), [&] {
    const std::set<std::int64_t> kept(inventory_ids.begin(), inventory_ids.end());
    std::vector<std::int64_t> dropped;
    SQLite::Statement query(*db_, "SELECT DISTINCT inventory_id FROM " + table("inventory_lots"));
    while (query.executeStep()) {
      const std::int64_t id = query.getColumn(0).getInt64();
      if (!kept.contains(id)) dropped.push_back(id);
    }
    SQLite::Statement remove(*db_, "DELETE FROM " + table("inventory_lots") + " WHERE inventory_id = ?1");
    int removed = 0;
    for (std::int64_t id : dropped) removed += run(remove, id);
    return removed;
  });
}

void SqliteMerchantDatabase::write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) {
  in_write_transaction(*db_, path_, fmt::format("writing {}", table("shipment_timeline")), [&] {
    SQLite::Statement remove(*db_, "DELETE FROM " + table("shipment_timeline") + " WHERE shipment_id = ?1");
    SQLite::Statement insert(*db_, insert_sql(table("shipment_timeline"), kTimelineColumns));
    run(remove, shipment_id);
    std::int64_t seq = 0;
    for (const TimelineEntryRecord& entry : entries) {
      run(insert, shipment_id, ++seq, entry.timestamp, entry.log_type_id, entry.log_type_name, entry.log_type_text,
          entry.metadata_json);
    }
  });
}

}  // namespace fulfillsync::merchant
