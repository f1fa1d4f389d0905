#include "fulfillsync/common/sqlite_migrations.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::sqlite {
namespace {

constexpr Migration kVersion1 = {1, "create", "CREATE TABLE cursors (job TEXT PRIMARY KEY, position TEXT);"};
constexpr Migration kVersion2 = {2, "add_updated_at", "ALTER TABLE cursors ADD COLUMN updated_at TEXT;"};
constexpr Migration kBroken = {2, "broken", "CREATE TABLE second (x); INSERT INTO no_such_table VALUES (1);"};

class SqliteMigrationsTest : public ::testing::Test {
 protected:
  testing::TempDir dir;
  SQLite::Database open() {
    return SQLite::Database((dir / "store.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  }
};

TEST_F(SqliteMigrationsTest, FreshDatabaseGetsEveryMigration) {
  auto db = open();
  const Migration all[] = {kVersion1, kVersion2};
  EXPECT_EQ(migrate(db, all, "schema_migrations", "test store"), 2);
  EXPECT_EQ(schema_version(db, "schema_migrations"), 2);
  db.exec("INSERT INTO cursors (job, position, updated_at) VALUES ('a', 'b', 'c')");
}

TEST_F(SqliteMigrationsTest, UpgradeAppliesOnlyTheNewSteps) {
  {
    auto db = open();
    const Migration first[] = {kVersion1};
    migrate(db, first, "schema_migrations", "test store");
    db.exec("INSERT INTO cursors (job, position) VALUES ('pull_shipments', '2026-01-01')");
  }
  auto db = open();
  const Migration both[] = {kVersion1, kVersion2};
  EXPECT_EQ(migrate(db, both, "schema_migrations", "test store"), 2);
  // The data written under version 1 survived the upgrade.
  EXPECT_EQ(db.execAndGet("SELECT position FROM cursors WHERE job = 'pull_shipments'").getString(), "2026-01-01");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM schema_migrations").getInt(), 2);
}

TEST_F(SqliteMigrationsTest, MigratingTwiceChangesNothing) {
  auto db = open();
  const Migration both[] = {kVersion1, kVersion2};
  migrate(db, both, "schema_migrations", "test store");
  EXPECT_EQ(migrate(db, both, "schema_migrations", "test store"), 2);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM schema_migrations").getInt(), 2);
}

TEST_F(SqliteMigrationsTest, NewerThanKnownIsRefusedWithAClearMessage) {
  {
    auto db = open();
    const Migration both[] = {kVersion1, kVersion2};
    migrate(db, both, "schema_migrations", "test store");
  }
  auto db = open();
  const Migration older[] = {kVersion1};
  try {
    migrate(db, older, "schema_migrations", "checkpoint store x.db");
    FAIL() << "a newer store was accepted";
  } catch (const MigrationError& e) {
    EXPECT_STREQ(e.what(),
                 "checkpoint store x.db is at schema version 2, but this fulfillsync (newest schema version 1) is "
                 "older than the one that wrote it; run the newer fulfillsync or restore a backup taken before the "
                 "upgrade");
  }
  EXPECT_EQ(schema_version(db, "schema_migrations"), 2);
}

TEST_F(SqliteMigrationsTest, FailedStepIsRolledBackWhole) {
  auto db = open();
  const Migration steps[] = {kVersion1, kBroken};
  EXPECT_THROW(migrate(db, steps, "schema_migrations", "test store"), MigrationError);
  EXPECT_EQ(schema_version(db, "schema_migrations"), 1);
  EXPECT_FALSE(db.tableExists("second"));
}

using SqliteMigrationsDeathTest = SqliteMigrationsTest;

// Checked in every build type, Release included: a swapped step would run on a schema it was not
// written for, and the table name is written into SQL as it is.
TEST_F(SqliteMigrationsDeathTest, AMisnumberedListOrAnUnsafeTableNameStopsTheProcess) {
  auto db = open();
  const Migration swapped[] = {kVersion2, kVersion1};
  EXPECT_DEATH(migrate(db, swapped, "schema_migrations", "test store"), "migrations are numbered 1, 2, 3");
  const Migration all[] = {kVersion1, kVersion2};
  EXPECT_DEATH(migrate(db, all, "x\"; DROP TABLE cursors; --", "test store"), "a version table is named in plain SQL");
  EXPECT_DEATH(schema_version(db, "Schema"), "a version table is named in plain SQL");
}

}  // namespace
}  // namespace fulfillsync::sqlite
