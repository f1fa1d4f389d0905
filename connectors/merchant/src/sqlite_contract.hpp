#pragma once
// The parts of the merchant database contract that the SQLite database and its read-only check
// (sqlite_check.hpp) share.
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/common/sqlite_migrations.hpp"

namespace SQLite {
class Database;
}

namespace fulfillsync::merchant {

// Problems with the source tables (a table or column of the contract missing), one line each.
std::vector<std::string> source_contract_problems(SQLite::Database& db);

// The result tables' migrations with the configured prefix substituted for `{prefix}`.
class ResultMigrations {
 public:
  explicit ResultMigrations(std::string_view prefix);
  // The steps point into this object's text: it stays where it was made.
  ResultMigrations(const ResultMigrations&) = delete;
  ResultMigrations& operator=(const ResultMigrations&) = delete;

  const std::vector<sqlite::Migration>& steps() const { return steps_; }
  std::string version_table() const { return prefix_ + "schema_migrations"; }

 private:
  std::string prefix_;
  std::vector<std::string> sql_;
  std::vector<sqlite::Migration> steps_;
};

}  // namespace fulfillsync::merchant
