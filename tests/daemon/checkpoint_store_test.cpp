#include "fulfillsync/daemon/checkpoint_store.hpp"

#include <sys/stat.h>

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fulfillsync::daemon
