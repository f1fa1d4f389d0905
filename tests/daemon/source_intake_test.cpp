#include "fulfillsync/daemon/push/source_intake.hpp"

#include <sqlite3.h>

#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/merchant/sqlite_merchant_database.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::daemon {
namespace {

using merchant::OrderRow;
using namespace std::chrono_literals;

constexpr auto kCreate = LedgerKind::order_create;

// SourceIntake reading a SQLite merchant database by its change log, with the test as the shop's
// application on its own connection. Each test drops one change (the fault, as a bug would) and
// checks that the order is then taken by change detection or by the reconciliation sweep, never by
// neither.
class SourceIntakeTest : public ::testing::Test {
 protected:
  SourceIntakeTest() : app((dir / "shop.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
    app.exec("PRAGMA journal_mode = WAL");
    app.exec(testing::read_file(testing::source_path("schema/merchant/source_tables.sql")));
    app.exec(testing::read_file(testing::source_path("schema/merchant/change_log/0001_change_log.sql")));
    config::MerchantConfig config;
    config.sqlite.path = dir / "shop.db";
    config.sqlite.busy_timeout = 2000ms;
    db = std::make_unique<merchant::SqliteMerchantDatabase>(config);
  }

  // `reconcile_interval`: 1h for an intake that only reads changes (no sweep in the test's time).
  std::unique_ptr<SourceIntake<OrderRow>> intake(config::Duration reconcile_interval) {
    SourceIntake<OrderRow>::Options options;
    options.starting_point = "2020-01-01T00:00:00Z";
    options.reconcile_interval = reconcile_interval;
    return std::make_unique<SourceIntake<OrderRow>>(db->source(), store, ledger, metrics, options);
  }

  // One reconciliation sweep, as the daemon's next one (its position is the one saved).
  void sweep() {
    auto sweeper = intake(1ms);
    std::this_thread::sleep_for(5ms);
    EXPECT_FALSE(sweeper->poll(10));
  }

  static void drop_the_next_change() {
    ::setenv("FULFILLSYNC_FAILPOINTS", "intake.drop_one_change", 1);
    arm_failpoints_from_environment();
    ::unsetenv("FULFILLSYNC_FAILPOINTS");
  }

  // Each statement its own commit, unless the caller holds a transaction.
  void insert_order_row(const std::string& reference) {
    SQLite::Statement insert(app,
                             "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, "
                             "recipient_name, address1, city, state, zip_code, country, updated_at) VALUES "
                             "(?, '#1', 'Standard', 'DTC', 'Customer 1', '1 Main Street', 'Austin', 'TX', '10001', "
                             "'US', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
    insert.bind(1, reference);
    insert.exec();
  }
  void insert_line(const std::string& reference, int line) {
    SQLite::Statement insert(app,
                             "INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, "
                             "product_reference_id, product_name, quantity) VALUES (?, ?, 'TSHIRT-L', "
                             "'Organic Cotton T-Shirt L', 1)");
    insert.bind(1, reference);
    insert.bind(2, line);
    insert.exec();
  }

  std::string current_hash(const std::string& reference) {
    return db->source().read_orders(std::vector<std::string>{reference}).at(0).content_hash;
  }

  double found_by_sweep() {
    for (const auto& family : registry.Collect()) {
      if (family.name != "fulfillsync_reconcile_found_total") continue;
      double found = 0;
      for (const auto& metric : family.metric) found += metric.counter.value;
      return found;
    }
    return 0;
  }

  testing::TempDir dir;
  SQLite::Database app;  // the shop's application
  std::unique_ptr<merchant::SqliteMerchantDatabase> db;
  CheckpointStore store{dir / "checkpoint.db"};
  OutboundLedger ledger{store};
  prometheus::Registry registry;
  SyncMetrics metrics{registry};
};

TEST_F(SourceIntakeTest, TheSweepTakesAnOrderWhoseOnlyChangeWasDropped) {
  auto reader = intake(1h);
  EXPECT_FALSE(reader->poll(10));  // caught up: reading by the change log from here on
  {
    SQLite::Transaction transaction(app);
    insert_order_row("DROPPED-1");
    insert_line("DROPPED-1", 1);
    insert_line("DROPPED-1", 2);
    transaction.commit();
  }
  drop_the_next_change();
  EXPECT_FALSE(reader->poll(10));
  ASSERT_FALSE(ledger.find(kCreate, "DROPPED-1")) << "the fault did not drop the change";

  sweep();
  const auto entry = ledger.find(kCreate, "DROPPED-1");
  ASSERT_TRUE(entry) << "neither sent nor found by the sweep";
  EXPECT_EQ(entry->state, LedgerState::pending);
  EXPECT_EQ(entry->content_hash, current_hash("DROPPED-1"));
  EXPECT_EQ(found_by_sweep(), 1);
}

// Handled log entries wait for a quiet poll to be deleted. A poll woken only by another commit
// (another table's, or the daemon's own result writes) finds nothing for its table: that is one.
TEST_F(SourceIntakeTest, HandledChangesAreDeletedAtThePollThatFindsNothingForItsTable) {
  auto reader = intake(1h);
  EXPECT_FALSE(reader->poll(10));
  insert_order_row("PRUNED-1");
  EXPECT_FALSE(reader->poll(10));
  ASSERT_TRUE(ledger.find(kCreate, "PRUNED-1"));
  const auto entries = [&] { return app.execAndGet("SELECT count(*) FROM fulfillsync_changes").getInt(); };
  ASSERT_GT(entries(), 0) << "deleted at once: the test no longer shows the quiet poll";
  {
    // The position on disk (HandledChangesAreDeletedOnlyOnceTheirPositionIsOnDisk).
    auto batch = ledger.batch();
    ledger.offer(kCreate, "SYNCED-1", "a version", "{}");
    batch.commit();
  }

  app.exec("CREATE TABLE shop_elsewhere (x INTEGER); INSERT INTO shop_elsewhere VALUES (1)");
  EXPECT_FALSE(reader->poll(10));
  EXPECT_EQ(entries(), 0);
}

// The intake's commits are not synced (a power cut only has their rows read again from the position
// saved before), so handled entries are deleted only through a position a synced commit has put on
// disk: the send's mark that follows, here another synced write of the ledger.
TEST_F(SourceIntakeTest, HandledChangesAreDeletedOnlyOnceTheirPositionIsOnDisk) {
  auto reader = intake(1h);
  EXPECT_FALSE(reader->poll(10));
  const std::uint64_t synced = store.synced_commits();
  insert_order_row("UNSYNCED-1");
  EXPECT_FALSE(reader->poll(10));
  ASSERT_TRUE(ledger.find(kCreate, "UNSYNCED-1"));
  EXPECT_EQ(store.synced_commits(), synced) << "the intake's commit was synced";
  const auto entries = [&] { return app.execAndGet("SELECT count(*) FROM fulfillsync_changes").getInt(); };

  app.exec("CREATE TABLE shop_elsewhere (x INTEGER); INSERT INTO shop_elsewhere VALUES (1)");
  EXPECT_FALSE(reader->poll(10));
  EXPECT_GT(entries(), 0) << "deleted through a position that a power cut could take back";

  {
    auto batch = ledger.batch();
    ledger.offer(kCreate, "SYNCED-1", "a version", "{}");
    batch.commit();
  }
  EXPECT_EQ(store.synced_commits(), synced + 1);
  EXPECT_FALSE(reader->poll(10));  // nothing new: a quiet moment to delete
  EXPECT_EQ(entries(), 0);
}

// The checkpoint store fails the intake's batch as it saves the read position (its disk full, say):
// the batch rolls back with the position, and the next poll reads its rows again. The position in
// memory used to stay moved past them, so their orders were never offered while the daemon ran.
TEST_F(SourceIntakeTest, ABatchTheStoreFailedIsReadAgainByTheNextPoll) {
  auto reader = intake(1h);
  EXPECT_FALSE(reader->poll(10));
  for (int i = 1; i <= 5; ++i) insert_order_row(fmt::format("REFUSED-{}", i));
  // On the daemon's own connection, as a full disk would fail its write.
  store.database().exec(
      "CREATE TEMP TRIGGER refuse_position BEFORE UPDATE ON cursors WHEN NEW.job = 'changes:fulfillsync_orders' "
      "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
  EXPECT_THROW(reader->poll(10), std::exception);
  ASSERT_FALSE(ledger.find(kCreate, "REFUSED-1")) << "the batch was not rolled back";

  store.database().exec("DROP TRIGGER refuse_position");
  EXPECT_FALSE(reader->poll(10));
  for (int i = 1; i <= 5; ++i) EXPECT_TRUE(ledger.find(kCreate, fmt::format("REFUSED-{}", i))) << i;
}

// The shop writes the order, then its lines, each its own commit, and the intake reads between them:
// the change dropped is a version without lines; the lines' changes name the order again, and change
// detection takes its whole version. The sweep then has nothing to find.
TEST_F(SourceIntakeTest, AnOrderReadBetweenItsStatementsIsTakenByItsLaterChanges) {
  auto reader = intake(1h);
  EXPECT_FALSE(reader->poll(10));
  insert_order_row("PARTIAL-1");
  drop_the_next_change();
  EXPECT_FALSE(reader->poll(10));
  ASSERT_FALSE(ledger.find(kCreate, "PARTIAL-1")) << "the fault did not drop the change";
  insert_line("PARTIAL-1", 1);
  insert_line("PARTIAL-1", 2);

  EXPECT_FALSE(reader->poll(10));
  const auto entry = ledger.find(kCreate, "PARTIAL-1");
  ASSERT_TRUE(entry) << "its later changes were not taken";
  EXPECT_EQ(entry->state, LedgerState::pending);
  EXPECT_EQ(entry->content_hash, current_hash("PARTIAL-1"));

  sweep();
  EXPECT_EQ(found_by_sweep(), 0);
  EXPECT_EQ(ledger.find(kCreate, "PARTIAL-1")->content_hash, current_hash("PARTIAL-1"));
}

// SQLite's virtual-machine steps on the shop's database (shop.db), summed over every statement run
// while set: the work of reading, whatever the time it takes.
long* g_shop_steps = nullptr;

int count_steps(unsigned, void*, void* statement, void*) {
  auto* stmt = static_cast<sqlite3_stmt*>(statement);
  const char* file = sqlite3_db_filename(sqlite3_db_handle(stmt), "main");
  if (g_shop_steps != nullptr && file != nullptr && std::string_view(file).ends_with("shop.db")) {
    *g_shop_steps += sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 1);
  }
  return 0;
}

// Called by SQLite for every connection opened once it is registered (sqlite3_auto_extension).
int trace_steps(sqlite3* db, const char**, const void*) {
  sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, count_steps, nullptr);
  return SQLITE_OK;
}

// A first start on a shop with `orders` orders and the change log: the catch-up reads every row changed
// since the starting point (updated_at spread over a day, in no relation to reference_id order).
// Returns SQLite's steps on the shop's database per row.
double catch_up_steps_per_row(int orders) {
  testing::TempDir dir;
  {
    SQLite::Database app((dir / "shop.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    app.exec("PRAGMA journal_mode = WAL");
    app.exec(testing::read_file(testing::source_path("schema/merchant/source_tables.sql")));
    app.exec(testing::read_file(testing::source_path("schema/merchant/change_log/0001_change_log.sql")));
    SQLite::Statement insert(app, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) "
                                  "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, "
                                  "recipient_name, address1, city, state, zip_code, country, updated_at) SELECT "
                                  "printf('ORDER-%06d', i), '#' || i, 'Standard', 'DTC', 'Customer', '1 Main Street', "
                                  "'Austin', 'TX', '10001', 'US', strftime('%Y-%m-%dT%H:%M:%fZ', 'now', "
                                  "printf('-%d seconds', (i * 7919) % 86400)) FROM n");
    insert.bind(1, orders);
    insert.exec();
  }
  sqlite3_auto_extension(reinterpret_cast<void (*)()>(trace_steps));
  config::MerchantConfig config;
  config.sqlite.path = dir / "shop.db";
  merchant::SqliteMerchantDatabase db(config);
  CheckpointStore store{dir / "checkpoint.db"};
  OutboundLedger ledger{store};
  prometheus::Registry registry;
  SyncMetrics metrics{registry};
  SourceIntake<OrderRow>::Options options;
  options.starting_point = "2020-01-01T00:00:00Z";
  SourceIntake<OrderRow> intake(db.source(), store, ledger, metrics, options);

  long steps = 0;
  g_shop_steps = &steps;
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);  // every row is rejected (no lines): not the point here
  while (intake.poll(1)) {
  }
  spdlog::set_level(level);
  g_shop_steps = nullptr;
  sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(trace_steps));

