#include "postgres_source_tables.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "fulfillsync/schema/migrations.hpp"
#include "source_assembly.hpp"

namespace fulfillsync::merchant {
namespace {

// updated_at as an instant in the contract's form (source_rows.hpp); NULL is "~NULL", after every time.
constexpr std::string_view kChangeTime =
    R"(coalesce(to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '~NULL'))";
// The (change_time, reference_id) order, which the daemon's cursors compare as bytes: milliseconds
// (what change_time keeps), NULL after every time, and reference_id in the "C" collation.
constexpr std::string_view kChangeOrder =
    R"(coalesce(date_trunc('milliseconds', t.updated_at), 'infinity'::timestamptz), t.reference_id COLLATE "C")";

// A cursor's change_time as a timestamptz parameter: "" is before every row, a value that is no
// time ("~NULL") after every time.
PgParam cursor_time(const std::string& change_time) {
  if (change_time.empty()) return "-infinity";
  if (change_time.front() == kNotATime) return "infinity";
  return change_time;
}

template <typename Row>
std::string select_rows_sql(const PostgresConnection& connection, std::string_view where) {
  std::string sql = fmt::format("SELECT t.reference_id, t.updated_at::text, {}", kChangeTime);
  for (const auto& column : Source<Row>::columns()) sql += fmt::format(", t.{}", sql_name(column.name));
  return sql + fmt::format(" FROM {} AS t WHERE {}", connection.source_table(Source<Row>::table), where);
}

// How the lines are read selects `column`: the column, or NULL for an optional one (Column::optional)
// the table or view lacks.
std::string line_column_sql(PostgresConnection& connection, std::string_view table, std::string_view column,
                            bool optional) {
  if (optional && !connection.source_has_column(table, column)) return "NULL";
  return fmt::format("l.{}", sql_name(column));
}

// The rows of `result` (select_rows_sql) with their lines; the caller holds the snapshot.
template <typename Row>
std::vector<Row> collect(PostgresConnection& connection, const PgResult& result) {
  std::vector<Row> rows;
  for (int r = 0; r < result.rows(); ++r) {
    rows.push_back(make_row<Row>(result.text(r, 0), result.text(r, 1), result.text(r, 2), [&](std::size_t i) {
      return result.field(r, static_cast<int>(i + 3));
    }));
  }
  if (rows.empty()) return rows;
  std::string sql = fmt::format("SELECT l.{}", sql_name(Source<Row>::parent));
  for (const auto& column : Source<Row>::line_columns()) {
    sql += ", " + line_column_sql(connection, Source<Row>::lines_table, column.name, column.optional);
  }
  sql += fmt::format(" FROM {0} AS l WHERE l.{1} = ANY($1::text[]) ORDER BY l.{1}, l.{2}",
                     connection.source_table(Source<Row>::lines_table), sql_name(Source<Row>::parent),
                     sql_name(Source<Row>::line_order));
  std::vector<std::string> keys;
  for (const Row& row : rows) keys.push_back(row.reference_id);
  const PgResult lines =
      connection.run(fmt::format("reading {}", Source<Row>::lines_table), sql, {text_array(keys)});
  RowAssembly<Row> assembly(rows);
  for (int r = 0; r < lines.rows(); ++r) {
    assembly.add_line(lines.text(r, 0), [&](std::size_t i) { return lines.field(r, static_cast<int>(i + 1)); });
  }
  return rows;
}

// One REPEATABLE READ transaction, so that rows and their lines are one snapshot; hashed once read.
template <typename Row>
std::vector<Row> read_snapshot(PostgresConnection& connection, const std::string& sql, std::span<const PgParam> params) {
  const std::string task = fmt::format("reading {}", Source<Row>::table);
  std::vector<Row> rows = connection.in_transaction(task, PostgresConnection::Transaction::read_snapshot, [&] {
    return collect<Row>(connection, connection.run(task, sql, params));
  });
  hash_rows(rows);
  return rows;
}

template <typename Row>
std::vector<Row> read_range(PostgresConnection& connection, const ReadRange& range) {
  std::string where = fmt::format("({}) > ($1::timestamptz, $2::text)", kChangeOrder);
  if (range.through) where += fmt::format(" AND ({}) <= ($4::timestamptz, $5::text)", kChangeOrder);
  const std::string sql = select_rows_sql<Row>(connection, where) + fmt::format(" ORDER BY {} LIMIT $3", kChangeOrder);
  std::vector<PgParam> params = {cursor_time(range.after.updated_at), range.after.reference_id,
                                 std::to_string(range.limit)};
  if (range.through) {
    params.push_back(cursor_time(range.through->updated_at));
    params.push_back(range.through->reference_id);
  }
  std::vector<Row> rows = read_snapshot<Row>(connection, sql, params);
  connection.count_rows_changed(connection.source_table(Source<Row>::table), rows.size());
  return rows;
}

template <typename Row>
std::vector<Row> read_key_range(PostgresConnection& connection, const KeyRange& range) {
  const std::string where =
      fmt::format(R"(t.reference_id COLLATE "C" > $1::text AND ({}) > ($2::timestamptz, $3::text))", kChangeOrder);
  const std::string sql = select_rows_sql<Row>(connection, where) + R"( ORDER BY t.reference_id COLLATE "C" LIMIT $4)";
  const PgParam params[] = {range.after_key, cursor_time(range.changed_after.updated_at),
                            range.changed_after.reference_id, std::to_string(range.limit)};
  std::vector<Row> rows = read_snapshot<Row>(connection, sql, params);
  connection.count_rows_changed(connection.source_table(Source<Row>::table), rows.size());
  return rows;
}

template <typename Row>
std::vector<Row> read_keys(PostgresConnection& connection, std::span<const std::string> keys) {
  if (keys.empty()) return {};
  const std::string sql =
      select_rows_sql<Row>(connection, "t.reference_id = ANY($1::text[])") + fmt::format(" ORDER BY {}", kChangeOrder);
  const PgParam params[] = {text_array(keys)};
  return read_snapshot<Row>(connection, sql, params);
}

template <typename Row>
std::vector<OpenRowVersion> open_versions(PostgresConnection& connection, std::string_view after_key,
                                          std::size_t limit) {
  const std::string sql =
      select_rows_sql<Row>(connection,
                           fmt::format(R"(t.reference_id COLLATE "C" > $1::text AND NOT EXISTS (SELECT 1 FROM {} AS r )"
                                       R"(WHERE r.reference_id = t.reference_id AND ({})))",
                                       connection.result_table(Source<Row>::kind),
                                       final_result_condition(Source<Row>::kind))) +
      R"( ORDER BY t.reference_id COLLATE "C" LIMIT $2)";
  const PgParam params[] = {std::string(after_key), std::to_string(limit)};
  std::vector<OpenRowVersion> versions;
  for (const Row& row : read_snapshot<Row>(connection, sql, params)) {
    Field cancel_requested;
    if constexpr (std::is_same_v<Row, OrderRow>) cancel_requested = row.cancel_requested;
    versions.push_back({.reference_id = row.reference_id,
                        .change_time = row.change_time,
                        .cancel_requested = std::move(cancel_requested),
                        .content_hash = row.content_hash});
  }
  return versions;
}

// --- The change order: positions (see postgres_source_tables.hpp).

constexpr std::string_view kChangeColumn = "change_xid";

struct XidPosition {
  std::uint64_t horizon = 0;  // rows with change_xid at or above it
  // Between the pages of one read: it goes on after this (change_xid, reference_id).
  std::optional<std::pair<std::uint64_t, std::string>> resume{};
};

std::optional<std::uint64_t> parse_xid(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

XidPosition parse_position(std::string_view position) {
  if (position.empty()) return {};
  const auto fail = [&]() -> XidPosition {
    throw MerchantDatabaseError(fmt::format("'{}' is not a position in the transaction id order", position));
  };
  const std::size_t slash = position.find('/');
  const auto horizon = parse_xid(position.substr(0, slash));
  if (!horizon) return fail();
  if (slash == std::string_view::npos) return {.horizon = *horizon};
  const std::size_t second = position.find('/', slash + 1);
  if (second == std::string_view::npos) return fail();
  const auto xid = parse_xid(position.substr(slash + 1, second - slash - 1));
  if (!xid) return fail();
  return {.horizon = *horizon, .resume = std::pair{*xid, std::string(position.substr(second + 1))}};
}

// Rows at or after the position, in change order: the WHERE clause and its parameters from $1.
std::pair<std::string, std::vector<PgParam>> after_position(const XidPosition& position) {
  if (position.resume) {
    return {R"((t.change_xid, t.reference_id COLLATE "C") > ($1::xid8, $2::text))",
            {std::to_string(position.resume->first), position.resume->second}};
  }
  return {"t.change_xid >= $1::xid8", {std::to_string(position.horizon)}};
}

constexpr std::string_view kHorizonSql = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text";

// Problems with the tables of `contract` in the source schema: a table or view missing, one the
// role may not read, a column missing, one line each naming the table.
std::vector<std::string> contract_problems(PostgresConnection& connection, std::string_view task,
                                           const std::vector<ContractTable>& contract) {
  std::vector<std::string> names;
  for (const ContractTable& table : contract) names.emplace_back(table.name);
  // pg_catalog rather than information_schema, which hides what the role may not read.
  const PgResult found = connection.run(
      task,
      "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), has_table_privilege(c.oid, 'SELECT') "
      "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
      "WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')",
      {connection.source_schema(), text_array(names)});
  std::map<std::string, std::map<std::string, std::string>, std::less<>> columns;  // table -> column -> type
  std::set<std::string, std::less<>> readable;
  for (int r = 0; r < found.rows(); ++r) {
    columns[found.text(r, 0)][found.text(r, 1)] = found.text(r, 2);
    if (found.text(r, 3) == "t") readable.insert(found.text(r, 0));
  }
  std::vector<std::string> problems;
  for (const ContractTable& table : contract) {
    const auto held = columns.find(table.name);
    if (held == columns.end()) {
      problems.push_back(fmt::format("{}: no such table or view in schema {}", table.name, connection.source_schema()));
      continue;
    }
    if (!readable.contains(table.name)) {
      problems.push_back(fmt::format("{}: the daemon's role may not read it (GRANT SELECT ON {} TO ...)", table.name,
                                     connection.source_table(table.name)));
    }
    for (std::string_view column : table.columns) {
      const auto type = held->second.find(std::string(column));
      if (type == held->second.end()) {
        problems.push_back(fmt::format("{}.{}: no such column", table.name, column));
      } else if (column == "updated_at" && type->second != "timestamp with time zone") {
        problems.push_back(fmt::format("{}.updated_at: is {}, not timestamptz", table.name, type->second));
      }
    }
  }
  return problems;
}

}  // namespace

std::vector<std::string> PostgresSourceTables::check_source_tables() {
  return contract_problems(connection_, "checking the source tables", source_contract());
}

std::vector<std::string> PostgresSourceTables::check_catalog_tables() {
  return contract_problems(connection_, "checking the catalog's tables", catalog_contract());
}

std::uint64_t PostgresSourceTables::change_counter() {
  const PgResult snapshot = connection_.run("reading the snapshot", "SELECT pg_current_snapshot()::text");
  return std::hash<std::string>{}(snapshot.text(0, 0));
}

std::vector<OrderRow> PostgresSourceTables::read_orders(const ReadRange& range) {
  return read_range<OrderRow>(connection_, range);
}
std::vector<ReturnRow> PostgresSourceTables::read_returns(const ReadRange& range) {
  return read_range<ReturnRow>(connection_, range);
}
std::vector<OrderRow> PostgresSourceTables::read_orders_by_key(const KeyRange& range) {
  return read_key_range<OrderRow>(connection_, range);
}
std::vector<ReturnRow> PostgresSourceTables::read_returns_by_key(const KeyRange& range) {
  return read_key_range<ReturnRow>(connection_, range);
}
std::vector<OrderRow> PostgresSourceTables::read_orders(std::span<const std::string> reference_ids) {
  return read_keys<OrderRow>(connection_, reference_ids);
}
std::vector<ReturnRow> PostgresSourceTables::read_returns(std::span<const std::string> reference_ids) {
  return read_keys<ReturnRow>(connection_, reference_ids);
}

std::vector<OpenRowVersion> PostgresSourceTables::open_row_versions(SourceKind kind, std::string_view after_key,
                                                                    std::size_t limit) {
  return kind == SourceKind::orders ? open_versions<OrderRow>(connection_, after_key, limit)
                                    : open_versions<ReturnRow>(connection_, after_key, limit);
}

std::int64_t PostgresSourceTables::count_changes_after(SourceKind kind, const ChangeCursor& after) {
  const PgResult count = connection_.run(
      fmt::format("counting {}", source_table(kind)),
      fmt::format("SELECT count(*) FROM {} AS t WHERE ({}) > ($1::timestamptz, $2::text)",
                  connection_.source_table(source_table(kind)), kChangeOrder),
      {cursor_time(after.updated_at), after.reference_id});
  return count.integer(0, 0);
}

bool PostgresSourceTables::has_change_log() {
  const PgResult found = connection_.run(
      "looking for the change order",
      "SELECT count(*) FROM pg_attribute a WHERE a.attrelid IN (to_regclass($1::text), to_regclass($2::text)) "
      "AND a.attname = $3 AND NOT a.attisdropped AND a.atttypid = 'xid8'::regtype",
      {connection_.source_table(kOrdersTable), connection_.source_table(kReturnsTable), std::string(kChangeColumn)});
  return found.integer(0, 0) == 2;
}

std::string PostgresSourceTables::change_log_end(SourceKind) {
  return connection_.run("reading the snapshot horizon", std::string(kHorizonSql)).text(0, 0);
}

ChangedKeys PostgresSourceTables::changes_after(SourceKind kind, std::string_view after, std::size_t limit) {
  const XidPosition from = parse_position(after);
  const auto [where, params] = after_position(from);
  const std::string task = fmt::format("reading the changes of {}", source_table(kind));
  const std::string sql = fmt::format(
      R"(SELECT t.change_xid::text, t.reference_id FROM {} AS t WHERE {} ORDER BY t.change_xid, t.reference_id COLLATE "C" LIMIT ${})",
      connection_.source_table(source_table(kind)), where, params.size() + 1);
  std::vector<PgParam> bound = params;
  bound.push_back(std::to_string(limit));
  return connection_.in_transaction(task, PostgresConnection::Transaction::read_snapshot, [&] {
    // The horizon of the snapshot the rows are read in (its first statement takes it).
    const std::uint64_t now = parse_xid(connection_.run(task, std::string(kHorizonSql)).text(0, 0)).value_or(0);
    // A read that goes on keeps the horizon of its first page: what was open then may commit between pages.
    const std::uint64_t horizon = from.resume ? from.horizon : std::max(from.horizon, now);
    const PgResult rows = connection_.run(task, sql, bound);
    ChangedKeys changes;
    std::set<std::string> seen;
    for (int r = 0; r < rows.rows(); ++r) {
      std::string key = rows.text(r, 1);
      if (seen.insert(key).second) changes.keys.push_back(std::move(key));
    }
    changes.entries = rows.rows();
    connection_.count_rows_changed(connection_.source_table(source_table(kind)), changes.entries);
    changes.more = static_cast<std::size_t>(rows.rows()) == limit && limit > 0;
    changes.through = changes.more ? fmt::format("{}/{}/{}", horizon, rows.text(rows.rows() - 1, 0),
                                                 rows.text(rows.rows() - 1, 1))
                                   : std::to_string(horizon);
    return changes;
  });
}

std::int64_t PostgresSourceTables::count_rows_changed_after(SourceKind kind, std::string_view after) {
  const auto [where, params] = after_position(parse_position(after));
  return connection_
      .run(fmt::format("counting the changes of {}", source_table(kind)),
           fmt::format("SELECT count(*) FROM {} AS t WHERE {}", connection_.source_table(source_table(kind)), where),
           params)
      .integer(0, 0);
}

std::int64_t PostgresSourceTables::forget_changes_through(SourceKind, std::string_view through, std::size_t) {
  parse_position(through);
  return 0;
}

bool PostgresSourceTables::changes_forgotten_after(SourceKind, std::string_view after) {
  parse_position(after);
  return false;
}

bool PostgresSourceTables::install_change_log() {
  const std::string task = "installing the change order (schema/merchant/postgresql/change_order/)";
  return connection_.in_transaction(task, PostgresConnection::Transaction::write, [&] {
    const bool missing = !has_change_log();
    // The steps name the tables unqualified: they are made in the source schema.
    connection_.run(task, "SELECT set_config('search_path', $1, true)", {sql_name(connection_.source_schema())});
    for (const sqlite::Migration& step : schema::merchant_postgresql_change_order_migrations()) {
      connection_.run_script(task, std::string(step.sql));
    }
    return missing;
  });
}

namespace {

// Products of `sql` with their variants and how often each SKU occurs, in one snapshot.
std::vector<ProductRow> read_catalog(PostgresConnection& connection, const std::string& sql,
                                     std::span<const PgParam> params) {
  const std::string task = fmt::format("reading {}", kProductsTable);
  std::vector<ProductRow> rows = connection.in_transaction(task, PostgresConnection::Transaction::read_snapshot, [&] {
    std::vector<ProductRow> read = collect<ProductRow>(connection, connection.run(task, sql, params));
    const std::vector<std::string> skus = skus_of(read);
    if (skus.empty()) return read;
    const PgParam sku_params[] = {text_array(skus)};
    const PgResult counts = connection.run(
        task, fmt::format("SELECT v.sku, count(*) FROM {} AS v WHERE v.sku = ANY($1::text[]) GROUP BY v.sku",
                          connection.source_table(kVariantsTable)),
        sku_params);
    std::unordered_map<std::string, std::int64_t> by_sku;
    for (int r = 0; r < counts.rows(); ++r) by_sku[counts.text(r, 0)] = std::stoll(counts.text(r, 1));
    count_skus(read, by_sku);
    return read;
  });
  hash_rows(rows);
  return rows;
}

}  // namespace

std::vector<ProductRow> PostgresSourceTables::read_products(std::string_view after_key, std::size_t limit) {
  const std::string sql = select_rows_sql<ProductRow>(connection_, R"(t.reference_id COLLATE "C" > $1::text)") +
                          R"( ORDER BY t.reference_id COLLATE "C" LIMIT $2)";
  const PgParam params[] = {std::string(after_key), std::to_string(limit)};
  return read_catalog(connection_, sql, params);
}

std::vector<ProductRow> PostgresSourceTables::read_products(std::span<const std::string> reference_ids) {
  if (reference_ids.empty()) return {};
  const std::string sql = select_rows_sql<ProductRow>(connection_, "t.reference_id = ANY($1::text[])");
  const PgParam params[] = {text_array(reference_ids)};
  return read_catalog(connection_, sql, params);
}

namespace {

// Whether the catalog keeps its change order: change_xid (xid8) on the products, and where the
// catalog is tables, the triggers that write it when a product or a variant changes (without the
// variants' one, a variant's change would go unseen). Views are trusted to expose it as documented.
constexpr std::string_view kCatalogChangeOrderSql = R"(
SELECT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = to_regclass($1::text) AND a.attname = 'change_xid'
               AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'xid8'::regtype)
   AND NOT EXISTS (SELECT 1 FROM (VALUES (to_regclass($1::text), 'fulfillsync_products_xid'),
                                         (to_regclass($2::text), 'fulfillsync_variants_xid')) AS w(rel, trigger)
                   JOIN pg_class c ON c.oid = w.rel
                   WHERE c.relkind IN ('r', 'p') AND NOT EXISTS (
                     SELECT 1 FROM pg_trigger t WHERE t.tgrelid = w.rel AND t.tgname = w.trigger AND t.tgenabled <> 'D')),
       pg_snapshot_xmin(pg_current_snapshot())::text)";

}  // namespace

