#include "postgres_sync_results.hpp"

#include <fmt/format.h>

#include "fulfillsync/schema/migrations.hpp"
#include "result_migrations.hpp"
#include "result_rows.hpp"

namespace fulfillsync::merchant {
namespace {

std::vector<SyncResult> read_results(const PgResult& rows, SourceKind kind) {
  std::vector<SyncResult> results;
  for (int r = 0; r < rows.rows(); ++r) {
    results.push_back(result_from_columns(kind, [&](int i) { return rows.optional_text(r, i); }));
  }
  return results;
}

}  // namespace

namespace {

// One transaction in one round trip (RowUpsert's statements of many rows), written as one row after
// the other would be, a row named twice included.
std::vector<std::vector<Named>> result_rows(SourceKind kind, std::span<const SyncResult> results) {
  std::vector<std::vector<Named>> rows;
  rows.reserve(results.size());
  for (const SyncResult& result : results) rows.push_back(result_row(kind, result));
  return rows;
}

}  // namespace

PgUpsert& PostgresSyncResults::upsert(SourceKind kind) {
  std::unique_ptr<PgUpsert>& made = upserts_[static_cast<std::size_t>(kind)];
  if (!made) made = std::make_unique<PgUpsert>(connection_, connection_.result_table(kind), result_upsert_rules());
  return *made;
}

void PostgresSyncResults::write_results(SourceKind kind, std::span<const SyncResult> results) {
  if (results.empty()) return;
  upsert(kind).write_in_one_round_trip(result_rows(kind, results));
}

boost::asio::awaitable<void> PostgresSyncResults::write_results_async(SourceKind kind,
                                                                      std::span<const SyncResult> results) {
  if (results.empty()) co_return;
  const std::vector<std::vector<Named>> rows = result_rows(kind, results);
  co_await upsert(kind).write_in_one_round_trip_async(rows);
}

std::map<std::string, std::int64_t> PostgresSyncResults::count_results_by_state(SourceKind kind) {
  const std::string table = connection_.result_table(kind);
  const PgResult rows =
      connection_.run(fmt::format("reading {}", table), fmt::format("SELECT state, count(*) FROM {} GROUP BY state", table));
  std::map<std::string, std::int64_t> counts;
  for (int r = 0; r < rows.rows(); ++r) counts[rows.text(r, 0)] = rows.integer(r, 1);
  return counts;
}

std::vector<SyncResult> PostgresSyncResults::latest_results(SourceKind kind, std::string_view state,
                                                            std::size_t limit) {
  const std::string table = connection_.result_table(kind);
  return read_results(
      connection_.run(fmt::format("reading {}", table),
                      fmt::format(R"(SELECT {} FROM {} WHERE state = $1 ORDER BY updated_at DESC, reference_id COLLATE "C" LIMIT $2)",
                                  result_columns(kind), table),
                      {std::string(state), std::to_string(limit)}),
      kind);
}

std::vector<SyncResult> PostgresSyncResults::results_after(SourceKind kind, std::string_view after_reference_id,
                                                           std::size_t limit) {
  const std::string table = connection_.result_table(kind);
  return read_results(
      connection_.run(fmt::format("reading {}", table),
                      fmt::format(R"(SELECT {} FROM {} WHERE reference_id COLLATE "C" > $1 ORDER BY reference_id COLLATE "C" LIMIT $2)",
                                  result_columns(kind), table),
                      {std::string(after_reference_id), std::to_string(limit)}),
      kind);
}

std::optional<SyncResult> PostgresSyncResults::read_result(SourceKind kind, std::string_view reference_id) {
  const std::string table = connection_.result_table(kind);
  auto results = read_results(
      connection_.run(fmt::format("reading {}", table),
                      fmt::format("SELECT {} FROM {} WHERE reference_id = $1", result_columns(kind), table),
                      {std::string(reference_id)}),
      kind);
  if (results.empty()) return std::nullopt;
  return std::move(results.front());
}

std::vector<SyncResult> PostgresSyncResults::cancel_mismatches(std::size_t limit) {
  const std::string table = connection_.result_table(SourceKind::orders);
  // As SQLite's: only while the merchant's row still asks for the cancel (1, or true where the column
  // is a boolean), and a `cancelled` row only once the provider changed its status after the cancel.
  // Times are the contract's UTC text: compared as text, they compare as times.
  return read_results(
      connection_.run(
          fmt::format("reading {}", table),
          fmt::format("SELECT {0} FROM {1} AS r WHERE remote_id IS NOT NULL AND remote_status IS NOT NULL AND "
                      "remote_status <> 'Cancelled' AND (state = 'cancel_rejected' OR (state = 'cancelled' AND "
                      "remote_updated_at IS NOT NULL AND (cancelled_at IS NULL OR remote_updated_at > cancelled_at))) "
                      "AND EXISTS (SELECT 1 FROM {2} AS o WHERE o.reference_id = r.reference_id AND "
                      "o.cancel_requested::text IN ('1', 'true')) "
                      R"(ORDER BY reference_id COLLATE "C" LIMIT $1)",
                      result_columns(SourceKind::orders), table, connection_.source_table(kOrdersTable)),
          {std::to_string(limit)}),
      SourceKind::orders);
}

namespace {

constexpr std::string_view kPrepareTask = "preparing the result tables (schema/merchant/postgresql/results/)";

std::string version_table(PostgresConnection& connection, const ResultMigrations& migrations) {
  return fmt::format("{}.{}", sql_name(connection.result_schema()), sql_name(migrations.version_table()));
}

int read_version(PostgresConnection& connection, const ResultMigrations& migrations) {
  const PgResult exists = connection.run(kPrepareTask, "SELECT to_regclass($1::text) IS NOT NULL",
                                         {version_table(connection, migrations)});
  if (exists.text(0, 0) != "t") return 0;
  return static_cast<int>(
      connection.run(kPrepareTask, fmt::format("SELECT coalesce(max(version), 0) FROM {}", version_table(connection, migrations)))
          .integer(0, 0));
}

}  // namespace

int postgres_result_schema_version(PostgresConnection& connection) {
  const ResultMigrations migrations(connection.prefix(), schema::merchant_postgresql_result_migrations());
  return read_version(connection, migrations);
}

void prepare_postgres_result_tables(PostgresConnection& connection, bool manage) {
  const ResultMigrations migrations(connection.prefix(), schema::merchant_postgresql_result_migrations());
  const int latest = static_cast<int>(migrations.steps().size());
  const std::string where = fmt::format("the result tables (schema {}, prefix {})", connection.result_schema(),
                                        connection.prefix());
  if (!manage) {
    const int version = read_version(connection, migrations);
    if (version != latest) {
      throw MerchantDatabaseError(fmt::format(
          "merchant database {}: {} are at schema version {}, this fulfillsync writes version {}; apply "
          "schema/merchant/postgresql/results/*.sql with the prefix, or set merchant.manage_result_tables: true",
          connection.describe(), where, version, latest));
    }
    return;
  }
  connection.in_transaction(kPrepareTask, PostgresConnection::Transaction::write, [&] {
    // Created only when missing: CREATE SCHEMA needs a privilege that a role owning it already may lack.
    const PgResult schema_exists =
        connection.run(kPrepareTask, "SELECT to_regnamespace($1::text) IS NOT NULL", {sql_name(connection.result_schema())});
    if (schema_exists.text(0, 0) != "t") {
      connection.run_script(kPrepareTask, fmt::format("CREATE SCHEMA {}", sql_name(connection.result_schema())));
    }
    const std::string versions = version_table(connection, migrations);
    connection.run_script(kPrepareTask, fmt::format("CREATE TABLE IF NOT EXISTS {} (version integer PRIMARY KEY, name "
                                                    "text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
                                                    versions));
    // Two daemons starting at once migrate one after the other.
    connection.run_script(kPrepareTask, fmt::format("LOCK TABLE {} IN EXCLUSIVE MODE", versions));
    const int version = read_version(connection, migrations);
    if (version > latest) {
      throw MerchantDatabaseError(fmt::format("merchant database {}: {} are at schema version {}, newer than this "
                                              "fulfillsync writes ({}): upgrade fulfillsync",
                                              connection.describe(), where, version, latest));
    }
    // The steps name their tables unqualified: they are made in the result schema.
    connection.run(kPrepareTask, "SELECT set_config('search_path', $1, true)", {sql_name(connection.result_schema())});
    for (const sqlite::Migration& step : migrations.steps()) {
      if (step.version <= version) continue;
      connection.run_script(kPrepareTask, std::string(step.sql));
      connection.run(kPrepareTask, fmt::format("INSERT INTO {} (version, name) VALUES ($1, $2)", versions),
                     {std::to_string(step.version), std::string(step.name)});
    }
  });
}

}  // namespace fulfillsync::merchant
