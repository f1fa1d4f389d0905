// PostgresSourceTables against a real PostgreSQL 15 server (testing::PostgresServer): every call of
// SourceTables, the change order by transaction id, and a transaction that commits late.
#include <libpq-fe.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "postgres_fixture.hpp"

namespace fulfillsync::merchant {
namespace {

using PostgresSourceTablesTest = PostgresMerchantTest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(PostgresSourceTablesTest, ReadsRowsWithTheirLinesTypedAndHashed) {
  add_order("A-1", "2026-03-01T10:00:00.123456Z", 2);
  const auto rows = source->read_orders(ReadRange{});
  ASSERT_EQ(rows.size(), 1u);
  const OrderRow& row = rows[0];
  EXPECT_EQ(row.reference_id, "A-1");
  EXPECT_EQ(row.updated_at, "2026-03-01 10:00:00.123456+00");
  EXPECT_EQ(row.change_time, "2026-03-01T10:00:00.123Z");
  EXPECT_EQ(row.order_number, Field::of(std::string("N-A-1")));
  EXPECT_EQ(row.location_id, Field::of(std::int64_t{7}));
  EXPECT_EQ(row.cancel_requested, Field::of(std::int64_t{0}));
  EXPECT_TRUE(row.gift_message.is_null());
  ASSERT_EQ(row.lines.size(), 2u);
  EXPECT_EQ(row.lines[0].line_number, Field::of(std::int64_t{1}));
  EXPECT_EQ(row.lines[1].product_id, Field::of(std::int64_t{102}));
  EXPECT_EQ(row.lines[1].product_name, Field::of(std::string("widget")));
  EXPECT_EQ(row.content_hash, content_hash(row));

  // The hash follows the content, not updated_at.
  app->exec("UPDATE fulfillsync_orders SET updated_at = '2026-03-02T00:00:00Z' WHERE reference_id = 'A-1'");
  EXPECT_EQ(source->read_orders(ReadRange{}).at(0).content_hash, row.content_hash);
  app->exec("UPDATE fulfillsync_order_lines SET quantity = 5 WHERE order_reference_id = 'A-1' AND line_number = 2");
  EXPECT_NE(source->read_orders(ReadRange{}).at(0).content_hash, row.content_hash);
}

// A page read is BEGIN, the rows, their lines and COMMIT: an optional line column the table may lack
// (return lines' sku) is looked up at the session's first read, not at every page.
TEST_F(PostgresSourceTablesTest, APageCostsTheSameRoundTripsWhateverItsOptionalColumns) {
  app->exec("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id) VALUES ('R-1', 3);"
            "INSERT INTO fulfillsync_return_lines VALUES ('R-1', 1, 55, 2, 'Restock');");
  std::uint64_t before = connection->round_trips();
  ASSERT_EQ(source->read_returns(ReadRange{}).size(), 1u);
  EXPECT_EQ(connection->round_trips() - before, 5U);
  before = connection->round_trips();
  ASSERT_EQ(source->read_returns(ReadRange{}).size(), 1u);
  EXPECT_EQ(connection->round_trips() - before, 4U);
  before = connection->round_trips();
  ASSERT_EQ(source->read_returns(std::vector<std::string>{"R-1"}).size(), 1u);
  EXPECT_EQ(connection->round_trips() - before, 4U);
}

TEST_F(PostgresSourceTablesTest, ReadsRangesInChangeTimeThenKeyOrder) {
  add_order("B", "2026-03-01T10:00:00.000Z");
  add_order("A", "2026-03-01T10:00:00.000400Z");  // the same millisecond: ordered by key
  add_order("C", "2026-03-01T09:00:00Z");
  add_order("a", "2026-03-01T10:00:00Z");  // "C" collation: after "B"
  EXPECT_THAT(keys_of(source->read_orders(ReadRange{})), ElementsAre("C", "A", "B", "a"));
  EXPECT_THAT(keys_of(source->read_orders(ReadRange{.after = {"2026-03-01T10:00:00.000Z", "A"}})),
              ElementsAre("B", "a"));
  EXPECT_THAT(keys_of(source->read_orders(ReadRange{.after = {"2026-03-01T09:00:00.000Z", "C"},
                                                    .through = ChangeCursor{"2026-03-01T10:00:00.000Z", "B"}})),
              ElementsAre("A", "B"));
  EXPECT_THAT(keys_of(source->read_orders(ReadRange{.limit = 2})), ElementsAre("C", "A"));
  EXPECT_EQ(source->count_changes_after(SourceKind::orders, {}), 4);
  EXPECT_EQ(source->count_changes_after(SourceKind::orders, {"2026-03-01T10:00:00.000Z", "A"}), 2);
  EXPECT_EQ(source->count_changes_after(SourceKind::orders, {"2026-03-01T10:00:00.001Z", ""}), 0);
}

TEST_F(PostgresSourceTablesTest, ReadsByKeysLeavingOutAbsentOnes) {
  add_order("A", "2026-03-01T10:00:00Z");
  add_order("B", "2026-03-01T09:00:00Z");
  const std::vector<std::string> keys = {"A", "missing", "B", "it's \"quoted\" \\"};
  EXPECT_THAT(keys_of(source->read_orders(keys)), ElementsAre("B", "A"));
  EXPECT_THAT(source->read_orders(std::span<const std::string>{}), IsEmpty());
}

TEST_F(PostgresSourceTablesTest, ReadsReturnsWithTheirLines) {
  app->exec("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, tracking_number) "
            "VALUES ('R-1', 3, 'TRK');"
            "INSERT INTO fulfillsync_return_lines VALUES ('R-1', 1, 55, 2, 'Restock');");
  const auto rows = source->read_returns(ReadRange{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fulfillment_center_id, Field::of(std::int64_t{3}));
  ASSERT_EQ(rows[0].lines.size(), 1u);
  EXPECT_EQ(rows[0].lines[0].inventory_id, Field::of(std::int64_t{55}));
  EXPECT_EQ(rows[0].lines[0].requested_action, Field::of(std::string("Restock")));
  EXPECT_EQ(rows[0].content_hash, content_hash(rows[0]));
  const std::vector<std::string> keys = {"R-1"};
  EXPECT_EQ(source->read_returns(keys), rows);
}

TEST_F(PostgresSourceTablesTest, OpenRowVersionsHashAsTheRowsReadLeaveOutFinalResultsAndPageByKey) {
  for (const char* key : {"O-1", "O-2", "O-3", "O-4"}) add_order(key, "2026-03-01T10:00:00Z", 2);
  app->exec("UPDATE fulfillsync_orders SET cancel_requested = 1 WHERE reference_id = 'O-4';"
            "INSERT INTO fulfillsync.fulfillsync_order_sync (reference_id, state, remote_status, first_seen_at, "
            "updated_at) VALUES ('O-1', 'created', 'Fulfilled', '', ''), ('O-2', 'created', 'Processing', '', ''), "
            "('O-3', 'cancelled', NULL, '', '');");
  const auto versions = source->open_row_versions(SourceKind::orders, "", 10);
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].reference_id, "O-2");
  EXPECT_EQ(versions[1].reference_id, "O-4");
  EXPECT_EQ(versions[1].cancel_requested, Field::of(std::int64_t{1}));
  const std::vector<std::string> keys = {"O-2", "O-4"};
  const auto rows = source->read_orders(keys);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(versions[i].content_hash, rows[i].content_hash);
    EXPECT_EQ(versions[i].change_time, rows[i].change_time);
  }
  const auto page = source->open_row_versions(SourceKind::orders, "O-2", 1);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].reference_id, "O-4");

  app->exec("INSERT INTO fulfillsync_returns (reference_id) VALUES ('R-1'), ('R-2');"
            "INSERT INTO fulfillsync.fulfillsync_return_sync (reference_id, state, remote_status, first_seen_at, "
            "updated_at) VALUES ('R-1', 'created', 'Completed', '', '')");
  const auto returns = source->open_row_versions(SourceKind::returns, "", 10);
  ASSERT_EQ(returns.size(), 1u);
  EXPECT_EQ(returns[0].reference_id, "R-2");
  EXPECT_TRUE(returns[0].cancel_requested.is_null());
}

