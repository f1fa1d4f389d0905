#include <algorithm>
#include <set>

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <gmock/gmock.h>

#include "fulfillsync/merchant/request_mapping.hpp"
#include "merchant_fixture.hpp"

namespace fulfillsync::merchant {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

std::int64_t count(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement query(db, sql);
  query.executeStep();
  return query.getColumn(0).getInt64();
}

std::vector<std::string> keys(const std::vector<OrderRow>& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows) out.push_back(row.reference_id);
  return out;
}

TEST_F(MerchantDatabaseTest, CreatesTheResultTablesWithThePrefix) {
  auto db = open("shop_sync_");
  EXPECT_EQ(db->result_schema_version(), 1);
  EXPECT_TRUE(app.tableExists("shop_sync_order_sync"));
  EXPECT_TRUE(app.tableExists("shop_sync_return_sync"));
  EXPECT_TRUE(app.tableExists("shop_sync_schema_migrations"));
  EXPECT_FALSE(app.tableExists("fulfillsync_order_sync"));
}

TEST_F(MerchantDatabaseTest, MigratingAgainChangesNothing) {
  open().reset();
  auto db = open();
  EXPECT_EQ(db->result_schema_version(), 1);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_schema_migrations"), 1);
}

TEST_F(MerchantDatabaseTest, PrefixesKeepTheirOwnVersions) {
  open("a_");
  app.exec("DROP TABLE a_order_sync");  // a_ is damaged; b_ must not care
  auto db = open("b_");
  EXPECT_EQ(db->result_schema_version(), 1);
  EXPECT_TRUE(app.tableExists("b_order_sync"));
}

TEST_F(MerchantDatabaseTest, UpgradesFromAnEmptyVersionTable) {
  // A version table with no version: what an older daemon that never migrated would leave.
  app.exec("CREATE TABLE fulfillsync_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
           "applied_at TEXT NOT NULL DEFAULT '')");
  auto db = open();
  EXPECT_EQ(db->result_schema_version(), 1);
  EXPECT_TRUE(app.tableExists("fulfillsync_order_sync"));
}

TEST_F(MerchantDatabaseTest, RefusesResultTablesFromANewerDaemon) {
  open().reset();
  app.exec("INSERT INTO fulfillsync_schema_migrations (version, name) VALUES (2, 'from the future')");
  try {
    open();
    FAIL() << "opened";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 2"));
  }
}

TEST_F(MerchantDatabaseTest, UnmanagedResultTablesMustBeThereAlready) {
  auto unmanaged = config();
  unmanaged.manage_result_tables = false;
  try {
    SqliteMerchantDatabase db(unmanaged);
    FAIL() << "opened";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("are at schema version 0, this fulfillsync writes version 1"));
  }
  EXPECT_FALSE(app.tableExists("fulfillsync_order_sync"));  // nothing created
  open().reset();
  SqliteMerchantDatabase db(unmanaged);
  EXPECT_EQ(db.result_schema_version(), 1);
}

TEST_F(MerchantDatabaseTest, ReadsRowsWithTheirLines) {
  add_order("A-1", "2026-03-01T10:00:00.000Z", 2);
  add_order("A-2", "2026-03-01T09:00:00.000Z", 1);
  app.exec("UPDATE fulfillsync_orders SET gift_message = 'Enjoy', location_id = 8, "
           "updated_at = '2026-03-01T10:00:00.500Z' WHERE reference_id = 'A-1'");
  auto db = open();
  const auto rows = db->read_orders(ReadRange{});
  ASSERT_THAT(keys(rows), ElementsAre("A-2", "A-1"));
  const OrderRow& row = rows[1];
  EXPECT_EQ(row.updated_at, "2026-03-01T10:00:00.500Z");
  EXPECT_EQ(row.gift_message, Field::of("Enjoy"));
  EXPECT_EQ(row.location_id, Field::of(std::int64_t{8}));
  EXPECT_TRUE(row.order_number.is_null());
  ASSERT_EQ(row.lines.size(), 2u);
  EXPECT_EQ(row.lines[1].line_number, Field::of(std::int64_t{2}));
  EXPECT_EQ(row.lines[1].quantity, Field::of(std::int64_t{2}));
  EXPECT_EQ(row.content_hash.size(), 64u);

  const std::vector<std::string> wanted = {"A-1", "missing"};
  EXPECT_THAT(keys(db->read_orders(wanted)), ElementsAre("A-1"));
}

