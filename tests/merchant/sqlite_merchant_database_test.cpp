#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <set>

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <gmock/gmock.h>

#include "canonical_row.hpp"
#include "fulfillsync/daemon/mapping/request_mapping.hpp"
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
  EXPECT_EQ(db->result_schema_version(), 4);
  for (const char* table : {"order_sync", "return_sync", "shipments", "shipment_items", "tracking", "inventory_lots",
                            "shipment_timeline", "variant_sync", "product_sync"}) {
    EXPECT_TRUE(app.tableExists(fmt::format("shop_sync_{}", table))) << table;
  }
  EXPECT_TRUE(app.tableExists("shop_sync_schema_migrations"));
  EXPECT_FALSE(app.tableExists("fulfillsync_order_sync"));
}

TEST_F(MerchantDatabaseTest, MigratingAgainChangesNothing) {
  open().reset();
  auto db = open();
  EXPECT_EQ(db->result_schema_version(), 4);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_schema_migrations"), 4);
}

TEST_F(MerchantDatabaseTest, PrefixesKeepTheirOwnVersions) {
  open("a_");
  app.exec("DROP TABLE a_order_sync");  // a_ is damaged; b_ must not care
  auto db = open("b_");
  EXPECT_EQ(db->result_schema_version(), 4);
  EXPECT_TRUE(app.tableExists("b_order_sync"));
}

TEST_F(MerchantDatabaseTest, UpgradesFromAnEmptyVersionTable) {
  // A version table with no version: what an older daemon that never migrated would leave.
  app.exec("CREATE TABLE fulfillsync_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
           "applied_at TEXT NOT NULL DEFAULT '')");
  auto db = open();
  EXPECT_EQ(db->result_schema_version(), 4);
  EXPECT_TRUE(app.tableExists("fulfillsync_order_sync"));
}

TEST_F(MerchantDatabaseTest, RefusesResultTablesFromANewerDaemon) {
  open().reset();
  app.exec("INSERT INTO fulfillsync_schema_migrations (version, name) VALUES (5, 'from the future')");
  try {
    open();
    FAIL() << "opened";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 5"));
  }
}

TEST_F(MerchantDatabaseTest, UnmanagedResultTablesMustBeThereAlready) {
  auto unmanaged = config();
  unmanaged.manage_result_tables = false;
  try {
    SqliteMerchantDatabase db(unmanaged);
    FAIL() << "opened";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("are at schema version 0, this fulfillsync writes version 4"));
  }
  EXPECT_FALSE(app.tableExists("fulfillsync_order_sync"));  // nothing created
  open().reset();
  SqliteMerchantDatabase db(unmanaged);
  EXPECT_EQ(db.result_schema_version(), 4);
}

TEST_F(MerchantDatabaseTest, ReadsRowsWithTheirLines) {
  add_order("A-1", "2026-03-01T10:00:00.000Z", 2);
  add_order("A-2", "2026-03-01T09:00:00.000Z", 1);
  app.exec("UPDATE fulfillsync_orders SET gift_message = 'Enjoy', location_id = 8, "
           "updated_at = '2026-03-01T10:00:00.500Z' WHERE reference_id = 'A-1'");
  auto db = open();
  const auto rows = db->source().read_orders(ReadRange{});
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
  EXPECT_THAT(keys(db->source().read_orders(wanted)), ElementsAre("A-1"));
}

TEST_F(MerchantDatabaseTest, AChangeTimeIsTheInstantWrittenOutWhateverFormTheRowHoldsItIn) {
  // Texts already in the change time's own form are passed through unparsed when they parse; the
  // rest, and forms that only look right (a day that does not exist, a year the clock saturates),
  // are read as instants and written out, or kept as not a time.
  const std::vector<std::string> texts = {
      "2026-03-01T10:00:00.500Z", "2026-03-01T10:00:00.5Z",     "2026-03-01T10:00:00.000+01:00",
      "2026-02-30T10:00:00.000Z", "9999-12-31T00:00:00.000Z",   "0001-01-01T00:00:00.000Z",
      "2026-03-01T24:00:00.000Z", "2026-03-01T10:00:00.000z"};
  for (std::size_t i = 0; i < texts.size(); ++i) add_order(fmt::format("T-{}", i), texts[i]);
  auto db = open();
  const auto rows = db->source().read_orders(ReadRange{});
  ASSERT_EQ(rows.size(), texts.size());
  for (const OrderRow& row : rows) {
    const auto when = timestamps::parse_iso8601(row.updated_at);
    const std::string expected =
        when ? timestamps::format_iso8601_z(*when) : fmt::format("{}{}", kNotATime, row.updated_at);
    EXPECT_EQ(row.change_time, expected) << row.updated_at;
  }
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
    const auto rows = db->source().read_orders(range);
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
  const auto rows = db->source().read_orders(ReadRange{.after = {"2026-03-01T10:00:02.000Z", "B-2"},
                                              .through = ChangeCursor{"2026-03-01T10:00:04.000Z", "B-4"}});
  EXPECT_THAT(keys(rows), ElementsAre("B-3", "B-4"));
}

TEST_F(MerchantDatabaseTest, CountsTheRowsAfterACursor) {
  for (int i = 1; i <= 5; ++i) add_order(fmt::format("C-{}", i), fmt::format("2026-03-01T10:00:0{}.000Z", i));
  add_order("C-0", "2026-03-01T10:00:02.000Z");
  auto db = open();
  EXPECT_EQ(db->source().count_changes_after(SourceKind::orders, {}), 6);
  EXPECT_EQ(db->source().count_changes_after(SourceKind::orders, {"2026-03-01T10:00:02.000Z", "C-0"}), 4);
  EXPECT_EQ(db->source().count_changes_after(SourceKind::orders, {"2026-03-01T10:00:02.000Z", ""}), 5);
  EXPECT_EQ(db->source().count_changes_after(SourceKind::returns, {}), 0);
}

