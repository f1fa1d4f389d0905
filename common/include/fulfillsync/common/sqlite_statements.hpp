#pragma once
#include <memory>
#include <string>
#include <unordered_map>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include "fulfillsync/common/invariant.hpp"

namespace fulfillsync::sqlite {

// Statements prepared once per connection and reused: SQLite parses and plans a statement's text at
// every prepare. Cleared (finalized) before the connection closes.
class StatementCache {
 public:
  // The statement for `sql`, reset with its bindings cleared.
  SQLite::Statement& prepared(SQLite::Database& db, const std::string& sql) {
    auto& statement = statements_[sql];
    if (!statement) {
      statement = std::make_unique<SQLite::Statement>(db, sql);
    } else {
      // Not reset(): after a step that failed, sqlite3_reset reports that failure once more, which
      // the statement's caller has already had. The statement is reset all the same.
      statement->tryReset();
      statement->clearBindings();
    }
    return *statement;
  }
  void clear() { statements_.clear(); }

 private:
  std::unordered_map<std::string, std::unique_ptr<SQLite::Statement>> statements_;
};

// A transaction begun and ended by statements of a StatementCache: opening and committing one
// compiles nothing (SQLite::Transaction runs BEGIN and COMMIT from their text, compiled each time).
// Rolled back unless committed.
class CachedTransaction {
 public:
  // `begin`: "BEGIN DEFERRED" or "BEGIN IMMEDIATE".
  CachedTransaction(StatementCache& statements, SQLite::Database& db, const std::string& begin)
      : statements_(statements), db_(db) {
    SQLite::Statement& statement = statements_.prepared(db_, begin);
    try {
      statement.exec();
    } catch (const SQLite::Exception&) {
      // A BEGIN IMMEDIATE refused as busy still holds its read snapshot until reset: later reads on
      // the connection would not see newer commits.
      statement.tryReset();
      throw;
    }
  }
  ~CachedTransaction() {
    // SQLite rolls a transaction back itself on some failures (a full disk, an I/O error).
    if (ended_ || sqlite3_get_autocommit(db_.getHandle()) != 0) return;
    try {
      statements_.prepared(db_, "ROLLBACK").exec();
    } catch (const SQLite::Exception&) {
      // Checked below: whatever the error, what matters is whether the transaction is still open.
    }
    FULFILLSYNC_INVARIANT(sqlite3_get_autocommit(db_.getHandle()) != 0,
                          "a transaction that cannot be rolled back would refuse every later one on its connection");
  }
  CachedTransaction(const CachedTransaction&) = delete;
  CachedTransaction& operator=(const CachedTransaction&) = delete;

  void commit() {
    statements_.prepared(db_, "COMMIT").exec();
    ended_ = true;
  }

 private:
  StatementCache& statements_;
  SQLite::Database& db_;
  bool ended_ = false;
};

}  // namespace fulfillsync::sqlite