TEST_F(MerchantDatabaseTest, CursorPagingOverEqualTimestampsLosesNothing) {
  std::vector<std::string> expected;
  for (int i = 0; i < 40; ++i) {
    // Most rows share an instant; a batch boundary falls inside each group.
    const std::string at = i < 30 ? "2026-03-01T10:00:00.000Z" : "2026-03-01T10:00:01.000Z";
    const std::string key = fmt::format("R-{:03}", (i * 17) % 40);
    add_order(key, at);
  }
  auto db = open();
  std::vector<std::string> seen;
  ReadRange range{.limit = 7};
  for (;;) {
    const auto rows = db->read_orders(range);
    for (const auto& row : rows) seen.push_back(row.updated_at + "/" + row.reference_id);
    if (rows.size() < range.limit) break;
    range.after = {rows.back().updated_at, rows.back().reference_id};
  }
  ASSERT_EQ(seen.size(), 40u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
}

TEST_F(MerchantDatabaseTest, ReadRangeHasAnInclusiveUpperBound) {
  for (int i = 1; i <= 5; ++i) add_order(fmt::format("B-{}", i), fmt::format("2026-03-01T10:00:0{}.000Z", i));
  auto db = open();
  const auto rows = db->read_orders(ReadRange{.after = {"2026-03-01T10:00:02.000Z", "B-2"},
                                              .through = ChangeCursor{"2026-03-01T10:00:04.000Z", "B-4"}});
  EXPECT_THAT(keys(rows), ElementsAre("B-3", "B-4"));
}

TEST_F(MerchantDatabaseTest, CountsTheRowsAfterACursor) {
  for (int i = 1; i <= 5; ++i) add_order(fmt::format("C-{}", i), fmt::format("2026-03-01T10:00:0{}.000Z", i));
  add_order("C-0", "2026-03-01T10:00:02.000Z");
  auto db = open();
  EXPECT_EQ(db->count_changes_after(SourceKind::orders, {}), 6);
  EXPECT_EQ(db->count_changes_after(SourceKind::orders, {"2026-03-01T10:00:02.000Z", "C-0"}), 4);
  EXPECT_EQ(db->count_changes_after(SourceKind::orders, {"2026-03-01T10:00:02.000Z", ""}), 5);
  EXPECT_EQ(db->count_changes_after(SourceKind::returns, {}), 0);
}

TEST_F(MerchantDatabaseTest, ContentHashIsStableAndFollowsEveryColumnAndLine) {
  add_order("H-1", "2026-03-01T10:00:00.000Z", 2);
  auto db = open();
  const auto hash = [&] { return db->read_orders(std::vector<std::string>{"H-1"}).at(0).content_hash; };
  const std::string original = hash();
  EXPECT_EQ(hash(), original);

  // updated_at alone is not content.
  app.exec("UPDATE fulfillsync_orders SET updated_at = '2026-03-02T00:00:00.000Z'");
  EXPECT_EQ(hash(), original);

  // Each change is committed (the connector reads committed data), hashed, then undone.
  app.exec("CREATE TABLE saved_orders AS SELECT * FROM fulfillsync_orders");
  app.exec("CREATE TABLE saved_lines AS SELECT * FROM fulfillsync_order_lines");
  const auto hash_after = [&](const std::string& sql) {
    app.exec(sql);
    const std::string changed = hash();
    app.exec("DELETE FROM fulfillsync_orders; INSERT INTO fulfillsync_orders SELECT * FROM saved_orders;"
             "DELETE FROM fulfillsync_order_lines; INSERT INTO fulfillsync_order_lines SELECT * FROM saved_lines");
    return changed;
  };
  std::set<std::string> hashes = {original};
  for (const auto& column : order_columns()) {
    const auto changed = hash_after(
        fmt::format("UPDATE fulfillsync_orders SET \"{0}\" = coalesce(\"{0}\", '') || 'x'", column.name));
    EXPECT_TRUE(hashes.insert(changed).second) << column.name << " does not change the hash";
  }
  EXPECT_EQ(hash(), original);
  for (const auto& column : order_line_columns()) {
    if (column.name == "line_number") continue;
    const auto changed = hash_after(fmt::format(
        "UPDATE fulfillsync_order_lines SET \"{0}\" = coalesce(\"{0}\", '') || '7' WHERE line_number = 2",
        column.name));
    EXPECT_TRUE(hashes.insert(changed).second) << column.name << " of a line does not change the hash";
  }
  EXPECT_TRUE(hashes.insert(hash_after("DELETE FROM fulfillsync_order_lines WHERE line_number = 2")).second)
      << "removing a line";
  EXPECT_TRUE(hashes.insert(hash_after("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, "
                                       "product_id, quantity) VALUES ('H-1', 3, 3001, 1)"))
                  .second)
      << "adding a line";
  EXPECT_EQ(hash(), original);
}

TEST(ContentHash, TellsTypesAndLinesApart) {
  OrderRow row;
  row.reference_id = "H-1";
  row.zip_code = Field::of(std::int64_t{12345});
  const std::string as_integer = content_hash(row);
  row.zip_code = Field::of("12345");
  EXPECT_NE(content_hash(row), as_integer);
  // A value cannot spill into the next column.
  OrderRow a, b;
  a.address1 = Field::of("1;address2=t0:");
  b.address1 = Field::of("1");
  EXPECT_NE(content_hash(a), content_hash(b));
  a = b;
  a.lines.resize(1);
  EXPECT_NE(content_hash(a), content_hash(b));
}

TEST_F(MerchantDatabaseTest, DataVersionMovesOnlyForOtherConnectionsCommits) {
  auto db = open();
  const auto first = db->change_counter();
  EXPECT_EQ(db->change_counter(), first);
  db->write_results(SourceKind::orders, std::vector<SyncResult>{{.reference_id = "X", .state = "pending"}});
  EXPECT_EQ(db->change_counter(), first);  // our own write
  add_order("D-1", "2026-03-01T10:00:00.000Z");
  EXPECT_NE(db->change_counter(), first);
}

TEST_F(MerchantDatabaseTest, ResultWritesAreBatchedUpsertsAndIdempotent) {
  auto db = open();
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  std::vector<SyncResult> results = {
      {.reference_id = "O-1", .state = "created", .remote_id = 101, .remote_status = "Processing", .attempts = 1,
       .content_hash = "aa", .updated_at = t0, .remote_created_at = t0},
      {.reference_id = "O-2", .state = "rejected", .last_error = "fulfillsync_orders: city is required, found NULL",
       .attempts = 0, .updated_at = t0},
      {.reference_id = "O-3", .state = "in_flight", .attempts = 1, .updated_at = t0},
  };
  db->write_results(SourceKind::orders, results);
  db->write_results(SourceKind::orders, results);
  EXPECT_THAT(db->count_results_by_state(SourceKind::orders),
              ElementsAre(Pair("created", 1), Pair("in_flight", 1), Pair("rejected", 1)));
  auto stored = db->read_result(SourceKind::orders, "O-1");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->first_seen_at, t0);
  stored->first_seen_at.reset();
  EXPECT_EQ(*stored, results[0]);

  // Later: O-3 is created, O-1 cancelled. first_seen_at stays; an older replay changes nothing.
  const auto t1 = t0 + std::chrono::seconds(5);
  std::vector<SyncResult> later = {
      {.reference_id = "O-3", .state = "created", .remote_id = 103, .attempts = 1, .updated_at = t1},
      {.reference_id = "O-1", .state = "cancelled", .remote_id = 101, .remote_status = "Cancelled", .attempts = 1,
       .updated_at = t1, .cancel_requested_at = t1, .cancelled_at = t1},
  };
  db->write_results(SourceKind::orders, later);
  db->write_results(SourceKind::orders, results);
  EXPECT_THAT(db->count_results_by_state(SourceKind::orders),
              ElementsAre(Pair("cancelled", 1), Pair("created", 1), Pair("rejected", 1)));
  EXPECT_EQ(db->read_result(SourceKind::orders, "O-1")->first_seen_at, t0);
  EXPECT_EQ(db->read_result(SourceKind::orders, "O-1")->cancelled_at, t1);

  const auto rejected = db->latest_results(SourceKind::orders, "rejected", 10);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].last_error, "fulfillsync_orders: city is required, found NULL");
  EXPECT_FALSE(db->read_result(SourceKind::orders, "nope"));

  db->write_results(SourceKind::returns,
                    std::vector<SyncResult>{
                        {.reference_id = "RMA-1", .state = "created", .remote_id = 9, .updated_at = t0}});
  EXPECT_THAT(db->count_results_by_state(SourceKind::returns), ElementsAre(Pair("created", 1)));
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_order_sync"), 3);
}