TEST_F(MerchantDatabaseTest, ContentHashIsStableAndFollowsEveryColumnAndLine) {
  add_order("H-1", "2026-03-01T10:00:00.000Z", 2);
  auto db = open();
  const auto hash = [&] { return db->source().read_orders(std::vector<std::string>{"H-1"}).at(0).content_hash; };
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

// The reconciliation sweep compares the ledger with hashes the database computes
// (open_row_versions); the ledger holds content_hash() of the rows it read and sent, so the two must
// be equal byte for byte, whatever types SQLite stored and however many lines a row has.
class DatabaseContentHashTest : public MerchantDatabaseTest {
 protected:
  void exec(const std::string& sql) { app.exec(sql); }

  // For each open row: its version from the database, against the row read whole.
  template <typename Row>
  void expect_database_hashes_equal(SourceKind kind, std::size_t rows_expected) {
    auto db = open();
    const auto versions = db->source().open_row_versions(kind, "", 100);
    ASSERT_EQ(versions.size(), rows_expected);
    std::vector<std::string> wanted;
    for (const auto& version : versions) wanted.push_back(version.reference_id);
    const std::vector<Row> rows = [&] {
      if constexpr (std::is_same_v<Row, OrderRow>) return db->source().read_orders(wanted);
      else return db->source().read_returns(wanted);
    }();
    ASSERT_EQ(rows.size(), versions.size());
    for (const auto& version : versions) {
      const auto row = std::find_if(rows.begin(), rows.end(),
                                    [&](const Row& r) { return r.reference_id == version.reference_id; });
      ASSERT_NE(row, rows.end()) << version.reference_id;
      EXPECT_EQ(version.content_hash, row->content_hash) << version.reference_id;
      EXPECT_EQ(version.content_hash, content_hash(*row)) << version.reference_id;
      EXPECT_EQ(version.change_time, row->change_time) << version.reference_id;
      if constexpr (std::is_same_v<Row, OrderRow>) {
        EXPECT_EQ(version.cancel_requested, row->cancel_requested) << version.reference_id;
      } else {
        EXPECT_TRUE(version.cancel_requested.is_null());
      }
    }
  }
};

TEST_F(DatabaseContentHashTest, OrdersHashedByTheDatabaseEqualTheRowsReadWithEveryTypeAndLineCount) {
  // No lines; NULL, empty text, UTF-8 text, a fractional real, a blob with a zero byte, a large integer.
  exec("INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, gift_message, tags, "
       "location_id, total_price, recipient_phone, cancel_requested, updated_at) VALUES ('V-0', NULL, 'Standard', "
       "'', 'Grüße 🎁 ñ', 1.5, X'00FF10', 9007199254740993, 0, '2026-03-01T10:00:00.000Z')");
  // One line, of every type; the order asks for a cancel, with a real in a text column.
  exec("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_id, product_reference_id, "
       "product_name, quantity, external_line_id, unit_of_measure) VALUES ('V-1', 1, 0.1, X'C3', 'Café', -7, NULL, '')");
  exec("INSERT INTO fulfillsync_orders (reference_id, shipping_method, location_id, company_name, cancel_requested, "
       "updated_at) VALUES ('V-1', 'Express', -3.25e10, CAST(2.5 AS TEXT), 1, '2026-03-01 10:00:00')");
  // Several lines, written out of order, their numbers of every type SQLite orders differently.
  for (const char* line : {"'x'", "10", "X'01'", "2", "1.5", "-1"}) {
    exec(fmt::format("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_id, "
                     "product_name, quantity) VALUES ('V-3', {0}, {0}, 'Line ' || {0}, 1)",
                     line));
  }
  exec("INSERT INTO fulfillsync_orders (reference_id, shipping_method, location_id, tags, cancel_requested, "
       "updated_at) VALUES ('V-3', 'Standard', 1e300, 'a;b=t1:', '1', 'not a time')");
  auto db = open();
  const auto read = db->source().read_orders(std::vector<std::string>{"V-0", "V-1", "V-3"});
  ASSERT_EQ(read.size(), 3u);
  for (const auto& row : read) {
    if (row.reference_id == "V-0") {
      EXPECT_EQ(row.location_id.type, Field::Type::real);
      EXPECT_EQ(row.total_price.type, Field::Type::blob);
      EXPECT_TRUE(row.lines.empty());
    } else if (row.reference_id == "V-1") {
      ASSERT_EQ(row.lines.size(), 1u);
      EXPECT_EQ(row.lines[0].product_id.type, Field::Type::real);
      EXPECT_EQ(row.lines[0].product_reference_id.type, Field::Type::blob);
    } else {
      EXPECT_EQ(row.lines.size(), 6u);
    }
  }
  expect_database_hashes_equal<OrderRow>(SourceKind::orders, 3);
}

TEST_F(DatabaseContentHashTest, ReturnsHashedByTheDatabaseEqualTheRowsReadWithEveryTypeAndLineCount) {
  exec("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, fulfillment_center_name, "
       "original_shipment_id, tracking_number, tags, updated_at) VALUES ('RV-0', 2.5, '', NULL, X'00', 'Rückgabe ✓', "
       "'2026-03-01T10:00:00.000Z')");
  exec("INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, inventory_id, quantity, "
       "requested_action) VALUES ('RV-1', 1, 7002, 0.25, NULL)");
  exec("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, tracking_number, updated_at) "
       "VALUES ('RV-1', 8, '1Z999', '2026-03-01T10:00:00+02:00')");
  for (const char* line : {"3", "'b'", "1", "2.5"}) {
    exec(fmt::format("INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, inventory_id, "
                     "quantity, requested_action) VALUES ('RV-3', {0}, {0}, 1, X'AB')",
                     line));
  }
  exec("INSERT INTO fulfillsync_returns (reference_id, original_shipment_id, updated_at) VALUES ('RV-3', "
       "-9223372036854775808, '2026-03-01T10:00:00Z')");
  expect_database_hashes_equal<ReturnRow>(SourceKind::returns, 3);
}

// Open: no result row, or one that is not final. Rows come by key, a page at a time.
TEST_F(DatabaseContentHashTest, OpenRowVersionsLeaveOutFinalResultsAndPageByKey) {
  for (const char* key : {"P-1", "P-2", "P-3", "P-4"}) add_order(key, "2026-03-01T10:00:00.000Z", 2);
  auto db = open();
  exec("INSERT INTO fulfillsync_order_sync (reference_id, state, remote_id, remote_status, attempts, first_seen_at, "
       "updated_at) VALUES ('P-2', 'created', 1, 'Fulfilled', 1, '2026-03-01T10:00:00.000Z', "
       "'2026-03-01T10:00:00.000Z'), ('P-3', 'created', 2, 'Processing', 1, '2026-03-01T10:00:00.000Z', "
       "'2026-03-01T10:00:00.000Z')");
  const auto first = db->source().open_row_versions(SourceKind::orders, "", 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].reference_id, "P-1");
  EXPECT_EQ(first[1].reference_id, "P-3");
  const auto rest = db->source().open_row_versions(SourceKind::orders, first[1].reference_id, 2);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].reference_id, "P-4");
  EXPECT_EQ(rest[0].content_hash, db->source().read_orders(std::vector<std::string>{"P-4"}).at(0).content_hash);
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
  const auto first = db->source().change_counter();
  EXPECT_EQ(db->source().change_counter(), first);
  db->results().write_results(SourceKind::orders, std::vector<SyncResult>{{.reference_id = "X", .state = "pending"}});
  EXPECT_EQ(db->source().change_counter(), first);  // our own write
  add_order("D-1", "2026-03-01T10:00:00.000Z");
  EXPECT_NE(db->source().change_counter(), first);
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
  db->results().write_results(SourceKind::orders, results);
  db->results().write_results(SourceKind::orders, results);
  EXPECT_THAT(db->results().count_results_by_state(SourceKind::orders),
              ElementsAre(Pair("created", 1), Pair("in_flight", 1), Pair("rejected", 1)));
  auto stored = db->results().read_result(SourceKind::orders, "O-1");
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
  db->results().write_results(SourceKind::orders, later);
  db->results().write_results(SourceKind::orders, results);
  EXPECT_THAT(db->results().count_results_by_state(SourceKind::orders),
              ElementsAre(Pair("cancelled", 1), Pair("created", 1), Pair("rejected", 1)));
  EXPECT_EQ(db->results().read_result(SourceKind::orders, "O-1")->first_seen_at, t0);
  EXPECT_EQ(db->results().read_result(SourceKind::orders, "O-1")->cancelled_at, t1);

  const auto rejected = db->results().latest_results(SourceKind::orders, "rejected", 10);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].last_error, "fulfillsync_orders: city is required, found NULL");
  EXPECT_FALSE(db->results().read_result(SourceKind::orders, "nope"));

  db->results().write_results(SourceKind::returns,
                    std::vector<SyncResult>{
                        {.reference_id = "RMA-1", .state = "created", .remote_id = 9, .updated_at = t0}});
  EXPECT_THAT(db->results().count_results_by_state(SourceKind::returns), ElementsAre(Pair("created", 1)));
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_order_sync"), 3);
}