  std::vector<std::string> keys;
  for (int i = 1; i <= orders; ++i) keys.push_back(fmt::format("ORDER-{:06}", i));
  EXPECT_EQ(ledger.hashes(kCreate, keys).size(), static_cast<std::size_t>(orders)) << "not every row was taken";
  return static_cast<double>(steps) / orders;
}

// The catch-up's work per row does not grow with the table: each row is read a bounded number of
// times, not once per page.
TEST(SourceIntakeCatchUpTest, ReadsEachRowOfTheTableABoundedNumberOfTimes) {
  const double small = catch_up_steps_per_row(500);
  const double large = catch_up_steps_per_row(5000);
  RecordProperty("steps_per_row_500", std::to_string(small));
  RecordProperty("steps_per_row_5000", std::to_string(large));
  EXPECT_LT(large, 1.5 * small) << "SQLite steps per row: " << small << " for 500 rows, " << large
                                << " for 5,000 rows";
}

// Single-key lookups of the outbound ledger (OutboundLedger::find) and inserts into it on the
// checkpoint store, counted while set.
long* g_single_key_lookups = nullptr;
long* g_ledger_inserts = nullptr;

int count_single_key_lookups(unsigned, void*, void* statement, void*) {
  auto* stmt = static_cast<sqlite3_stmt*>(statement);
  const char* file = sqlite3_db_filename(sqlite3_db_handle(stmt), "main");
  const std::string_view sql = sqlite3_sql(stmt);
  if (g_single_key_lookups != nullptr && file != nullptr && std::string_view(file).ends_with("checkpoint.db") &&
      sql.starts_with("SELECT") && sql.find("FROM outbound_ledger WHERE kind = ? AND source_key = ?") != sql.npos) {
    ++*g_single_key_lookups;
  }
  if (g_ledger_inserts != nullptr && sql.starts_with("INSERT INTO outbound_ledger")) ++*g_ledger_inserts;
  return 0;
}

int trace_single_key_lookups(sqlite3* db, const char**, const void*) {
  sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, count_single_key_lookups, nullptr);
  return SQLITE_OK;
}