TEST_F(MerchantDatabaseTest, ReadsDuringTheApplicationsWriteTransactionAndTimesOutWritingBehindIt) {
  add_order("W-1", "2026-03-01T10:00:00.000Z");
  auto fast = config();
  fast.sqlite.busy_timeout = std::chrono::milliseconds(50);
  SqliteMerchantDatabase db(fast);
  SQLite::Transaction held(app, SQLite::TransactionBehavior::IMMEDIATE);
  add_order("W-2", "2026-03-01T10:00:01.000Z");
  EXPECT_THAT(keys(db.read_orders(ReadRange{})), ElementsAre("W-1"));  // WAL: the committed snapshot
  EXPECT_THROW(db.write_results(SourceKind::orders, std::vector<SyncResult>{{.reference_id = "W-1", .state = "x"}}),
               MerchantDatabaseError);
  held.commit();
  EXPECT_THAT(keys(db.read_orders(ReadRange{})), ElementsAre("W-1", "W-2"));
}

TEST_F(MerchantDatabaseTest, WatchedInventoryIds) {
  app.exec("INSERT INTO fulfillsync_watched_inventory VALUES (7005), (7001)");
  EXPECT_THAT(open()->watched_inventory_ids(), ElementsAre(7001, 7005));
}

TEST_F(MerchantDatabaseTest, ChecksTheSourceTables) {
  auto db = open();
  EXPECT_THAT(db->check_source_tables(), IsEmpty());
  app.exec("ALTER TABLE fulfillsync_returns DROP COLUMN tracking_number");
  app.exec("DROP TABLE fulfillsync_watched_inventory");
  EXPECT_THAT(db->check_source_tables(),
              ElementsAre(HasSubstr("fulfillsync_returns.tracking_number: no such column"),
                          HasSubstr("fulfillsync_watched_inventory.inventory_id: no such table")));
}

