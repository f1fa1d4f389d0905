#include "fulfillsync/daemon/store/checkpoint_store.hpp"

#include <sys/stat.h>

#include <set>

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

}  // namespace
}  // namespace fulfillsync::daemon