TEST_F(PostgresSourceTablesTest, ChangeCounterMovesWithCommitsOnly) {
  const auto before = source->change_counter();
  EXPECT_EQ(source->change_counter(), before);
  source->read_orders(ReadRange{});
  EXPECT_EQ(source->change_counter(), before);
  add_order("A", "2026-03-01T10:00:00Z");
  const auto after = source->change_counter();
  EXPECT_NE(after, before);
  EXPECT_EQ(source->change_counter(), after);
}

TEST_F(PostgresSourceTablesTest, ChecksTheSourceTablesTheirTypesAndPrivileges) {
  EXPECT_THAT(source->check_source_tables(), IsEmpty());

  app->exec("DROP TABLE fulfillsync_watched_inventory; ALTER TABLE fulfillsync_order_lines DROP COLUMN unit_of_measure;"
            "DROP TRIGGER fulfillsync_returns_touch ON fulfillsync_returns;"
            "ALTER TABLE fulfillsync_returns ALTER COLUMN updated_at TYPE text;");
  EXPECT_THAT(source->check_source_tables(),
              ElementsAre("fulfillsync_order_lines.unit_of_measure: no such column",
                          "fulfillsync_returns.updated_at: is text, not timestamptz",
                          "fulfillsync_watched_inventory: no such table or view in schema shop"));

  // A role that may not read the orders: named, with the GRANT that fixes it.
  app->exec("CREATE ROLE reader LOGIN; GRANT USAGE ON SCHEMA shop TO reader;"
            "GRANT SELECT ON ALL TABLES IN SCHEMA shop TO reader; REVOKE SELECT ON fulfillsync_orders FROM reader;");
  auto reader_config = config();
  reader_config.postgresql.connection += " user=reader";
  PostgresConnection reader(reader_config);
  EXPECT_THAT(PostgresSourceTables(reader).check_source_tables(),
              ::testing::Contains("fulfillsync_orders: the daemon's role may not read it (GRANT SELECT ON "
                                  "\"shop\".\"fulfillsync_orders\" TO ...)"));
}

