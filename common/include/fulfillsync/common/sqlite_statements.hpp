#pragma once
#include <memory>
#include <string>
#include <unordered_map>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

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
      statement->reset();
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
    if (ended_) return;
    try {
      statements_.prepared(db_, "ROLLBACK").exec();
    } catch (const SQLite::Exception&) {
      // Already rolled back by SQLite (an I/O error, a full disk): nothing is left open.
    }
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