TEST_F(MerchantDatabaseTest, MissingFileIsAClearError) {
  auto missing = config();
  missing.sqlite.path = dir / "nope.db";
  EXPECT_THROW(SqliteMerchantDatabase db(missing), MerchantDatabaseError);
}

}  // namespace
}  // namespace fulfillsync::merchant

namespace fulfillsync::merchant {
namespace {

// The README's example of a shop mapping its own tables onto the contract with views works as written.
TEST(ContractViews, TheDocumentedExampleReadsAndMaps) {
  const std::string readme = testing::read_file(testing::source_path("schema/merchant/README.md"));
  std::vector<std::string> blocks;
  for (std::size_t at = readme.find("```sql\n"); at != std::string::npos; at = readme.find("```sql\n", at)) {
    at += 7;
    const std::size_t end = readme.find("```", at);
    blocks.push_back(readme.substr(at, end - at));
    at = end + 3;
  }
  ASSERT_GE(blocks.size(), 2u);
  testing::TempDir dir;
  {
    SQLite::Database shop((dir / "shop.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    shop.exec(blocks[0] + blocks[1]);
    shop.exec("INSERT INTO shop_customer VALUES (1, 'Ada Lovelace', 'ada@example.com', '12 St James''s Square', NULL, "
              "'London', NULL, 'SW1Y 4JH', 'GB');"
              "INSERT INTO shop_order VALUES (42, '#42', 'cancelled', '2026-03-01', '2026-03-01 10:00:00', 1, NULL, "
              "4990);"
              "INSERT INTO shop_order_item VALUES (42, 1, 'TSHIRT-M', 'T-Shirt M', 2, NULL);");
  }
  config::MerchantConfig config;
  config.sqlite.path = dir / "shop.db";
  SqliteMerchantDatabase db(config);
  EXPECT_THAT(db.check_source_tables(), IsEmpty());
  const auto rows = db.read_orders(ReadRange{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].updated_at, "2026-03-01T10:00:00.000Z");
  EXPECT_TRUE(cancel_requested(rows[0]));
  const auto mapped = map_order(rows[0]);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  EXPECT_EQ(mapped.request->reference_id, "42");
  EXPECT_EQ(mapped.request->financials->total_price, api::Money{"49.90"});
  EXPECT_EQ(mapped.request->products.at(0).reference_id, "TSHIRT-M");
}

}  // namespace
}  // namespace fulfillsync::merchant