// --- The change order by transaction id

TEST_F(PostgresSourceTablesTest, InstallsTheChangeOrderOnceAndReadsChangesInIt) {
  EXPECT_FALSE(source->has_change_log());
  add_order("OLD", "2026-03-01T10:00:00Z");
  EXPECT_TRUE(source->install_change_log());
  EXPECT_TRUE(source->has_change_log());
  EXPECT_FALSE(source->install_change_log());  // idempotent

  // Rows there before the change order are read from the start.
  ChangedKeys all = source->changes_after(SourceKind::orders, "", 100);
  EXPECT_THAT(all.keys, ElementsAre("OLD"));
  EXPECT_FALSE(all.more);

  const std::string end = source->change_log_end(SourceKind::orders);
  EXPECT_THAT(source->changes_after(SourceKind::orders, end, 100).keys, IsEmpty());
  EXPECT_EQ(source->count_rows_changed_after(SourceKind::orders, end), 0);

  add_order("A", "2026-01-01T00:00:00Z", 2);  // updated_at long past: it decides nothing here
  add_order("B", "2026-03-01T10:00:00Z");
  ChangedKeys changes = source->changes_after(SourceKind::orders, end, 100);
  EXPECT_THAT(changes.keys, ElementsAre("A", "B"));
  EXPECT_EQ(changes.entries, 2);
  EXPECT_FALSE(changes.more);
  EXPECT_EQ(source->count_rows_changed_after(SourceKind::orders, end), 2);
  EXPECT_THAT(source->changes_after(SourceKind::orders, changes.through, 100).keys, IsEmpty());

  // A line changed is a change of its order; returns keep their own order.
  app->exec("UPDATE fulfillsync_order_lines SET quantity = 9 WHERE order_reference_id = 'A' AND line_number = 1");
  EXPECT_THAT(source->changes_after(SourceKind::orders, changes.through, 100).keys, ElementsAre("A"));
  EXPECT_THAT(source->changes_after(SourceKind::returns, changes.through, 100).keys, IsEmpty());
  app->exec("INSERT INTO fulfillsync_returns (reference_id) VALUES ('R-1')");
  EXPECT_THAT(source->changes_after(SourceKind::returns, changes.through, 100).keys, ElementsAre("R-1"));

  // Nothing is kept apart from the rows: nothing to delete, nothing forgotten.
  EXPECT_EQ(source->forget_changes_through(SourceKind::orders, changes.through, 100), 0);
  EXPECT_FALSE(source->changes_forgotten_after(SourceKind::orders, end));
  EXPECT_THROW(source->changes_after(SourceKind::orders, "not a position", 10), MerchantDatabaseError);
}