TEST_F(MerchantDatabaseTest, ReadsDuringTheApplicationsWriteTransactionAndTimesOutWritingBehindIt) {
  add_order("W-1", "2026-03-01T10:00:00.000Z");
  auto fast = config();
  fast.sqlite.busy_timeout = std::chrono::milliseconds(50);
  SqliteMerchantDatabase db(fast);
  SQLite::Transaction held(app, SQLite::TransactionBehavior::IMMEDIATE);
  add_order("W-2", "2026-03-01T10:00:01.000Z");
  EXPECT_THAT(keys(db.source().read_orders(ReadRange{})), ElementsAre("W-1"));  // WAL: the committed snapshot
  EXPECT_THROW(db.results().write_results(SourceKind::orders, std::vector<SyncResult>{{.reference_id = "W-1", .state = "x"}}),
               MerchantDatabaseError);
  held.commit();
  EXPECT_THAT(keys(db.source().read_orders(ReadRange{})), ElementsAre("W-1", "W-2"));
}

TEST_F(MerchantDatabaseTest, WatchedInventoryIds) {
  app.exec("INSERT INTO fulfillsync_watched_inventory (inventory_id) VALUES (7005), (7001)");
  EXPECT_THAT(open()->pulled().watched_inventory_ids(), ElementsAre(7001, 7005));
}

TEST_F(MerchantDatabaseTest, ChecksTheSourceTables) {
  auto db = open();
  EXPECT_THAT(db->source().check_source_tables(), IsEmpty());
  app.exec("ALTER TABLE fulfillsync_returns DROP COLUMN tracking_number");
  app.exec("DROP TABLE fulfillsync_watched_inventory");
  EXPECT_THAT(db->source().check_source_tables(),
              ElementsAre(HasSubstr("fulfillsync_returns.tracking_number: no such column"),
                          HasSubstr("fulfillsync_watched_inventory.inventory_id: no such table")));
}

TEST_F(MerchantDatabaseTest, MissingFileIsAClearError) {
  auto missing = config();
  missing.sqlite.path = dir / "nope.db";
  EXPECT_THROW(SqliteMerchantDatabase db(missing), MerchantDatabaseError);
}

// --- The tables the pull jobs write.

// Every row `sql` returns, as "value|value|...", NULL for null: what the tests compare.
std::vector<std::string> rows(SQLite::Database& db, const std::string& sql) {
  std::vector<std::string> out;
  SQLite::Statement query(db, sql);
  while (query.executeStep()) {
    std::string row;
    for (int i = 0; i < query.getColumnCount(); ++i) {
      if (i > 0) row += '|';
      row += query.getColumn(i).isNull() ? std::string("NULL") : query.getColumn(i).getString();
    }
    out.push_back(std::move(row));
  }
  return out;
}

// The result migrations applied with the prefix substituted and recorded, as the README tells a DBA.
void apply_by_hand(SQLite::Database& db, std::initializer_list<std::pair<int, const char*>> migrations) {
  db.exec("CREATE TABLE fulfillsync_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
          "applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))");
  for (const auto& [version, name] : migrations) {
    std::string sql = testing::read_file(
        testing::source_path(fmt::format("schema/merchant/results/{:04}_{}.sql", version, name)));
    for (auto at = sql.find("{prefix}"); at != std::string::npos; at = sql.find("{prefix}", at)) {
      sql.replace(at, 8, "fulfillsync_");
    }
    db.exec(sql);
    db.exec(fmt::format("INSERT INTO fulfillsync_schema_migrations (version, name) VALUES ({}, '{}')", version, name));
  }
}

TEST_F(MerchantDatabaseTest, MigratesVersion1ResultTablesKeepingTheirRows) {
  apply_by_hand(app, {{1, "sync_state"}});
  app.exec("INSERT INTO fulfillsync_order_sync (reference_id, state, remote_id, remote_status, attempts, "
           "content_hash, first_seen_at, updated_at) VALUES ('O-1', 'created', 101, 'Processing', 1, 'aa', "
           "'2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z');"
           "INSERT INTO fulfillsync_return_sync (reference_id, state, remote_id, first_seen_at, updated_at) "
           "VALUES ('RMA-1', 'created', 9, '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z')");
  auto unmanaged = config();
  unmanaged.manage_result_tables = false;
  try {
    SqliteMerchantDatabase db(unmanaged);
    FAIL() << "opened";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("are at schema version 1, this fulfillsync writes version 4"));
  }

  auto db = open();
  EXPECT_EQ(db->result_schema_version(), 4);
  EXPECT_THAT(rows(app, "SELECT version, name FROM fulfillsync_schema_migrations ORDER BY version"),
              ElementsAre("1|sync_state", "2|pulled", "3|variant_sync", "4|product_sync"));
  EXPECT_THAT(rows(app, "SELECT reference_id, state, remote_id, remote_status, attempts, content_hash, first_seen_at, "
                        "updated_at, remote_updated_at FROM fulfillsync_order_sync"),
              ElementsAre("O-1|created|101|Processing|1|aa|2026-03-01T10:00:00.000Z|2026-03-01T10:00:01.000Z|NULL"));
  EXPECT_THAT(rows(app, "SELECT reference_id, state, remote_id, remote_status, remote_updated_at, arrived_at, "
                        "cancelled_at, status_history, actions_taken FROM fulfillsync_return_sync"),
              ElementsAre("RMA-1|created|9|NULL|NULL|NULL|NULL|NULL|NULL"));
  EXPECT_EQ(db->results().read_result(SourceKind::orders, "O-1")->remote_id, 101);
}

TEST_F(MerchantDatabaseTest, EveryMigrationAppliedByHandSatisfiesAnUnmanagedDaemon) {
  apply_by_hand(app, {{1, "sync_state"}, {2, "pulled"}, {3, "variant_sync"}, {4, "product_sync"}});
  auto unmanaged = config();
  unmanaged.manage_result_tables = false;
  SqliteMerchantDatabase db(unmanaged);
  EXPECT_EQ(db.result_schema_version(), 4);
  db.pulled().replace_lots(7001, std::vector<LotRecord>{{.lot_number = "A", .location_id = 8}});
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_inventory_lots"), 1);
}

class PulledRecordsTest : public MerchantDatabaseTest {
 protected:
  // An order the daemon created, as the push jobs leave it.
  void created_order(const std::string& reference_id, std::int64_t remote_id) {
    db->results().write_results(SourceKind::orders,
                      std::vector<SyncResult>{{.reference_id = reference_id, .state = "created", .remote_id = remote_id,
                                               .remote_status = "Processing", .attempts = 1, .updated_at = t0}});
  }

