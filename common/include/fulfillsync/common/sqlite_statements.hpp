#pragma once
#include <memory>
#include <string>
#include <unordered_map>

#include <SQLiteCpp/Database.h>
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

}  // namespace fulfillsync::sqlite
