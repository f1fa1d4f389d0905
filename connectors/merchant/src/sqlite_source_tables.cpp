#include "sqlite_source_tables.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <set>
#include <unordered_map>

#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/schema/migrations.hpp"
#include "source_assembly.hpp"
#include "sqlite_change_time.hpp"
#include "sqlite_content_hash.hpp"
#include "sqlite_contract.hpp"

namespace fulfillsync::merchant {
namespace {

// A column qualified by its table's alias: SQLite reads an unqualified "name" that matches no column
// as a string literal, which would pass a missing column off as one full of its own name.
std::string column_of(std::string_view alias, std::string_view column) {
  return std::string(alias) + "." + sql_name(column);
}

Field read_field(const SQLite::Column& column) {
  const int type = column.getType();
  if (type == SQLite::INTEGER) return Field::of(static_cast<std::int64_t>(column.getInt64()));
  if (type == SQLite::FLOAT) return Field{.type = Field::Type::real, .real = column.getDouble()};
  if (type == SQLite::TEXT) return Field::of(column.getString());
  if (type == SQLite::BLOB) {
    return Field{
        .type = Field::Type::blob,
        .text = std::string(static_cast<const char*>(column.getBlob()), static_cast<std::size_t>(column.getBytes()))};
  }
  return Field{};
}

template <typename Row>
std::string select_rows_sql(std::string_view where) {
  std::string sql = "SELECT t.reference_id, t.updated_at, " + std::string(kChangeTimeSql);
  for (const auto& column : Source<Row>::columns()) sql += ", " + column_of("t", column.name);
  return sql + " FROM " + sql_name(Source<Row>::table) + " AS t WHERE " + std::string(where);
}

// The keys a statement reads, bound as one parameter: a JSON array that `json_each(?)` lists, so that
// the statement's text is the same whatever their number and it is prepared once.
std::string json_keys(std::span<const std::string> keys) {
  json::JsonWriter array;
  array.begin_array();
  for (const std::string& key : keys) array.value(key);
  return array.end_array().take();
}

// The lines of the rows whose keys `?1` lists (json_keys). An optional line column missing from the
// table is read as NULL: the text depends on the schema.
template <typename Row>
std::string select_lines_sql(SQLite::Database& db) {
  const std::string parent = column_of("l", Source<Row>::parent);
  std::string sql = "SELECT " + parent;
  for (const auto& column : Source<Row>::line_columns()) {
    sql += ", " + select_column(db, Source<Row>::lines_table, "l", column.name, column.optional);
  }
  return sql + " FROM " + sql_name(Source<Row>::lines_table) + " AS l WHERE " + parent +
         " IN (SELECT value FROM json_each(?1)) ORDER BY " + parent + ", " + column_of("l", Source<Row>::line_order);
}

// Fills the rows of `query` and their lines (`lines_sql`: select_lines_sql); the caller holds the
// read transaction.
template <typename Row>
std::vector<Row> collect(SqliteConnection& connection, const std::string& lines_sql, SQLite::Statement& query) {
  std::vector<Row> rows;
  while (query.executeStep()) {
    rows.push_back(make_row<Row>(query.getColumn(0).getString(), query.getColumn(1).getString(),
                                 query.getColumn(2).getString(), [&](std::size_t i) {
                                   return read_field(query.getColumn(static_cast<int>(i + 3)));
                                 }));
  }
  if (rows.empty()) return rows;
  std::vector<std::string> keys;
  keys.reserve(rows.size());
  for (const Row& row : rows) keys.push_back(row.reference_id);
  RowAssembly<Row> assembly(rows);
  SQLite::Statement& lines = connection.prepared(lines_sql);
  lines.bind(1, json_keys(keys));
  while (lines.executeStep()) {
    assembly.add_line(lines.getColumn(0).getString(),
                      [&](std::size_t i) { return read_field(lines.getColumn(static_cast<int>(i + 1))); });
  }
  return rows;
}

}  // namespace

std::vector<std::string> SqliteSourceTables::check_source_tables() { return contract_problems(db(), source_contract()); }
std::vector<std::string> SqliteSourceTables::check_catalog_tables() { return contract_problems(db(), catalog_contract()); }

std::uint64_t SqliteSourceTables::change_counter() {
  return connection_.guarded("data_version", [&] {
    // Every poll asks: prepared once.
    SQLite::Statement& query = connection_.prepared("PRAGMA data_version");
    query.executeStep();
    const auto counter = static_cast<std::uint64_t>(query.getColumn(0).getInt64());
    query.reset();
    return counter;
  });
}

namespace {

template <typename Row>
std::vector<Row> read_range(SqliteConnection& connection, const std::string& lines_sql, const ReadRange& range) {
  const std::string time(kChangeTimeSql);
  std::string where = "(" + time + ", t.reference_id) > (?1, ?2)";
  if (range.through) where += " AND (" + time + ", t.reference_id) <= (?3, ?4)";
  SQLite::Statement query(connection.db(), select_rows_sql<Row>(where) + " ORDER BY 3, t.reference_id LIMIT ?5");
  query.bind(1, range.after.updated_at);
  query.bind(2, range.after.reference_id);
  if (range.through) {
    query.bind(3, range.through->updated_at);
    query.bind(4, range.through->reference_id);
  }
  query.bind(5, static_cast<int64_t>(range.limit));
  return collect<Row>(connection, lines_sql, query);
}

template <typename Row>
std::vector<Row> read_key_range(SqliteConnection& connection, const std::string& lines_sql, const KeyRange& range) {
  // The primary key gives the order: each page computes the change time of its own rows only.
  const std::string where = "t.reference_id > ?1 AND (" + std::string(kChangeTimeSql) + ", t.reference_id) > (?2, ?3)";
  SQLite::Statement query(connection.db(), select_rows_sql<Row>(where) + " ORDER BY t.reference_id LIMIT ?4");
  query.bind(1, range.after_key);
  query.bind(2, range.changed_after.updated_at);
  query.bind(3, range.changed_after.reference_id);
  query.bind(4, static_cast<int64_t>(range.limit));
  return collect<Row>(connection, lines_sql, query);
}

// The rows of `keys`: what the change log names, read after every change, so prepared once.
template <typename Row>
std::vector<Row> read_keys(SqliteConnection& connection, const std::string& lines_sql,
                           std::span<const std::string> keys) {
  static const std::string sql =
      select_rows_sql<Row>("t.reference_id IN (SELECT value FROM json_each(?1))") + " ORDER BY t.updated_at, t.reference_id";
  SQLite::Statement& query = connection.prepared(sql);
  query.bind(1, json_keys(keys));
  return collect<Row>(connection, lines_sql, query);
}

// One read transaction, so that rows and their lines are one snapshot; committed before returning.
template <typename Row, typename Read>
std::vector<Row> read_snapshot(SqliteConnection& connection, Read read, bool nothing_to_read = false) {
  if (nothing_to_read) return {};
  std::vector<Row> rows = connection.guarded(fmt::format("reading {}", Source<Row>::table), [&] {
    sqlite::CachedTransaction transaction = connection.transaction("BEGIN DEFERRED");
    std::vector<Row> snapshot = read();
    transaction.commit();
    return snapshot;
  });
  hash_rows(rows);
  return rows;
}

}  // namespace

template <typename Row>
const std::string& SqliteSourceTables::lines_sql() {
  // Read inside the snapshot: the schema the statement is prepared against.
  SQLite::Statement& query = connection_.prepared("PRAGMA schema_version");
  query.executeStep();
  const std::int64_t schema_version = query.getColumn(0).getInt64();
  query.reset();
  SchemaBoundSql& lines = lines_sql_[Source<Row>::lines_table];
  if (lines.sql.empty() || lines.schema_version != schema_version) {
    lines = {.schema_version = schema_version, .sql = select_lines_sql<Row>(db())};
  }
  return lines.sql;
}

std::vector<OrderRow> SqliteSourceTables::read_orders(const ReadRange& range) {
  return read_snapshot<OrderRow>(connection_,
                                 [&] { return read_range<OrderRow>(connection_, lines_sql<OrderRow>(), range); });
}
std::vector<ReturnRow> SqliteSourceTables::read_returns(const ReadRange& range) {
  return read_snapshot<ReturnRow>(connection_,
                                  [&] { return read_range<ReturnRow>(connection_, lines_sql<ReturnRow>(), range); });
}
std::vector<OrderRow> SqliteSourceTables::read_orders_by_key(const KeyRange& range) {
  return read_snapshot<OrderRow>(
      connection_, [&] { return read_key_range<OrderRow>(connection_, lines_sql<OrderRow>(), range); });
}
std::vector<ReturnRow> SqliteSourceTables::read_returns_by_key(const KeyRange& range) {
  return read_snapshot<ReturnRow>(
      connection_, [&] { return read_key_range<ReturnRow>(connection_, lines_sql<ReturnRow>(), range); });
}
std::vector<OrderRow> SqliteSourceTables::read_orders(std::span<const std::string> reference_ids) {
  return read_snapshot<OrderRow>(
      connection_, [&] { return read_keys<OrderRow>(connection_, lines_sql<OrderRow>(), reference_ids); },
      reference_ids.empty());
}
std::vector<ReturnRow> SqliteSourceTables::read_returns(std::span<const std::string> reference_ids) {
  return read_snapshot<ReturnRow>(
      connection_, [&] { return read_keys<ReturnRow>(connection_, lines_sql<ReturnRow>(), reference_ids); },
      reference_ids.empty());
}

std::vector<OpenRowVersion> SqliteSourceTables::open_row_versions(SourceKind kind, std::string_view after_key,
                                                                  std::size_t limit) {
  const std::string_view final_state = final_result_condition(kind);
  const std::string sql = row_versions_sql(
      db(), kind, fmt::format("WHERE t.reference_id > ?1 AND NOT EXISTS (SELECT 1 FROM {} AS r WHERE r.reference_id = "
                        "t.reference_id AND ({})) ORDER BY t.reference_id LIMIT ?2",
                        connection_.result_table(kind), final_state));
  return connection_.guarded(fmt::format("comparing the open rows of {}", source_table(kind)), [&] {
    SQLite::Statement query(db(), sql);
    query.bind(1, std::string(after_key));
    query.bind(2, static_cast<int64_t>(limit));
    std::vector<OpenRowVersion> rows;
    while (query.executeStep()) {
      rows.push_back({.reference_id = query.getColumn(0).getString(),
                      .change_time = query.getColumn(1).getString(),
                      .cancel_requested = read_field(query.getColumn(2)),
                      .content_hash = query.getColumn(3).getString()});
    }
    return rows;
  });
}

std::int64_t SqliteSourceTables::count_changes_after(SourceKind kind, const ChangeCursor& after) {
  const std::string_view table = source_table(kind);
  return connection_.guarded(fmt::format("counting {}", table), [&] {
    SQLite::Statement query(db(), "SELECT count(*) FROM " + sql_name(table) + " AS t WHERE (" +
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

bool SqliteSourceTables::has_change_log() {
  return connection_.guarded("looking for the change log", [&] { return change_log_exists(db()); });
}

std::string SqliteSourceTables::change_log_end(SourceKind) {
  return connection_.guarded(fmt::format("reading {}", kChangeLogTable), [&] {
    // sqlite_sequence keeps the highest seq ever given, even once every entry has been deleted.
    SQLite::Statement query(db(), "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?1), 0)");
    query.bind(1, std::string(kChangeLogTable));
    query.executeStep();
    return std::to_string(query.getColumn(0).getInt64());
  });
}

ChangedKeys SqliteSourceTables::changes_after(SourceKind kind, std::string_view after, std::size_t limit) {
  const std::int64_t from = parse_sequence(after);
  return connection_.guarded(fmt::format("reading {}", kChangeLogTable), [&] {
    // Every poll woken by a commit asks: prepared once.
    static const std::string sql = "SELECT seq, reference_id FROM " + sql_name(kChangeLogTable) +
                                   " WHERE source_table = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3";
    SQLite::Statement& query = connection_.prepared(sql);
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

std::int64_t SqliteSourceTables::count_rows_changed_after(SourceKind kind, std::string_view after) {
  const std::int64_t from = parse_sequence(after);
  return connection_.guarded(fmt::format("counting {}", kChangeLogTable), [&] {
    SQLite::Statement query(db(), "SELECT count(DISTINCT reference_id) FROM " + sql_name(kChangeLogTable) +
                                      " WHERE source_table = ?1 AND seq > ?2");
    query.bind(1, std::string(source_table(kind)));
    query.bind(2, static_cast<int64_t>(from));
    query.executeStep();
    return query.getColumn(0).getInt64();
  });
}

std::int64_t SqliteSourceTables::forget_changes_through(SourceKind kind, std::string_view through, std::size_t limit) {
  const std::int64_t last = parse_sequence(through);
  return connection_.in_write_transaction(fmt::format("pruning {}", kChangeLogTable), [&] {
    SQLite::Statement remove(db(), "DELETE FROM " + sql_name(kChangeLogTable) + " WHERE seq IN (SELECT seq FROM " +
                                       sql_name(kChangeLogTable) +
                                       " WHERE source_table = ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3)");
    remove.bind(1, std::string(source_table(kind)));
    remove.bind(2, static_cast<int64_t>(last));
    remove.bind(3, static_cast<int64_t>(limit));
    const int removed = remove.exec();
    SQLite::Statement mark(db(), fmt::format("INSERT INTO {} (source_table, through) VALUES (?1, ?2) ON CONFLICT "
                                             "(source_table) DO UPDATE SET through = max(through, excluded.through)",
                                             sql_name(kChangeLogForgottenTable)));
    mark.bind(1, std::string(source_table(kind)));
    mark.bind(2, static_cast<int64_t>(last));
    mark.exec();
    return static_cast<std::int64_t>(removed);
  });
}

bool SqliteSourceTables::changes_forgotten_after(SourceKind kind, std::string_view after) {
  const std::int64_t position = parse_sequence(after);
  return connection_.guarded(fmt::format("reading {}", kChangeLogForgottenTable), [&] {
    SQLite::Statement query(db(), fmt::format("SELECT coalesce((SELECT through FROM {} WHERE source_table = ?1), 0)",
                                              sql_name(kChangeLogForgottenTable)));
    query.bind(1, std::string(source_table(kind)));
    query.executeStep();
    return query.getColumn(0).getInt64() > position;
  });
}

bool SqliteSourceTables::install_change_log() {
  return connection_.in_write_transaction("installing the change log (schema/merchant/change_log/)", [&] {
    const bool missing = !change_log_exists(db());
    for (const sqlite::Migration& step : schema::merchant_change_log_migrations()) db().exec(std::string(step.sql));
    return missing;
  });
}

namespace {

// How many variant rows have each of `skus`, a few hundred SKUs per statement.
std::unordered_map<std::string, std::int64_t> rows_by_sku(SQLite::Database& db, const std::vector<std::string>& skus) {
  std::unordered_map<std::string, std::int64_t> counts;
  constexpr std::size_t kKeysPerQuery = 500;
  for (std::size_t first = 0; first < skus.size(); first += kKeysPerQuery) {
    const std::size_t count = std::min(kKeysPerQuery, skus.size() - first);
    std::string sql = "SELECT v.sku, count(*) FROM " + sql_name(kVariantsTable) + " AS v WHERE v.sku IN (";
    for (std::size_t i = 0; i < count; ++i) sql += i == 0 ? "?" : ", ?";
    SQLite::Statement query(db, sql + ") GROUP BY v.sku");
    for (std::size_t i = 0; i < count; ++i) query.bind(static_cast<int>(i + 1), skus[first + i]);
    while (query.executeStep()) counts[query.getColumn(0).getString()] = query.getColumn(1).getInt64();
  }
  return counts;
}

// Products read in one snapshot with their variants and how often each SKU occurs.
template <typename Read>
std::vector<ProductRow> read_catalog(SqliteConnection& connection, Read read) {
  return read_snapshot<ProductRow>(connection, [&] {
    std::vector<ProductRow> rows = read();
    count_skus(rows, rows_by_sku(connection.db(), skus_of(rows)));
    return rows;
  });
}

}  // namespace

std::vector<ProductRow> SqliteSourceTables::read_products(std::string_view after_key, std::size_t limit) {
  return read_catalog(connection_, [&] {
    SQLite::Statement query(db(), select_rows_sql<ProductRow>("t.reference_id > ?1") + " ORDER BY t.reference_id LIMIT ?2");
    query.bind(1, std::string(after_key));
    query.bind(2, static_cast<int64_t>(limit));
    return collect<ProductRow>(connection_, lines_sql<ProductRow>(), query);
  });
}

std::vector<ProductRow> SqliteSourceTables::read_products(std::span<const std::string> reference_ids) {
  if (reference_ids.empty()) return {};
  return read_catalog(connection_,
                      [&] { return read_keys<ProductRow>(connection_, lines_sql<ProductRow>(), reference_ids); });
}

std::optional<std::string> SqliteSourceTables::catalog_change_position() {
  const bool logged = connection_.guarded("looking for the catalog's change log", [&] {
    return change_log_exists(db()) && catalog_change_log_installed(db());
  });
  if (!logged) return std::nullopt;
  return change_log_end(SourceKind::products);
}

void SqliteSourceTables::forget_catalog_changes_through(std::string_view position) {
  if (position.empty()) return;
  const std::int64_t last = parse_sequence(position);
  connection_.in_write_transaction("pruning the catalog's change log", [&] {
    SQLite::Statement remove(db(), fmt::format("DELETE FROM {} WHERE source_table = ?1 AND seq <= ?2",
                                               sql_name(kChangeLogTable)));
    remove.bind(1, std::string(kProductsTable));
    remove.bind(2, static_cast<int64_t>(last));
    remove.exec();
  });
}

SourceTables::CatalogUpgrade SqliteSourceTables::install_catalog_change_order() {
  const std::string task = "installing the catalog's change log (schema/merchant/catalog_change_log.sql)";
  return connection_.in_write_transaction(task, [&] {
    SQLite::Statement tables(db(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?1, ?2)");
    tables.bind(1, std::string(kProductsTable));
    tables.bind(2, std::string(kVariantsTable));
    tables.executeStep();
    if (tables.getColumn(0).getInt() != 2) return CatalogUpgrade::no_catalog;
    // SQLite would take triggers into a log that is not there, and the shop's next write would fail.
    if (!change_log_exists(db())) throw MerchantDatabaseError(fmt::format("{}: the change log is not installed", task));
    const bool missing = !catalog_change_log_installed(db());
    db().exec(std::string(schema::merchant_catalog_change_log_sql()));
    return missing ? CatalogUpgrade::added : CatalogUpgrade::present;
  });
}

}  // namespace fulfillsync::merchant