  static ShipmentRecord shipment(std::int64_t id, const std::string& last_update_at,
                                 std::string status = "Processing") {
    return {.shipment_id = id,
            .order_id = 101,
            .order_reference_id = "O-1",
            .status = std::move(status),
            .status_detail_id = 201,
            .status_detail_name = "InTransit",
            .location_id = 8,
            .location_name = "Reno",
            .ship_option = "Ground",
            .created_date = "2026-03-01T09:00:00.000Z",
            .estimated_fulfillment_date = "2026-03-03T00:00:00.000Z",
            .last_update_at = last_update_at,
            .invoice_amount = "12.30",
            .invoice_currency_code = "USD",
            .tracking = TrackingRecord{.tracking_number = "1Z999",
                                       .carrier = "UPS",
                                       .carrier_service = "Ground",
                                       .tracking_url = "https://ups.example/1Z999",
                                       .shipping_date = "2026-03-02T08:00:00.000Z"},
            .items = {{.line_number = 1,
                       .product_id = 3001,
                       .product_reference_id = "TSHIRT-M",
                       .sku = "TSHIRT-M",
                       .product_name = "T-Shirt M",
                       .inventory_id = 7001,
                       .lot = "LOT-A",
                       .expiration_date = "2027-01-01T00:00:00.000Z",
                       .quantity = 2,
                       .quantity_committed = 2,
                       .serial_numbers = {"SN-1", "SN \"2\""}},
                      {.line_number = 2, .product_reference_id = "MUG", .quantity = 1}}};
  }

  static LotRecord lot(std::string number, std::int64_t location_id, std::int64_t on_hand) {
    return {.lot_number = std::move(number),
            .lot_date = "2027-01-01T00:00:00.000Z",
            .location_id = location_id,
            .location_name = "Reno",
            .quantities = {.awaiting = 0, .committed = 1, .fulfillable = on_hand - 1, .on_hand = on_hand}};
  }

  std::vector<std::string> shipment_rows() {
    return rows(app,
                "SELECT shipment_id, order_id, order_reference_id, status, status_detail_id, status_detail_name, "
                "location_id, location_name, ship_option, created_date, actual_fulfillment_date, "
                "estimated_fulfillment_date, delivery_date, last_update_at, invoice_amount, invoice_currency_code, "
                "is_tracking_uploaded FROM fulfillsync_shipments ORDER BY shipment_id");
  }
  std::vector<std::string> item_rows() {
    return rows(app, "SELECT * FROM fulfillsync_shipment_items ORDER BY shipment_id, line_number");
  }
  std::vector<std::string> tracking_rows() {
    return rows(app, "SELECT * FROM fulfillsync_tracking ORDER BY shipment_id");
  }
  std::vector<std::string> lot_rows() {
    return rows(app,
                "SELECT inventory_id, lot_number, location_id, location_name, lot_date, awaiting_quantity, "
                "committed_quantity, fulfillable_quantity, internal_transfer_quantity, on_hand_quantity "
                "FROM fulfillsync_inventory_lots ORDER BY inventory_id, lot_number, location_id");
  }
  static std::pair<int, int> counts(LotChanges changes) { return {changes.written, changes.removed}; }

  const timestamps::TimePoint t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  const std::string t1 = "2026-03-02T10:00:00.000Z", t2 = "2026-03-02T11:00:00.000Z", t3 = "2026-03-02T12:00:00.000Z";
  std::unique_ptr<SqliteMerchantDatabase> db = open();
};

// The orders whose cancel the provider does not show: refused, or cancelled and then shown otherwise
// by a status pulled after the cancel; only while the merchant's row still asks for the cancel.
TEST_F(PulledRecordsTest, TheSkuMapMovesOnlyForwardAndAWholePassRemovesWhatItLacks) {
  const auto at = [](const char* text) { return *timestamps::parse_iso8601(text); };
  const auto variant = [](const char* sku, std::int64_t on_hand) {
    return VariantStockRecord{.sku = sku, .product_id = 1, .variant_id = 11, .inventory_id = 7001,
                              .on_hand_qty = on_hand, .product_name = "Tee", .variant_name = "Tee M",
                              .status = "Active"};
  };
  EXPECT_EQ(db->pulled().write_variant_stock(std::vector{variant("TEE-M", 5), variant("TEE-L", 2)},
                                             at("2026-03-01T10:00:00Z")),
            2);
  // A read older than the row held changes nothing; a newer one does.
  EXPECT_EQ(db->pulled().write_variant_stock(std::vector{variant("TEE-M", 99)}, at("2026-03-01T09:00:00Z")), 0);
  EXPECT_EQ(db->pulled().write_variant_stock(std::vector{variant("TEE-M", 7)}, at("2026-03-01T11:00:00Z")), 1);
  EXPECT_THAT(rows(app, "SELECT sku, product_id, variant_id, inventory_id, on_hand_qty, status, stock_read_at "
                        "FROM fulfillsync_variant_sync ORDER BY sku"),
              ElementsAre("TEE-L|1|11|7001|2|Active|2026-03-01T10:00:00.000Z",
                          "TEE-M|1|11|7001|7|Active|2026-03-01T11:00:00.000Z"));
  // A pass that began at 10:30 wrote TEE-M again, and not TEE-L: the provider no longer lists it.
  EXPECT_EQ(db->pulled().remove_variants_read_before(at("2026-03-01T10:30:00Z")), 1);
  EXPECT_THAT(rows(app, "SELECT sku FROM fulfillsync_variant_sync"), ElementsAre("TEE-M"));
}

// A merchant database made before return lines had `sku` still reads, and a line's hash is the same
// with the column absent, added and NULL: adding it sends nothing again. The sweep's hash agrees.
TEST_F(MerchantDatabaseTest, ReturnLinesWithoutTheSkuColumnReadAndHashAsBefore) {
  app.exec("DROP TABLE fulfillsync_return_lines;"
           "CREATE TABLE fulfillsync_return_lines (return_reference_id TEXT NOT NULL, line_number INTEGER NOT NULL, "
           "inventory_id INTEGER NOT NULL, quantity INTEGER NOT NULL, requested_action TEXT, "
           "PRIMARY KEY (return_reference_id, line_number))");
  add_return("RMA-OLD", "2026-03-01T10:00:00.000Z");
  const auto hash_now = [&] {
    auto db = open();
    EXPECT_THAT(db->source().check_source_tables(), IsEmpty());
    const auto rows = db->source().read_returns(std::vector<std::string>{"RMA-OLD"});
    EXPECT_EQ(rows.size(), 1u);
    if (rows.empty()) return std::string();
    const auto versions = db->source().open_row_versions(SourceKind::returns, "", 10);
    EXPECT_EQ(versions.size(), 1u);
    if (!versions.empty()) {
      EXPECT_EQ(versions[0].content_hash, rows[0].content_hash);
    }
    return rows[0].content_hash;
  };
  const std::string before = hash_now();
  EXPECT_TRUE(open()->source().read_returns(std::vector<std::string>{"RMA-OLD"}).at(0).lines.at(0).sku.is_null());
  // The line as it was serialized before the column existed.
  std::string canonical = "reference_id=t7:RMA-OLD;fulfillment_center_id=i8;fulfillment_center_name=n;"
                          "original_shipment_id=n;tracking_number=n;tags=n;|line;line_number=i1;inventory_id=i7002;"
                          "quantity=i1;requested_action=t7:Restock;";
  EXPECT_EQ(before, canonical::hex_sha256(canonical));
  app.exec("ALTER TABLE fulfillsync_return_lines ADD COLUMN sku TEXT");
  EXPECT_EQ(hash_now(), before);
  // A SKU given is content: the hash moves.
  app.exec("UPDATE fulfillsync_return_lines SET sku = 'TEE-M'");
  EXPECT_NE(hash_now(), before);
}

