#include "fulfillsync/common/sqlite_statements.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::sqlite {
namespace {

class SqliteStatementsTest : public ::testing::Test {
 protected:
  testing::TempDir dir;
  SQLite::Database db{(dir / "store.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE};
  StatementCache statements;

  void SetUp() override {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("CREATE TABLE t (x UNIQUE)");
  }
  bool in_transaction() { return sqlite3_get_autocommit(db.getHandle()) == 0; }
  long long rows() { return db.execAndGet("SELECT count(*) FROM t").getInt64(); }
};

// sqlite3_reset reports the failure of a statement's last step once more. A cached statement is
// taken again after its caller has had that failure: it must run, not fail a second time.
TEST_F(SqliteStatementsTest, AStatementWhoseStepFailedRunsAtItsNextUse) {
  const std::string insert = "INSERT INTO t VALUES (?)";
  SQLite::Statement& first = statements.prepared(db, insert);
  first.bind(1, 1);
  first.exec();
  SQLite::Statement& duplicate = statements.prepared(db, insert);
  duplicate.bind(1, 1);
  EXPECT_THROW(duplicate.exec(), SQLite::Exception);

  SQLite::Statement& next = statements.prepared(db, insert);
  next.bind(1, 2);
  EXPECT_NO_THROW(next.exec());
  EXPECT_EQ(rows(), 2);
}

// A full disk makes SQLite end the transaction itself, so its ROLLBACK fails. The transactions after
// it must still be rolled back when they are not committed: one left open refused every later BEGIN
// on the connection, and the daemon's jobs failed until it was restarted.
TEST_F(SqliteStatementsTest, TransactionsAfterOneAFullDiskEndedAreStillRolledBack) {
  const long long pages = db.execAndGet("PRAGMA page_count").getInt64();
  db.exec("PRAGMA max_page_count = " + std::to_string(pages + 2));  // the disk, nearly full
  {
    CachedTransaction transaction(statements, db, "BEGIN IMMEDIATE");
    const std::string insert = "INSERT INTO t VALUES (randomblob(3000))";
    EXPECT_THROW(for (int i = 0; i < 100; ++i) statements.prepared(db, insert).exec(), SQLite::Exception);
    EXPECT_FALSE(in_transaction()) << "SQLite ended it";
  }
  db.exec("PRAGMA max_page_count = 1000000");  // room again

  {
    CachedTransaction abandoned(statements, db, "BEGIN IMMEDIATE");
    statements.prepared(db, "INSERT INTO t VALUES ('abandoned')").exec();
  }
  EXPECT_FALSE(in_transaction());
  EXPECT_EQ(rows(), 0);

  CachedTransaction next(statements, db, "BEGIN IMMEDIATE");
  statements.prepared(db, "INSERT INTO t VALUES ('kept')").exec();
  next.commit();
  EXPECT_EQ(rows(), 1);
}

}  // namespace
}  // namespace fulfillsync::sqlite