// One transaction writing more rows than a page: paged by (transaction id, key), never looping.
TEST_F(PostgresSourceTablesTest, PagesThroughOneLargeTransaction) {
  source->install_change_log();
  const std::string end = source->change_log_end(SourceKind::orders);
  std::string batch = "BEGIN;";
  for (int i = 0; i < 7; ++i) batch += order_sql(fmt::format("K-{}", i), "2026-03-01T10:00:00Z", 0);
  app->exec(batch + "COMMIT;");
  std::vector<std::string> keys;
  std::string position = end;
  for (int page = 0; page < 10; ++page) {
    ChangedKeys changes = source->changes_after(SourceKind::orders, position, 3);
    keys.insert(keys.end(), changes.keys.begin(), changes.keys.end());
    position = changes.through;
    if (!changes.more) break;
  }
  EXPECT_THAT(keys, ElementsAre("K-0", "K-1", "K-2", "K-3", "K-4", "K-5", "K-6"));
  EXPECT_THAT(source->changes_after(SourceKind::orders, position, 3).keys, IsEmpty());
}

// A transaction holds an order uncommitted while newer orders are committed and read; once it
// commits, the next read returns it, though its updated_at is older than theirs.
TEST_F(PostgresSourceTablesTest, ALateCommitIsReadOnceItCommits) {
  source->install_change_log();
  std::string position = source->change_log_end(SourceKind::orders);

  Client late(conninfo());
  late.exec("BEGIN;" + order_sql("LATE", "2026-03-01T09:00:00Z"));
  add_order("NEW-1", "2026-03-01T10:00:00Z");
  add_order("NEW-2", "2026-03-01T10:00:01Z");

  ChangedKeys first = source->changes_after(SourceKind::orders, position, 100);
  EXPECT_THAT(first.keys, ElementsAre("NEW-1", "NEW-2"));
  position = first.through;
  EXPECT_THAT(source->changes_after(SourceKind::orders, position, 100).keys, ElementsAre("NEW-1", "NEW-2"))
      << "read again (the open transaction holds the horizon back): the daemon skips them by content hash";

  late.exec("COMMIT");
  ChangedKeys second = source->changes_after(SourceKind::orders, position, 100);
  EXPECT_THAT(second.keys, ::testing::Contains("LATE"));
  EXPECT_THAT(source->changes_after(SourceKind::orders, second.through, 100).keys, IsEmpty());

  // By updated_at alone, read past NEW-2, it is behind the cursor: what look_back has to cover.
  EXPECT_THAT(keys_of(source->read_orders(ReadRange{.after = {"2026-03-01T10:00:01.000Z", "NEW-2"}})), IsEmpty());
}

