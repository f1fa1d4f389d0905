#pragma once
// The result tables' numbered migrations with the configured prefix substituted for `{prefix}`:
// schema/merchant/results/ for SQLite, schema/merchant/postgresql/results/ for PostgreSQL.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/common/sqlite_migrations.hpp"

namespace fulfillsync::merchant {

class ResultMigrations {
 public:
  ResultMigrations(std::string_view prefix, std::span<const sqlite::Migration> embedded);
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