TEST_F(PulledRecordsTest, CancelMismatchesAreTheCancelsTheProviderDoesNotShow) {
  const auto t_cancel = timestamps::parse_iso8601(t2).value();
  const auto result = [&](const std::string& reference, std::int64_t id, const std::string& state) {
    SyncResult row{.reference_id = reference, .state = state, .remote_id = id, .remote_status = "Processing",
                   .attempts = 1, .updated_at = t_cancel};
    if (state == "cancelled") row.cancel_requested_at = row.cancelled_at = t_cancel;
    return row;
  };
  for (const char* reference : {"C-1", "C-2", "C-3", "C-4", "C-5"}) add_order(reference, t1);
  app.exec("UPDATE fulfillsync_orders SET cancel_requested = 1 WHERE reference_id <> 'C-5'");
  db->results().write_results(SourceKind::orders,
                              std::vector<SyncResult>{result("C-1", 101, "cancel_rejected"), result("C-2", 102, "cancelled"),
                                                      result("C-3", 103, "cancelled"), result("C-4", 104, "cancelled"),
                                                      result("C-5", 105, "cancel_rejected")});
  const std::vector<OrderStatusRecord> statuses = {
      {.reference_id = "C-1", .remote_id = 101, .status = "Fulfilled", .as_of = t1},
      {.reference_id = "C-2", .remote_id = 102, .status = "Processing", .as_of = t3},  // after the cancel
      {.reference_id = "C-3", .remote_id = 103, .status = "Processing", .as_of = t1},  // before it: says nothing
      {.reference_id = "C-4", .remote_id = 104, .status = "Cancelled", .as_of = t3},
      {.reference_id = "C-5", .remote_id = 105, .status = "Fulfilled", .as_of = t1},  // the merchant accepted it
  };
  db->pulled().write_shipments(statuses, {});
  std::vector<std::string> found;
  for (const auto& row : db->results().cancel_mismatches(10)) {
    found.push_back(row.reference_id + ":" + *row.remote_status);
  }
  EXPECT_THAT(found, ElementsAre("C-1:Fulfilled", "C-2:Processing"));
  EXPECT_EQ(db->results().cancel_mismatches(1).size(), 1u);
}

TEST_F(PulledRecordsTest, WritesShipmentsWithItemsAndTrackingAndAReplayChangesNothing) {
  created_order("O-1", 101);
  const std::vector<OrderStatusRecord> orders = {
      {.reference_id = "O-1", .remote_id = 101, .status = "Processing", .as_of = t1}};
  const std::vector<ShipmentRecord> shipments = {shipment(5001, t1)};
  db->pulled().write_shipments(orders, shipments);

  EXPECT_THAT(shipment_rows(), ElementsAre("5001|101|O-1|Processing|201|InTransit|8|Reno|Ground|"
                                           "2026-03-01T09:00:00.000Z|NULL|2026-03-03T00:00:00.000Z|NULL|"
                                           "2026-03-02T10:00:00.000Z|12.30|USD|0"));
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipments WHERE typeof(invoice_amount) = 'text' "
                       "AND synced_at LIKE '____-__-__T__:__:__.___Z'"),
            1);
  EXPECT_THAT(item_rows(), ElementsAre("5001|1|3001|TSHIRT-M|TSHIRT-M|T-Shirt M|7001|LOT-A|2027-01-01T00:00:00.000Z|2|2|"
                                       R"(["SN-1","SN \"2\""])",
                                       "5001|2|NULL|MUG|NULL|NULL|NULL|NULL|NULL|1|NULL|[]"));
  EXPECT_EQ(count(app, "SELECT json_array_length(serial_numbers) FROM fulfillsync_shipment_items WHERE line_number = 1"),
            2);
  const auto tracking = rows(app,
                             "SELECT shipment_id, order_id, order_reference_id, tracking_number, carrier, "
                             "carrier_service, tracking_url, scac, bol, pro_number, shipping_date, "
                             "last_tracking_update_at, acknowledged_at, upload_marked_at, mark_attempts, mark_error, "
                             "written_at IS NOT NULL FROM fulfillsync_tracking");
  EXPECT_THAT(tracking, ElementsAre("5001|101|O-1|1Z999|UPS|Ground|https://ups.example/1Z999|NULL|NULL|NULL|"
                                    "2026-03-02T08:00:00.000Z|NULL|NULL|NULL|0|NULL|1"));
  EXPECT_THAT(rows(app, "SELECT reference_id, state, remote_status, remote_updated_at FROM fulfillsync_order_sync"),
              ElementsAre("O-1|created|Processing|2026-03-02T10:00:00.000Z"));

  // The same page again (a pull that repeats work after a restart): the same rows, written_at kept.
  const auto shipments_before = shipment_rows(), items_before = item_rows(), tracking_before = tracking_rows();
  db->pulled().write_shipments(orders, shipments);
  EXPECT_EQ(shipment_rows(), shipments_before);
  EXPECT_EQ(item_rows(), items_before);
  EXPECT_EQ(tracking_rows(), tracking_before);
}

// Statements compiled into each pulled table, counted by SQLite's authorizer (called while a
// statement is prepared, never when it runs) on every connection opened while it is registered.
std::map<std::string, int>* g_prepared_writes = nullptr;

int count_prepared_write(void*, int action, const char* table, const char* column, const char*, const char*) {
  if (g_prepared_writes == nullptr || table == nullptr) return SQLITE_OK;
  // An UPDATE is authorized column by column; no two of the writes update the same column.
  if (action == SQLITE_INSERT) ++(*g_prepared_writes)[fmt::format("insert {}", table)];
  if (action == SQLITE_DELETE) ++(*g_prepared_writes)[fmt::format("delete {}", table)];
  if (action == SQLITE_UPDATE) ++(*g_prepared_writes)[fmt::format("update {}.{}", table, column)];
  return SQLITE_OK;
}

int authorize_connection(sqlite3* db, const char**, const void*) {
  sqlite3_set_authorizer(db, count_prepared_write, nullptr);
  return SQLITE_OK;
}