// A transaction that commits between the pages of one read is read by the next one.
TEST_F(PostgresSourceTablesTest, ALateCommitBetweenPagesIsNotSkipped) {
  source->install_change_log();
  const std::string end = source->change_log_end(SourceKind::orders);
  Client late(conninfo());
  late.exec("BEGIN; SELECT pg_current_xact_id();");  // takes its id now, before the others
  for (int i = 0; i < 4; ++i) add_order(fmt::format("N-{}", i), "2026-03-01T10:00:00Z", 0);

  ChangedKeys page = source->changes_after(SourceKind::orders, end, 2);
  EXPECT_THAT(page.keys, ElementsAre("N-0", "N-1"));
  ASSERT_TRUE(page.more);
  late.exec(order_sql("LATE", "2026-03-01T09:00:00Z") + "COMMIT;");
  std::vector<std::string> rest;
  std::string position = page.through;
  do {
    page = source->changes_after(SourceKind::orders, position, 2);
    rest.insert(rest.end(), page.keys.begin(), page.keys.end());
    position = page.through;
  } while (page.more);
  EXPECT_THAT(rest, ElementsAre("N-2", "N-3"));
  EXPECT_THAT(source->changes_after(SourceKind::orders, position, 100).keys, ::testing::Contains("LATE"));
}

// --- The catalog's change order (schema/merchant/postgresql/catalog_change_order.sql)

std::string product_sql(const std::string& reference_id) {
  return fmt::format("INSERT INTO fulfillsync_products (reference_id, name) VALUES ('{0}', 'Product {0}');"
                     "INSERT INTO fulfillsync_variants (sku, product_reference_id, name) VALUES ('{0}-1', '{0}', 'V');",
                     reference_id);
}

TEST_F(PostgresSourceTablesTest, TheCatalogsChangeOrderIsInstalledOnceAndReadsALateCommit) {
  using CatalogUpgrade = SourceTables::CatalogUpgrade;
  source->install_change_log();
  app->exec(product_sql("OLD"));
  EXPECT_FALSE(source->catalog_change_position()) << "without it, no position: every pass compares the catalog";
  EXPECT_EQ(source->install_catalog_change_order(), CatalogUpgrade::added);
  EXPECT_EQ(source->install_catalog_change_order(), CatalogUpgrade::present);  // idempotent
  const std::optional<std::string> start = source->catalog_change_position();
  ASSERT_TRUE(start);
  EXPECT_THAT(source->changes_after(SourceKind::products, "", 100).keys, ElementsAre("OLD"));
  EXPECT_THAT(source->changes_after(SourceKind::products, *start, 100).keys, IsEmpty());

  // A transaction holds a product uncommitted while a newer one is committed and read.
  Client late(conninfo());
  late.exec("BEGIN;" + product_sql("LATE"));
  app->exec(product_sql("NEW"));
  ChangedKeys first = source->changes_after(SourceKind::products, *start, 100);
  EXPECT_THAT(first.keys, ElementsAre("NEW"));
  late.exec("COMMIT");
  ChangedKeys second = source->changes_after(SourceKind::products, first.through, 100);
  EXPECT_THAT(second.keys, ::testing::Contains("LATE"));
  EXPECT_THAT(source->changes_after(SourceKind::products, second.through, 100).keys, IsEmpty());

  // A variant changed, added or deleted is a change of its product; orders keep their own order.
  app->exec("UPDATE fulfillsync_variants SET name = 'W' WHERE sku = 'OLD-1'");
  ChangedKeys edited = source->changes_after(SourceKind::products, second.through, 100);
  EXPECT_THAT(edited.keys, ElementsAre("OLD"));
  EXPECT_THAT(source->changes_after(SourceKind::orders, second.through, 100).keys, IsEmpty());
  app->exec("DELETE FROM fulfillsync_variants WHERE sku = 'NEW-1'");
  EXPECT_THAT(source->changes_after(SourceKind::products, edited.through, 100).keys, ElementsAre("NEW"));

  // Without the variants' trigger a variant's change would go unseen: no position then.
  app->exec("DROP TRIGGER fulfillsync_variants_xid ON fulfillsync_variants");
  EXPECT_FALSE(source->catalog_change_position());
  EXPECT_EQ(source->install_catalog_change_order(), CatalogUpgrade::added);
  EXPECT_TRUE(source->catalog_change_position());

  // A shop without a catalog: nothing to install, and nothing fails.
  app->exec("DROP TABLE fulfillsync_variants; DROP TABLE fulfillsync_products");
  EXPECT_EQ(source->install_catalog_change_order(), CatalogUpgrade::no_catalog);
  EXPECT_FALSE(source->catalog_change_position());
}

