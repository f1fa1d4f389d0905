#pragma once
// What the three SQLite faces (sqlite_source_tables.cpp, sqlite_sync_results.cpp,
// sqlite_pulled_tables.cpp) share: the one connection, quoting, guarded transactions, and the one
// way they bind values and write rows (SqlValues, Upsert).
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include "fulfillsync/common/sqlite_read_only.hpp"
#include "fulfillsync/common/sqlite_statements.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/merchant/database_error.hpp"
#include "fulfillsync/merchant/source_rows.hpp"
#include "sql_names.hpp"
#include "sql_values.hpp"

namespace fulfillsync::merchant {

// The open merchant database file, shared by the faces (one thread uses them).
class SqliteConnection {
 public:
  // The file must exist. read_only: SQLITE_OPEN_READONLY, leaving no side file behind.
  SqliteConnection(const config::MerchantConfig& config, bool read_only);
  ~SqliteConnection();

  SQLite::Database& db() { return *db_; }
  // The statement for `sql`, prepared on first use and reset for reuse: for what every poll runs. A
  // caller that stops stepping a query early resets it (left on a row, it holds its read snapshot).
  SQLite::Statement& prepared(const std::string& sql);
  // A transaction over cached statements (see sqlite::CachedTransaction); `begin` as it says there.
  sqlite::CachedTransaction transaction(const std::string& begin) { return {statements_, *db_, begin}; }
  const std::filesystem::path& path() const { return path_; }
  const std::string& prefix() const { return prefix_; }

  // The quoted name of the result table `{prefix}<name>`.
  std::string table(std::string_view name) const { return sql_name(prefix_ + std::string(name)); }
  // `{prefix}order_sync` or `{prefix}return_sync`, quoted.
  std::string result_table(SourceKind kind) const {
    return table(result_table_name(kind));
  }

  // Runs `work`, turning SQLite's exceptions into a MerchantDatabaseError that names the database
  // and what was being done.
  template <typename Work>
  auto guarded(std::string_view task, Work work) -> decltype(work()) {
    try {
      return work();
    } catch (const SQLite::Exception& e) {
      throw MerchantDatabaseError(fmt::format("merchant database {}: {}: {}", path_.string(), task, e.what()));
    }
  }

  // Runs `work` in one IMMEDIATE transaction, guarded: the write lock is taken up front (waiting up to
  // the busy timeout) instead of failing halfway when the merchant's application holds it.
  template <typename Work>
  auto in_write_transaction(std::string_view task, Work work) -> decltype(work()) {
    return guarded(task, [&] {
      sqlite::CachedTransaction transaction = this->transaction("BEGIN IMMEDIATE");
      if constexpr (std::is_void_v<decltype(work())>) {
        work();
        transaction.commit();
      } else {
        auto result = work();
        transaction.commit();
        return result;
      }
    });
  }

 private:
  std::filesystem::path path_;
  std::string prefix_;
  std::optional<sqlite::SideFileSweep> side_files_;  // read_only; outlives db_
  std::unique_ptr<SQLite::Database> db_;
  sqlite::StatementCache statements_;  // finalized before db_ closes
};

// Binds `value` (sql_values.hpp) to the statement's parameter `index`. Text is bound where it lies,
// not copied: the value must outlive the statement's execution, under a ClearedAfterUse.
void bind(SQLite::Statement& statement, int index, const SqlValue& value);

// Clears a statement's bindings when it goes out of scope, so that a cached statement never keeps
// a pointer into values that are gone (bind() does not copy text). Every use of a statement bound
// with bind() is under one, so it starts with no values left from the last.
class ClearedAfterUse {
 public:
  explicit ClearedAfterUse(SQLite::Statement& statement) : statement_(statement) {}
  ~ClearedAfterUse();
  ClearedAfterUse(const ClearedAfterUse&) = delete;
  ClearedAfterUse& operator=(const ClearedAfterUse&) = delete;

 private:
  SQLite::Statement& statement_;
};

// Runs `statement` (written with `:name` parameters) again with these values, every parameter
// named (one left out would be NULL); returns how many rows it changed.
int run(SQLite::Statement& statement, SqlValues values);
inline int run(SQLite::Statement& statement, std::initializer_list<Named> values) {
  return run(statement, SqlValues(values.begin(), values.size()));
}

// Writes rows into one table one at a time, each value named beside its column: the one way the
// SQLite faces insert or upsert. The first row fixes the columns; every later row names the same
// ones in the same order.
class Upsert final : public RowUpsert {
 public:
  using OnConflict = merchant::OnConflict;
  using RowUpsert::write;

  // Plain inserts: a conflict fails.
  Upsert(SQLite::Database& db, std::string table);
  Upsert(SQLite::Database& db, std::string table, OnConflict on_conflict);
  ~Upsert() override;

  int write(SqlValues row) override;

 private:
  std::vector<std::vector<std::string>> run_batches(std::span<const Batch> batches, bool read) override;
  std::string numbered_parameter(std::size_t index) const override { return fmt::format("?{}", index + 1); }

  SQLite::Database& db_;
  std::vector<int> indexes_;  // of the first row's columns' parameters in `statement_`
  std::unique_ptr<SQLite::Statement> statement_;  // of one row
  std::map<const std::string*, std::unique_ptr<SQLite::Statement>> batch_statements_;  // by their SQL
};

std::optional<std::string> optional_text(const SQLite::Column& column);
std::optional<timestamps::TimePoint> optional_time(const SQLite::Column& column);
// Now, as the result tables write times.
std::string now_text();

}  // namespace fulfillsync::merchant