std::optional<std::string> PostgresSourceTables::catalog_change_position() {
  const PgResult found =
      connection_.run("looking for the catalog's change order", std::string(kCatalogChangeOrderSql),
                      {connection_.source_table(kProductsTable), connection_.source_table(kVariantsTable)});
  if (found.text(0, 0) != "t") return std::nullopt;
  return found.text(0, 1);
}

SourceTables::CatalogUpgrade PostgresSourceTables::install_catalog_change_order() {
  const std::string task = "installing the catalog's change order (schema/merchant/postgresql/catalog_change_order.sql)";
  return connection_.in_transaction(task, PostgresConnection::Transaction::write, [&] {
    const PgResult tables = connection_.run(
        task, "SELECT count(*) FROM pg_class WHERE oid IN (to_regclass($1::text), to_regclass($2::text)) AND relkind IN ('r', 'p')",
        {connection_.source_table(kProductsTable), connection_.source_table(kVariantsTable)});
    if (tables.integer(0, 0) != 2) return CatalogUpgrade::no_catalog;
    const bool missing = !catalog_change_position();
    // The script names the tables unqualified: they are in the source schema.
    connection_.run(task, "SELECT set_config('search_path', $1, true)", {sql_name(connection_.source_schema())});
    connection_.run_script(task, std::string(schema::merchant_postgresql_catalog_change_order_sql()));
    return missing ? CatalogUpgrade::added : CatalogUpgrade::present;
  });
}

}  // namespace fulfillsync::merchant