// A pull writes a few shipments at a time, all day: each statement is prepared once per connection,
// not once per page or row. Pages of one shape use the same statements (5 shipments: one of 4 rows
// and one of 1), so every page after the first prepares nothing.
TEST_F(PulledRecordsTest, EachWriteIsPreparedOncePerConnection) {
  std::map<std::string, int> prepared;
  sqlite3_auto_extension(reinterpret_cast<void (*)()>(authorize_connection));
  auto counted = open();
  sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(authorize_connection));
  created_order("O-1", 101);

  g_prepared_writes = &prepared;
  std::map<std::string, int> after_first_page;
  for (std::int64_t page = 0; page < 20; ++page) {
    if (page == 1) after_first_page = prepared;
    const std::vector<OrderStatusRecord> orders = {
        {.reference_id = "O-1", .remote_id = 101, .status = "Processing", .as_of = t1}};
    std::vector<ShipmentRecord> shipments;
    for (std::int64_t i = 0; i < 5; ++i) {
      auto written = shipment(5000 + page * 5 + i, t1);
      written.is_tracking_uploaded = true;
      shipments.push_back(std::move(written));
    }
    counted->pulled().write_shipments(orders, shipments);
    counted->pulled().write_timeline(5000 + page, std::vector<TimelineEntryRecord>{{.timestamp = t1}, {.timestamp = t2}});
  }
  g_prepared_writes = nullptr;

  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipments"), 100);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipment_timeline"), 40);
  EXPECT_EQ(prepared, after_first_page);
  // The shipments' and the tracking's upserts: a statement of 4 rows and one of 1.
  EXPECT_EQ(prepared["insert fulfillsync_shipments"], 2);
  EXPECT_EQ(prepared["insert fulfillsync_tracking"], 2);
  EXPECT_EQ(prepared.count("insert fulfillsync_shipment_items"), 1u);
  EXPECT_EQ(prepared.count("insert fulfillsync_shipment_timeline"), 1u);
}

// A page of many shipments is written in statements of many rows (RowUpsert::write_each), and ends
// as writing its records one after the other would: a shipment named again later on the page is
// replaced by a newer record (with its items and tracking) and kept from an older one; so is an
// order's status.
TEST_F(PulledRecordsTest, APageOfManyShipmentsEndsAsWritingThemOneAfterTheOther) {
  created_order("O-1", 101);
  created_order("O-2", 102);
  std::vector<OrderStatusRecord> statuses = {{.reference_id = "O-1", .status = "Processing", .as_of = t2},
                                             {.reference_id = "O-2", .status = "Processing", .as_of = t1},
                                             {.reference_id = "O-1", .status = "Fulfilled", .as_of = t3},
                                             {.reference_id = "O-1", .status = "Exception", .as_of = t1}};
  std::vector<ShipmentRecord> page;
  for (std::int64_t id = 7000; id < 7100; ++id) page.push_back(shipment(id, t2));
  for (std::int64_t id = 7000; id < 7050; ++id) {
    const bool newer = id % 2 == 0;
    auto again = shipment(id, newer ? t3 : t1);
    again.tracking->tracking_number = newer ? fmt::format("NEW-{}", id) : "OLD";
    again.items = {{.line_number = 1, .product_reference_id = newer ? "NEW" : "OLD", .quantity = 1},
                   {.line_number = 2, .product_reference_id = newer ? "NEW" : "OLD", .quantity = 1}};
    page.push_back(std::move(again));
  }
  db->pulled().write_shipments(statuses, page);

  EXPECT_THAT(rows(app, "SELECT reference_id, remote_status, remote_updated_at FROM fulfillsync_order_sync ORDER BY 1"),
              ElementsAre("O-1|Fulfilled|" + t3, "O-2|Processing|" + t1));
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipments"), 100);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipments WHERE last_update_at = '" + t3 + "'"), 25);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipments WHERE last_update_at = '" + t1 + "'"), 0);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_tracking WHERE tracking_number = 'NEW-' || shipment_id "
                       "AND shipment_id % 2 = 0 AND shipment_id < 7050"),
            25);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_tracking WHERE tracking_number = '1Z999'"), 75);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipment_items WHERE product_reference_id = 'NEW'"), 50);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipment_items WHERE product_reference_id = 'OLD'"), 0);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipment_items"), 50 + 75 * static_cast<std::int64_t>(
                                                                                   shipment(0, t2).items.size()));
}

TEST_F(PulledRecordsTest, AnOlderShipmentChangesNothingAndANewerOneReplacesItsItems) {
  db->pulled().write_shipments({}, std::vector{shipment(5001, t2)});
  const auto stored = rows(app, "SELECT * FROM fulfillsync_shipments");  // synced_at included
  const auto items = item_rows();

  // A record older than the row (read before the newer one, written after it).
  auto older = shipment(5001, t1, "None");
  older.items.resize(1);
  older.tracking->tracking_number = "OLD";
  db->pulled().write_shipments({}, std::vector{older});
  EXPECT_EQ(rows(app, "SELECT * FROM fulfillsync_shipments"), stored);
  EXPECT_EQ(item_rows(), items);
  EXPECT_THAT(rows(app, "SELECT tracking_number FROM fulfillsync_tracking"), ElementsAre("1Z999"));

  // A newer one without tracking: the row and its items are replaced, the tracking row stays.
  auto newer = shipment(5001, t3, "Completed");
  newer.is_tracking_uploaded = true;
  newer.delivery_date = t3;
  newer.tracking.reset();
  newer.items = {{.line_number = 1, .product_reference_id = "HAT", .quantity = 3}};
  db->pulled().write_shipments({}, std::vector{newer});
  EXPECT_THAT(shipment_rows(), ElementsAre("5001|101|O-1|Completed|201|InTransit|8|Reno|Ground|"
                                           "2026-03-01T09:00:00.000Z|NULL|2026-03-03T00:00:00.000Z|"
                                           "2026-03-02T12:00:00.000Z|2026-03-02T12:00:00.000Z|12.30|USD|1"));
  EXPECT_THAT(item_rows(), ElementsAre("5001|1|NULL|HAT|NULL|NULL|NULL|NULL|NULL|3|NULL|[]"));
  EXPECT_THAT(rows(app, "SELECT tracking_number FROM fulfillsync_tracking"), ElementsAre("1Z999"));
}

TEST_F(PulledRecordsTest, WritingShipmentsIsOneTransaction) {
  created_order("O-1", 101);
  auto broken = shipment(5002, t1);
  broken.items.push_back(broken.items.front());  // the same line twice
  EXPECT_THROW(db->pulled().write_shipments(std::vector<OrderStatusRecord>{{.reference_id = "O-1", .status = "Fulfilled",
                                                                   .as_of = t1}},
                                   std::vector{shipment(5001, t1), broken}),
               MerchantDatabaseError);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipments"), 0);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipment_items"), 0);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_tracking"), 0);
  EXPECT_THAT(rows(app, "SELECT remote_status, remote_updated_at FROM fulfillsync_order_sync"),
              ElementsAre("Processing|NULL"));
}

