// The work of one poll does not depend on how much history is synced or on merchant.look_back: the
// SQL statements SourceIntake runs and the rows they return, counted by SQLite's trace hook on every
// connection, are the same with 1,000 and with 1,000,000 orders already synced (source rows, the
// ledger's entries and the saved read position, made with recursive-CTE inserts), and with a
// look_back of 1 minute and of 1 hour. Work is counted, never timed.
#include <sqlite3.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"
#include "fulfillsync/merchant/sqlite_merchant_database.hpp"
#include "fulfillsync/testing/process.hpp"
#include "fulfillsync/testing/sanitized.hpp"

namespace fulfillsync::daemon {
namespace {

using merchant::OrderRow;
using namespace std::chrono_literals;

// What one poll ran, by database file: each statement's SQL, and the rows returned.
struct Work {
  std::map<std::string, std::vector<std::string>> statements;
  std::map<std::string, long> rows;
  friend bool operator==(const Work&, const Work&) = default;
};
Work* g_work = nullptr;

int on_trace(unsigned type, void* context, void* statement, void*) {
  if (g_work == nullptr) return 0;
  const std::string file = static_cast<const char*>(context);
  if (type == SQLITE_TRACE_STMT) {
    g_work->statements[file].emplace_back(sqlite3_sql(static_cast<sqlite3_stmt*>(statement)));
  }
  if (type == SQLITE_TRACE_ROW) ++g_work->rows[file];
  return 0;
}

// Called by SQLite for every connection opened once it is registered (sqlite3_auto_extension).
int trace_connection(sqlite3* db, const char**, const void*) {
  static std::map<std::string, std::string> names;  // stable storage for the context pointers
  const char* file = sqlite3_db_filename(db, "main");
  const std::string path = file == nullptr ? "" : file;
  const std::string& name = names.emplace(path, std::filesystem::path(path).filename().string()).first->second;
  sqlite3_trace_v2(db, SQLITE_TRACE_STMT | SQLITE_TRACE_ROW, on_trace, const_cast<char*>(name.c_str()));
  return SQLITE_OK;
}

std::string describe(const Work& work) {
  std::string text;
  for (const auto& [file, statements] : work.statements) {
    text += file + ": " + std::to_string(statements.size()) + " statements, " +
            std::to_string(work.rows.count(file) ? work.rows.at(file) : 0) + " rows\n";
    for (const auto& sql : statements) text += "  " + sql.substr(0, 160) + "\n";
  }
  return text;
}

bool writes(const Work& work, const std::string& file) {
  if (!work.statements.contains(file)) return false;
  for (const auto& sql : work.statements.at(file)) {
    if (sql.starts_with("INSERT") || sql.starts_with("UPDATE") || sql.starts_with("DELETE")) {
      return true;
    }
  }
  return false;
}

// A shop with `orders` orders already synced: in the source table (updated_at spread over two days,
// the last one 2 hours ago), in the ledger as created, the read positions saved at the end.
class SyncedShop {
 public:
  SyncedShop(long orders, bool change_log) : change_log_(change_log) {
    {
      SQLite::Database app(shop_path().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      app.exec("PRAGMA journal_mode = WAL");
      app.exec(testing::read_file(testing::source_path("schema/merchant/source_tables.sql")));
      app.exec("CREATE TABLE shop_notes (note TEXT)");  // a table of the shop's own
      SQLite::Statement insert(app,
                               "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) "
                               "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, "
                               "recipient_name, address1, city, state, zip_code, country, updated_at) "
                               "SELECT printf('HIST-%07d', i), i, 'Standard', 'DTC', 'Customer', '1 Main Street', "
                               "'Austin', 'TX', '10001', 'US', CASE WHEN i = ?1 THEN strftime('%Y-%m-%dT%H:%M:%fZ', "
                               "'now', '-2 hours') ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-50 hours', "
                               "printf('+%d seconds', i * 169000 / ?1)) END FROM n");
      insert.bind(1, static_cast<int64_t>(orders));
      insert.exec();
      // Installed after the history, as on a shop that had it: the log holds no entry yet.
      if (change_log) {
        app.exec(testing::read_file(testing::source_path("schema/merchant/change_log/0001_change_log.sql")));
      }
    }
    config::MerchantConfig config;
    config.sqlite.path = shop_path();
    db_ = std::make_unique<merchant::SqliteMerchantDatabase>(config);
    store_ = std::make_unique<CheckpointStore>(dir_.path() / "checkpoint.db");
    ledger_ = std::make_unique<OutboundLedger>(*store_);
    // The ledger's entries, created. Their hashes are the rows' own only where a poll reads the row
    // again (computing a million takes long).
    {
      SQLite::Database checkpoint((dir_.path() / "checkpoint.db").string(), SQLite::OPEN_READWRITE);
      checkpoint.setBusyTimeout(5000);
      SQLite::Statement entries(checkpoint,
                                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) "
                                "INSERT INTO outbound_ledger (kind, source_key, content_hash, state, attempts, "
                                "remote_id, result_pending, created_at, updated_at) SELECT 'order_create', "
                                "printf('HIST-%07d', i), 'synced', 'created', 1, i, 0, '2026-01-01T00:00:00.000Z', "
                                "'2026-01-01T00:00:00.000Z' FROM n");
      entries.bind(1, static_cast<int64_t>(orders));
      entries.exec();
      // The last order is within an hour of the read position: the look-back window after a start
      // reads it again, and the ledger has its version.
      const auto recent = db_->source().read_orders(
          merchant::ReadRange{.after = {timestamps::format_iso8601_z(timestamps::Clock::now() - 150min), ""}});
      SQLite::Statement hash(checkpoint, "UPDATE outbound_ledger SET content_hash = ?2 WHERE source_key = ?1");
      for (const OrderRow& row : recent) {
        hash.bind(1, row.reference_id);
        hash.bind(2, row.content_hash);
        hash.exec();
        hash.reset();
      }
    }
    SQLite::Database app(shop_path().string(), SQLite::OPEN_READONLY);
    SQLite::Statement last(app, "SELECT updated_at, reference_id FROM fulfillsync_orders ORDER BY updated_at DESC, "
                                "reference_id DESC LIMIT 1");
    last.executeStep();
    store_->save_cursor(SourceIntake<OrderRow>::cursor_name(),
                        encode_cursor({last.getColumn(0).getString(), last.getColumn(1).getString()}));
    if (change_log) store_->save_cursor(SourceIntake<OrderRow>::sequence_name(), "0");
  }