TEST_F(PostgresSourceTablesTest, ChecksTheCatalogTablesAndPrivilegesNamingEachTable) {
  EXPECT_THAT(source->check_catalog_tables(), IsEmpty());
  app->exec("ALTER TABLE fulfillsync_variants DROP COLUMN gtin");
  EXPECT_THAT(source->check_catalog_tables(), ElementsAre("fulfillsync_variants.gtin: no such column"));

  app->exec("CREATE ROLE catalog_reader LOGIN; GRANT USAGE ON SCHEMA shop TO catalog_reader;"
            "GRANT SELECT ON ALL TABLES IN SCHEMA shop TO catalog_reader;"
            "REVOKE SELECT ON fulfillsync_products FROM catalog_reader;");
  auto reader_config = config();
  reader_config.postgresql.connection += " user=catalog_reader";
  PostgresConnection reader(reader_config);
  EXPECT_THAT(PostgresSourceTables(reader).check_catalog_tables(),
              ElementsAre("fulfillsync_products: the daemon's role may not read it (GRANT SELECT ON "
                          "\"shop\".\"fulfillsync_products\" TO ...)",
                          "fulfillsync_variants.gtin: no such column"));

  app->exec("DROP TABLE fulfillsync_variants");
  EXPECT_THAT(source->check_catalog_tables(), ElementsAre("fulfillsync_variants: no such table or view in schema shop"));
  EXPECT_THAT(source->check_source_tables(), IsEmpty()) << "the orders' contract does not include the catalog";
}

// --- Failures are MerchantDatabaseError with the server's message

TEST_F(PostgresSourceTablesTest, AStatementWaitingPastTheTimeoutFailsWithTheServersMessage) {
  PostgresConnection impatient(config(std::chrono::milliseconds(200)));
  PostgresSourceTables tables(impatient);
  Client locker(conninfo());
  locker.exec("BEGIN; LOCK TABLE fulfillsync_orders IN ACCESS EXCLUSIVE MODE;");
  try {
    tables.read_orders(ReadRange{});
    ADD_FAILURE() << "read through an exclusive lock";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reading fulfillsync_orders: ERROR:  canceling statement due to statement timeout"));
    EXPECT_THAT(e.what(), HasSubstr("(SQLSTATE 57014)"));
    EXPECT_THAT(e.what(), HasSubstr("merchant database postgresql host="));
  }
  locker.exec("ROLLBACK");
  // The failed transaction was rolled back: the connection serves the next call.
  EXPECT_THAT(tables.read_orders(ReadRange{}), IsEmpty());
}

TEST_F(PostgresSourceTablesTest, AServerThatCannotBeReachedIsAClearError) {
  auto unreachable = config();
  unreachable.postgresql.connection = "host=127.0.0.1 port=1 dbname=shop connect_timeout=2";
  try {
    PostgresConnection never(unreachable);
    ADD_FAILURE() << "connected to port 1";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("merchant database postgresql of merchant.postgresql.connection: cannot connect: "));
    EXPECT_THAT(e.what(), HasSubstr("Connection refused"));
  }
}

}  // namespace
}  // namespace fulfillsync::merchant