TEST_F(PulledRecordsTest, OrderStatusesOnlyMoveForwardAndOnlyForPushedOrders) {
  created_order("O-1", 101);
  created_order("O-2", 102);
  const auto status = [&](std::string reference_id, std::string value, std::string as_of) {
    db->pulled().write_shipments(std::vector<OrderStatusRecord>{{.reference_id = std::move(reference_id),
                                                        .status = std::move(value),
                                                        .as_of = std::move(as_of)}},
                        {});
  };
  const auto statuses = [&] {
    return rows(app, "SELECT reference_id, remote_status, remote_updated_at FROM fulfillsync_order_sync "
                     "ORDER BY reference_id");
  };
  status("O-1", "PartiallyFulfilled", t2);
  status("O-9", "Processing", t2);  // not pushed by this daemon: no row
  EXPECT_THAT(statuses(), ElementsAre("O-1|PartiallyFulfilled|2026-03-02T11:00:00.000Z", "O-2|Processing|NULL"));

  status("O-1", "Processing", t1);  // older
  EXPECT_THAT(statuses(), ElementsAre("O-1|PartiallyFulfilled|2026-03-02T11:00:00.000Z", "O-2|Processing|NULL"));
  status("O-1", "Fulfilled", t2);  // as new: the later pull wins
  EXPECT_THAT(statuses(), ElementsAre("O-1|Fulfilled|2026-03-02T11:00:00.000Z", "O-2|Processing|NULL"));

  // A later ledger write (a change the API cannot apply) keeps the status the pull brought.
  db->results().write_results(SourceKind::orders,
                    std::vector<SyncResult>{{.reference_id = "O-1", .state = "created", .remote_id = 101,
                                             .remote_status = "Processing", .note = "shipping_method changed",
                                             .attempts = 1, .updated_at = t0 + std::chrono::hours(48)}});
  EXPECT_THAT(rows(app, "SELECT remote_status, note FROM fulfillsync_order_sync WHERE reference_id = 'O-1'"),
              ElementsAre("Fulfilled|shipping_method changed"));
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_order_sync"), 2);
}

TEST_F(PulledRecordsTest, ANewTrackingNumberNeedsANewAcknowledgementButStaysMarked) {
  db->pulled().write_shipments({}, std::vector{shipment(5001, t1)});
  // The merchant's application has the tracking; the daemon told the provider.
  app.exec("UPDATE fulfillsync_tracking SET acknowledged_at = '2026-03-02T10:05:00.000Z', "
           "written_at = '2000-01-01T00:00:00.000Z'");
  db->pulled().record_tracking_marks(std::vector<TrackingMarkResult>{
      {.shipment_id = 5001, .marked_at = "2026-03-02T10:06:00.000Z", .attempts = 1}});
  const std::string columns =
      "SELECT tracking_number, carrier_service, last_tracking_update_at, "
      "written_at = '2000-01-01T00:00:00.000Z', acknowledged_at, upload_marked_at, mark_attempts, mark_error "
      "FROM fulfillsync_tracking";

  auto same_number = shipment(5001, t2);
  same_number.tracking->last_tracking_update_at = t2;
  db->pulled().write_shipments({}, std::vector{same_number});
  EXPECT_THAT(rows(app, columns), ElementsAre("1Z999|Ground|2026-03-02T11:00:00.000Z|1|2026-03-02T10:05:00.000Z|"
                                              "2026-03-02T10:06:00.000Z|1|NULL"));

  // written_at moves to when the new number came; marking is the shipment's and stays.
  auto new_number = shipment(5001, t3);
  new_number.tracking = TrackingRecord{.tracking_number = "1Z777", .carrier = "UPS"};
  db->pulled().write_shipments({}, std::vector{new_number});
  EXPECT_THAT(rows(app, columns), ElementsAre("1Z777|NULL|NULL|0|NULL|2026-03-02T10:06:00.000Z|1|NULL"));
}

TEST_F(PulledRecordsTest, TrackingToMarkPagesInShipmentOrder) {
  std::vector<ShipmentRecord> shipments;
  for (std::int64_t id : {30, 10, 40, 20}) {
    auto tracked = shipment(id, t1);
    tracked.order_id = 100 + id;
    tracked.tracking->tracking_number = fmt::format("TN-{}", id);
    shipments.push_back(std::move(tracked));
  }
  auto untracked = shipment(5, t1);
  untracked.tracking.reset();
  shipments.push_back(std::move(untracked));
  db->pulled().write_shipments({}, shipments);
  db->pulled().record_tracking_marks(std::vector<TrackingMarkResult>{{.shipment_id = 40, .marked_at = t2, .attempts = 1}});
  app.exec("UPDATE fulfillsync_tracking SET acknowledged_at = '2026-03-02T10:30:00.000Z' WHERE shipment_id IN (20, 30)");

  EXPECT_THAT(db->pulled().tracking_to_mark(0, 10, false),
              ElementsAre(TrackingToMark{10, 110}, TrackingToMark{20, 120}, TrackingToMark{30, 130}));
  EXPECT_THAT(db->pulled().tracking_to_mark(0, 2, false), ElementsAre(TrackingToMark{10, 110}, TrackingToMark{20, 120}));
  EXPECT_THAT(db->pulled().tracking_to_mark(20, 2, false), ElementsAre(TrackingToMark{30, 130}));
  EXPECT_THAT(db->pulled().tracking_to_mark(0, 10, true), ElementsAre(TrackingToMark{20, 120}, TrackingToMark{30, 130}));
  EXPECT_THAT(db->pulled().tracking_to_mark(20, 10, true), ElementsAre(TrackingToMark{30, 130}));
  EXPECT_THAT(db->pulled().tracking_to_mark(30, 10, false), IsEmpty());
}

TEST_F(PulledRecordsTest, RecordsMarkFailuresThenTheMark) {
  auto other = shipment(20, t1);
  other.tracking->tracking_number = "TN-20";
  db->pulled().write_shipments({}, std::vector{shipment(10, t1), other});
  const std::string columns =
      "SELECT shipment_id, upload_marked_at, mark_error, mark_attempts FROM fulfillsync_tracking ORDER BY shipment_id";

  db->pulled().record_tracking_marks(std::vector<TrackingMarkResult>{
      {.shipment_id = 10, .error = "429 Too Many Requests", .attempts = 1},
      {.shipment_id = 20, .error = "INVALID_SHIPMENT: shipment 20 not found", .attempts = 3},
      {.shipment_id = 999, .marked_at = t2, .attempts = 1}});  // no such row: ignored
  EXPECT_THAT(rows(app, columns), ElementsAre("10|NULL|429 Too Many Requests|1",
                                              "20|NULL|INVALID_SHIPMENT: shipment 20 not found|3"));

  db->pulled().record_tracking_marks(std::vector<TrackingMarkResult>{{.shipment_id = 10, .marked_at = t2, .attempts = 2}});
  EXPECT_THAT(rows(app, columns), ElementsAre("10|2026-03-02T11:00:00.000Z|NULL|2",
                                              "20|NULL|INVALID_SHIPMENT: shipment 20 not found|3"));
  EXPECT_THAT(db->pulled().tracking_to_mark(0, 10, false), ElementsAre(TrackingToMark{20, 101}));
}