  // An intake as a push job holds it, caught up: its first polls (the look-back window read once
  // after a start) are done.
  std::unique_ptr<SourceIntake<OrderRow>> caught_up_intake(config::Duration look_back) {
    SourceIntake<OrderRow>::Options options;
    options.starting_point = "2020-01-01T00:00:00Z";
    options.feed.look_back = look_back;
    auto intake = std::make_unique<SourceIntake<OrderRow>>(db_->source(), *store_, *ledger_, metrics_, options);
    for (int i = 0; i < 100 && intake->poll(10); ++i) {
    }
    intake->poll(10);
    return intake;
  }

  // What the shop's application does between polls, on its own connection.
  void write(const std::string& sql) {
    SQLite::Database app(shop_path().string(), SQLite::OPEN_READWRITE);
    app.exec(sql);
  }
  void add_order(const std::string& reference) {
    write("BEGIN; INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, "
          "product_name, quantity) VALUES ('" + reference + "', 1, 'TSHIRT-L', 'Organic Cotton T-Shirt L', 1); "
          "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, "
          "address1, city, state, zip_code, country) VALUES ('" + reference + "', '#1', 'Standard', 'DTC', "
          "'Customer', '1 Main Street', 'Austin', 'TX', '10001', 'US'); COMMIT");
  }

  bool change_log() const { return change_log_; }

 private:
  std::filesystem::path shop_path() const { return dir_.path() / "shop.db"; }

