#include "fulfillsync/daemon/store/checkpoint_store.hpp"

#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/schema/migrations.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::daemon {
namespace {

using ::testing::HasSubstr;

TEST(CheckpointStoreTest, FreshStoreIsMigratedPrivateAndInWalMode) {
  testing::TempDir dir;
  CheckpointStore store(dir / "checkpoint.db");
  EXPECT_EQ(store.schema_version(), static_cast<int>(schema::checkpoint_migrations().size()));
  for (const char* table : {"cursors", "outbound_ledger", "tokens"}) {
    EXPECT_TRUE(store.database().tableExists(table)) << table;
  }
  EXPECT_EQ(store.database().execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_EQ(store.database().execAndGet("PRAGMA synchronous").getInt(), 2);  // FULL
  struct stat st {};
  ASSERT_EQ(stat((dir / "checkpoint.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(CheckpointStoreTest, ReopeningKeepsTheData) {
  testing::TempDir dir;
  {
    CheckpointStore store(dir / "checkpoint.db");
    store.database().exec(
        "INSERT INTO cursors (job, position, updated_at) VALUES ('pull_shipments', '2026-01-01T00:00:00Z', 'now')");
  }
  CheckpointStore store(dir / "checkpoint.db");
  EXPECT_EQ(store.database().execAndGet("SELECT position FROM cursors").getString(), "2026-01-01T00:00:00Z");
}

TEST(CheckpointStoreTest, StoreFromANewerVersionIsRefused) {
  testing::TempDir dir;
  { CheckpointStore store(dir / "checkpoint.db"); }
  {
    SQLite::Database db((dir / "checkpoint.db").string(), SQLite::OPEN_READWRITE);
    db.exec("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
  }
  try {
    CheckpointStore store(dir / "checkpoint.db");
    FAIL() << "opened a store from a newer version";
  } catch (const CheckpointStoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is at schema version 999, but this fulfillsync"));
  }
}

TEST(CheckpointStoreTest, OnlyOneHolderAtATime) {
  testing::TempDir dir;
  CheckpointStore first(dir / "checkpoint.db");
  EXPECT_THROW(CheckpointStore second(dir / "checkpoint.db"), CheckpointStoreError);
}

TEST(CheckpointStoreTest, MissingDirectoryIsAClearError) {
  testing::TempDir dir;
  try {
    CheckpointStore store(dir / "no-such-dir" / "checkpoint.db");
    FAIL();
  } catch (const CheckpointStoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-dir does not exist"));
  }
}

std::set<std::string> file_names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

TEST(CheckpointStoreTest, ReadOnlyAccessChangesNothingOnDisk) {
  testing::TempDir dir;
  const auto path = dir / "checkpoint.db";
  EXPECT_THROW(CheckpointStore store(path, CheckpointStore::Access::read_only), CheckpointStoreError);
  EXPECT_FALSE(std::filesystem::exists(path));  // a missing store is not created

  { CheckpointStore(path).save_cursor("pull_shipments", "2026-01-01T00:00:00Z"); }
  const auto names = file_names(dir.path());
  ASSERT_EQ(names, std::set<std::string>{"checkpoint.db"});
  const std::string bytes = testing::read_file(path);
  {
    CheckpointStore store(path, CheckpointStore::Access::read_only);
    EXPECT_EQ(store.cursor("pull_shipments"), "2026-01-01T00:00:00Z");
    EXPECT_THROW(store.save_cursor("pull_shipments", "2026-02-01T00:00:00Z"), SQLite::Exception);
    // Reading a WAL database nobody else has open creates its side files; closing removes them.
    EXPECT_TRUE(std::filesystem::exists(dir / "checkpoint.db-shm"));
  }
  EXPECT_EQ(file_names(dir.path()), names);
  EXPECT_TRUE(testing::read_file(path) == bytes);

  // Beside the running daemon the side files are its own: they stay.
  CheckpointStore daemon(path);
  daemon.cursor("pull_shipments");
  const auto in_use = file_names(dir.path());
  { CheckpointStore(path, CheckpointStore::Access::read_only).cursor("pull_shipments"); }
  EXPECT_EQ(file_names(dir.path()), in_use);
  EXPECT_TRUE(in_use.contains("checkpoint.db-wal"));
}

// Every row of a query, its columns joined, for comparing a table before and after a migration.
std::vector<std::string> rows_of(SQLite::Database& db, const std::string& sql) {
  std::vector<std::string> rows;
  SQLite::Statement query(db, sql);
  while (query.executeStep()) {
    std::string row;
    for (int c = 0; c < query.getColumnCount(); ++c) {
      row += (query.getColumn(c).isNull() ? "NULL" : query.getColumn(c).getString()) + "|";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// A constant list of more than two values in a CHECK constraint is checked by building a temporary
// B-tree of it on every write (OpenEphemeral): the ledgers' writes of every order and shipment
// must not pay for that.
TEST(CheckpointStoreTest, TheLedgersWritesBuildNoTemporaryTableToCheckTheirConstraints) {
  testing::TempDir dir;
  CheckpointStore store(dir / "checkpoint.db");
  for (const char* write :
       {"INSERT INTO outbound_ledger (kind, source_key, content_hash, state, body, created_at, updated_at) "
        "VALUES ('order_create', 'O-1', 'h', 'pending', 'b', 't', 't')",
        "UPDATE outbound_ledger SET state = 'in_flight' WHERE kind = 'order_create' AND source_key = 'O-1'",
        "INSERT INTO tracking_marks (shipment_id, order_id, state, next_attempt_at, created_at, updated_at) "
        "VALUES (1, 2, 'pending', 't', 't', 't')",
        "UPDATE tracking_marks SET state = 'in_flight' WHERE shipment_id = 1"}) {
    SQLite::Statement program(store.database(), std::string("EXPLAIN ") + write);
    int temporary_tables = 0;
    while (program.executeStep()) {
      if (program.getColumn(1).getString() == "OpenEphemeral") ++temporary_tables;
    }
    EXPECT_EQ(temporary_tables, 0) << write;
  }
}

// Version 10 rebuilds both ledgers: every entry, mark and count comes through; the constraints and
// the counting triggers hold as before.
TEST(CheckpointStoreTest, TheLedgersRebuiltByVersion10KeepEveryEntryTheirCountsAndTheirRules) {
  testing::TempDir dir;
  const auto path = dir / "checkpoint.db";
  const std::string entries = "SELECT * FROM outbound_ledger ORDER BY kind, source_key";
  const std::string marks = "SELECT * FROM tracking_marks ORDER BY shipment_id";
  const std::string counts = "SELECT kind, state, count FROM outbound_ledger_counts WHERE count > 0 ORDER BY 1, 2";
  std::vector<std::string> entries_before, marks_before, counts_before;
  {
    SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    const auto all = schema::checkpoint_migrations();
    ASSERT_GE(all.size(), 10u);
    sqlite::migrate(db, all.first(9), "schema_migrations", "checkpoint store");
    db.exec("INSERT INTO outbound_ledger (kind, source_key, content_hash, state, attempts, body, remote_id, "
            "remote_status, last_error, note, result_pending, created_at, updated_at, remote_created_at, sent_at, "
            "read_at) VALUES "
            "('order_create', 'O-1', 'h1', 'pending', 0, X'7B7D', NULL, NULL, NULL, NULL, 1, 'c1', 'u1', NULL, NULL, "
            "'r1'), "
            "('order_create', 'O-2', 'h2', 'created', 1, X'7B7D', 7, 'Received', NULL, 'n', 0, 'c2', 'u2', 'rc2', "
            "'s2', 'r2'), "
            "('order_cancel', 'O-2', 'h3', 'applied', 1, NULL, 7, NULL, NULL, NULL, 0, 'c3', 'u3', NULL, 's3', NULL), "
            "('return_create', 'R-1', 'h4', 'rejected', 1, X'7B7D', NULL, NULL, 'bad sku', NULL, 1, 'c4', 'u4', "
            "NULL, 's4', 'r4')");
    db.exec("INSERT INTO tracking_marks (shipment_id, order_id, state, attempts, last_error, next_attempt_at, "
            "result_pending, created_at, updated_at) VALUES (10, 7, 'marked', 1, NULL, 'n1', 0, 'c1', 'u1'), "
            "(11, 8, 'unknown', 2, 'timeout', 'n2', 1, 'c2', 'u2')");
    entries_before = rows_of(db, entries);
    marks_before = rows_of(db, marks);
    counts_before = rows_of(db, counts);
  }
  CheckpointStore store(path);
  SQLite::Database& db = store.database();
  EXPECT_EQ(store.schema_version(), 10);
  EXPECT_EQ(rows_of(db, entries), entries_before);
  EXPECT_EQ(rows_of(db, marks), marks_before);
  EXPECT_EQ(rows_of(db, counts), counts_before);

  db.exec("UPDATE outbound_ledger SET state = 'in_flight' WHERE source_key = 'O-1'");
  db.exec("DELETE FROM outbound_ledger WHERE kind = 'return_create'");
  EXPECT_EQ(rows_of(db, counts), (std::vector<std::string>{"order_cancel|applied|1|", "order_create|created|1|",
                                                           "order_create|in_flight|1|"}));
  EXPECT_THROW(db.exec("UPDATE outbound_ledger SET state = 'sent' WHERE source_key = 'O-1'"), SQLite::Exception);
  EXPECT_THROW(db.exec("UPDATE outbound_ledger SET state = 'applied' WHERE kind = 'order_create'"), SQLite::Exception);
  EXPECT_THROW(db.exec("UPDATE outbound_ledger SET state = 'created' WHERE kind = 'order_cancel'"), SQLite::Exception);
  EXPECT_THROW(db.exec("UPDATE outbound_ledger SET kind = 'order_update' WHERE source_key = 'O-1'"),
               SQLite::Exception);
  EXPECT_THROW(db.exec("UPDATE tracking_marks SET state = 'sent'"), SQLite::Exception);
}

}  // namespace
}  // namespace fulfillsync::daemon