// A new row is offered to the ledger on what the batch's page lookup found (no entry), not looked
// up again one key at a time: a statement per new order less on a backlog.
TEST_F(SourceIntakeTest, ANewRowIsTakenWithoutALookupOfItsOwn) {
  constexpr int kOrders = 300;
  {
    SQLite::Transaction transaction(app);
    for (int i = 1; i <= kOrders; ++i) {
      insert_order_row(fmt::format("ORDER-{:04}", i));
      insert_line(fmt::format("ORDER-{:04}", i), 1);
    }
    transaction.commit();
  }
  sqlite3_auto_extension(reinterpret_cast<void (*)()>(trace_single_key_lookups));
  CheckpointStore traced_store{dir / "traced-checkpoint.db"};
  sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(trace_single_key_lookups));
  OutboundLedger traced_ledger{traced_store};
  SourceIntake<OrderRow>::Options options;
  options.starting_point = "2020-01-01T00:00:00Z";
  options.reconcile_interval = std::chrono::hours(1);
  SourceIntake<OrderRow> traced(db->source(), traced_store, traced_ledger, metrics, options);

  long lookups = 0;
  long inserts = 0;
  g_single_key_lookups = &lookups;
  g_ledger_inserts = &inserts;
  while (traced.poll(100)) {
  }
  g_single_key_lookups = nullptr;
  g_ledger_inserts = nullptr;

  std::vector<std::string> keys;
  for (int i = 1; i <= kOrders; ++i) keys.push_back(fmt::format("ORDER-{:04}", i));
  const auto held = traced_ledger.hashes(kCreate, keys);
  ASSERT_EQ(held.size(), static_cast<std::size_t>(kOrders)) << "not every row was taken";
  for (const std::string& key : {keys.front(), keys.back()}) {
    EXPECT_EQ(traced_ledger.find(kCreate, key)->state, LedgerState::pending) << key;
  }
  EXPECT_EQ(inserts, kOrders) << "the trace saw the ledger's inserts";
  EXPECT_EQ(lookups, 0) << "single-key ledger lookups while taking " << kOrders << " new orders";
}

}  // namespace
}  // namespace fulfillsync::daemon