  bool change_log_;
  testing::TempDir dir_;
  std::unique_ptr<merchant::SqliteMerchantDatabase> db_;
  std::unique_ptr<CheckpointStore> store_;
  std::unique_ptr<OutboundLedger> ledger_;
  prometheus::Registry registry_;
  SyncMetrics metrics_{registry_};
};

Work measure(SourceIntake<OrderRow>& intake) {
  Work work;
  g_work = &work;
  intake.poll(10);
  g_work = nullptr;
  return work;
}

// The polls measured on one shop with one look_back.
struct Polls {
  Work idle;            // nothing committed since the last poll
  Work other_table;     // the shop committed to a table of its own
  Work one_new_order;   // one order committed (by the change log only: see below)
};

Polls measure_polls(SyncedShop& shop, config::Duration look_back, int run) {
  auto intake = shop.caught_up_intake(look_back);
  Polls polls;
  polls.idle = measure(*intake);
  shop.write("INSERT INTO shop_notes VALUES ('restocked')");
  polls.other_table = measure(*intake);
  if (shop.change_log()) {
    shop.add_order("NEW-" + std::to_string(run));
    polls.one_new_order = measure(*intake);
  }
  return polls;
}

class PollWorkTest : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() {
    spdlog::set_level(spdlog::level::warn);
    sqlite3_auto_extension(reinterpret_cast<void (*)()>(trace_connection));
  }
  static void TearDownTestSuite() {
    sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(trace_connection));
  }
};

TEST_P(PollWorkTest, APollsWorkDoesNotGrowWithHistoryOrLookBack) {
  const bool change_log = GetParam();
  std::vector<std::pair<std::string, Polls>> runs;
  int run = 0;
  // A hundred thousand under a sanitizer, whose setting up of a million rows took minutes: still a
  // history a hundred times the first.
  for (const long orders : {1'000L, testing::kSanitized ? 100'000L : 1'000'000L}) {
    SyncedShop shop(orders, change_log);
    for (const config::Duration look_back : {config::Duration(1min), config::Duration(1h)}) {
      runs.emplace_back(std::to_string(orders) + " orders, look_back " + std::to_string(look_back.count() / 1000) + " s",
                        measure_polls(shop, look_back, ++run));
    }
  }
  const Polls& first = runs.front().second;
  // An idle poll asks the database whether anything was committed (PRAGMA data_version) and stops.
  EXPECT_EQ(first.idle.statements.size(), 1u) << describe(first.idle);
  EXPECT_LE(first.idle.statements.begin()->second.size(), 1u) << describe(first.idle);
  if (change_log) {
    // Another table's commit: the log has nothing for this table; nothing is read whole or written.
    EXPECT_FALSE(writes(first.other_table, "checkpoint.db")) << describe(first.other_table);
    EXPECT_FALSE(writes(first.other_table, "shop.db")) << describe(first.other_table);
    // A new order: its row read by its key, its ledger entry and read position written; handled log
    // entries are deleted in batches, not after each poll.
    EXPECT_FALSE(writes(first.one_new_order, "shop.db")) << describe(first.one_new_order);
  }
  for (const auto& [what, polls] : runs) {
    EXPECT_EQ(polls.idle, first.idle) << what << ":\n" << describe(polls.idle) << "first:\n" << describe(first.idle);
    // Reading by updated_at, a commit elsewhere has the look-back window read again (at most once in
    // a thirtieth of look_back): its rows depend on look_back by design (README, "Change detection").
    if (!change_log) continue;
    EXPECT_EQ(polls.other_table, first.other_table)
        << what << ":\n" << describe(polls.other_table) << "first:\n" << describe(first.other_table);
    EXPECT_EQ(polls.one_new_order.rows, first.one_new_order.rows)
        << what << ":\n" << describe(polls.one_new_order) << "first:\n" << describe(first.one_new_order);
    EXPECT_EQ(polls.one_new_order.statements, first.one_new_order.statements)
        << what << ":\n" << describe(polls.one_new_order) << "first:\n" << describe(first.one_new_order);
  }
}

INSTANTIATE_TEST_SUITE_P(ByChangeLogAndByUpdatedAt, PollWorkTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& param) { return param.param ? "ChangeLog" : "UpdatedAt"; });

}  // namespace
}  // namespace fulfillsync::daemon