TEST_F(PulledRecordsTest, ReturnStatusesOnlyMoveForwardAndOnlyForPushedReturns) {
  db->results().write_results(SourceKind::returns,
                    std::vector<SyncResult>{{.reference_id = "RMA-1", .state = "created", .remote_id = 9,
                                             .remote_status = "AwaitingArrival", .attempts = 1, .updated_at = t0}});
  const std::string arrived_history = R"([{"status":"Arrived","timestamp":"2026-03-02T10:00:00.000Z"}])";
  const std::string completed_history = R"([{"status":"Arrived","timestamp":"2026-03-02T10:00:00.000Z"},)"
                                        R"({"status":"Completed","timestamp":"2026-03-02T12:00:00.000Z"}])";
  const std::string actions = R"([{"inventory_id":7002,"sku":"TSHIRT-M","action":"Restock","quantity":1}])";
  const std::string columns =
      "SELECT reference_id, state, remote_id, remote_status, remote_updated_at, arrived_at, processing_at, "
      "completed_at, cancelled_at, status_history, actions_taken FROM fulfillsync_return_sync";

  db->pulled().write_return_statuses(std::vector<ReturnStatusRecord>{
      {.reference_id = "RMA-1", .remote_id = 9, .status = "Arrived", .as_of = t1, .arrived_at = t1,
       .status_history_json = arrived_history},
      {.reference_id = "RMA-9", .remote_id = 99, .status = "Arrived", .as_of = t1}});  // not pushed: no row
  EXPECT_THAT(rows(app, columns), ElementsAre("RMA-1|created|9|Arrived|" + t1 + "|" + t1 +
                                              "|NULL|NULL|NULL|" + arrived_history + "|[]"));

  const ReturnStatusRecord completed{.reference_id = "RMA-1", .remote_id = 9, .status = "Completed", .as_of = t3,
                                     .arrived_at = t1, .processing_at = t2, .completed_at = t3,
                                     .status_history_json = completed_history, .actions_taken_json = actions};
  const ReturnStatusRecord stale{.reference_id = "RMA-1", .remote_id = 9, .status = "Processing", .as_of = t2,
                                 .arrived_at = t1, .processing_at = t2};
  db->pulled().write_return_statuses(std::vector{completed, stale});
  const std::string expected = "RMA-1|created|9|Completed|" + t3 + "|" + t1 + "|" + t2 + "|" + t3 + "|NULL|" +
                               completed_history + "|" + actions;
  EXPECT_THAT(rows(app, columns), ElementsAre(expected));
  db->pulled().write_return_statuses(std::vector{completed});
  EXPECT_THAT(rows(app, columns), ElementsAre(expected));
}

TEST_F(PulledRecordsTest, ReplaceLotsCountsWhatChangedAndRemovesWhatVanished) {
  EXPECT_EQ(counts(db->pulled().replace_lots(7001, std::vector{lot("A", 8, 10), lot("B", 8, 5), lot("", 9, 3)})),
            std::pair(3, 0));
  EXPECT_EQ(counts(db->pulled().replace_lots(7002, std::vector{lot("A", 8, 1)})), std::pair(1, 0));
  EXPECT_EQ(counts(db->pulled().replace_lots(7001, std::vector{lot("A", 8, 10), lot("B", 8, 5), lot("", 9, 3)})),
            std::pair(0, 0));

  // A's levels changed, B is gone, C is new, the stock without lots at 9 is as it was.
  auto moved = lot("A", 8, 12);
  moved.quantities.internal_transfer = 2;
  EXPECT_EQ(counts(db->pulled().replace_lots(7001, std::vector{moved, lot("", 9, 3), lot("C", 8, 4)})), std::pair(2, 1));
  EXPECT_THAT(lot_rows(), ElementsAre("7001||9|Reno|2027-01-01T00:00:00.000Z|0|1|2|0|3",
                                      "7001|A|8|Reno|2027-01-01T00:00:00.000Z|0|1|11|2|12",
                                      "7001|C|8|Reno|2027-01-01T00:00:00.000Z|0|1|3|0|4",
                                      "7002|A|8|Reno|2027-01-01T00:00:00.000Z|0|1|0|0|1"));
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_inventory_lots WHERE synced_at IS NULL"), 0);

  // The provider lists no lots any more.
  EXPECT_EQ(counts(db->pulled().replace_lots(7001, {})), std::pair(0, 3));
  EXPECT_THAT(lot_rows(), ElementsAre("7002|A|8|Reno|2027-01-01T00:00:00.000Z|0|1|0|0|1"));
}

TEST_F(PulledRecordsTest, RemovesTheLotsOfInventoryNoLongerWatched) {
  db->pulled().replace_lots(7001, std::vector{lot("A", 8, 1), lot("B", 8, 1)});
  db->pulled().replace_lots(7002, std::vector{lot("A", 8, 1)});
  db->pulled().replace_lots(7003, std::vector{lot("A", 8, 1), lot("A", 9, 1)});
  EXPECT_EQ(db->pulled().remove_lots_except(std::vector<std::int64_t>{7001, 7003, 7999}), 1);
  EXPECT_THAT(rows(app, "SELECT inventory_id, count(*) FROM fulfillsync_inventory_lots GROUP BY inventory_id"),
              ElementsAre("7001|2", "7003|2"));
  EXPECT_EQ(db->pulled().remove_lots_except({}), 4);
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_inventory_lots"), 0);
}

TEST_F(PulledRecordsTest, WriteTimelineReplacesTheShipmentsEntries) {
  const auto entry = [](std::string timestamp, std::int64_t type, std::string name) {
    return TimelineEntryRecord{.timestamp = std::move(timestamp), .log_type_id = type, .log_type_name = name,
                               .log_type_text = "Shipment is " + name, .metadata_json = R"({"shipment_id":"5001"})"};
  };
  const std::string columns = "SELECT * FROM fulfillsync_shipment_timeline ORDER BY shipment_id, seq";
  db->pulled().write_timeline(5001, std::vector{entry(t1, 10, "Allocated"), entry(t2, 100, "Picked"), entry(t3, 101, "Packed")});
  db->pulled().write_timeline(5002, std::vector{entry(t1, 10, "Allocated")});
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipment_timeline WHERE shipment_id = 5001"), 3);

  db->pulled().write_timeline(5001, std::vector{entry(t1, 10, "Allocated"), TimelineEntryRecord{.timestamp = t3}});
  EXPECT_THAT(rows(app, columns),
              ElementsAre(R"(5001|1|2026-03-02T10:00:00.000Z|10|Allocated|Shipment is Allocated|{"shipment_id":"5001"})",
                          "5001|2|2026-03-02T12:00:00.000Z|NULL|NULL|NULL|{}",
                          R"(5002|1|2026-03-02T10:00:00.000Z|10|Allocated|Shipment is Allocated|{"shipment_id":"5001"})"));
  db->pulled().write_timeline(5002, {});
  EXPECT_EQ(count(app, "SELECT count(*) FROM fulfillsync_shipment_timeline WHERE shipment_id = 5002"), 0);
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
  EXPECT_THAT(db.source().check_source_tables(), IsEmpty());
  const auto rows = db.source().read_orders(ReadRange{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].updated_at, "2026-03-01T10:00:00.000Z");
  EXPECT_TRUE(daemon::cancel_requested(rows[0]));
  const auto mapped = daemon::map_order(rows[0]);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  EXPECT_EQ(mapped.request->reference_id, "42");
  EXPECT_EQ(mapped.request->financials->total_price, api::Money{"49.90"});
  EXPECT_EQ(mapped.request->products.at(0).reference_id, "TSHIRT-M");
}

}  // namespace
}  // namespace fulfillsync::merchant
