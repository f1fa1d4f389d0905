#pragma once
// The merchant database in one SQLite file: its three faces over one connection
// (src/sqlite_source_tables.cpp, src/sqlite_sync_results.cpp, src/sqlite_pulled_tables.cpp, with
// what they share in src/sqlite_support.hpp).
#include <memory>
#include <string>

#include "fulfillsync/merchant/merchant_database.hpp"

namespace fulfillsync::merchant {

class SqliteConnection;
class SqliteSourceTables;
class SqliteSyncResults;

class SqliteMerchantDatabase final : public MerchantDatabase {
 public:
  enum class Access {
    // Prepares the result tables (see open_merchant_database).
    read_write,
    // SQLITE_OPEN_READONLY: the result tables are neither created nor checked, every write throws, and
    // closing leaves no side file that was not there before.
    read_only,
  };

  // The file must exist: it belongs to the merchant's application, which creates it.
  explicit SqliteMerchantDatabase(const config::MerchantConfig& config, Access access = Access::read_write);
  ~SqliteMerchantDatabase() override;

  std::string describe() const override;
  void ping() override;
  SourceTables& source() override;
  SyncResults& results() override;
  PulledTables& pulled() override;

  // The result tables' schema version (0 before the first migration).
  int result_schema_version();

 private:
  void prepare_result_tables(bool manage);

  std::unique_ptr<SqliteConnection> connection_;  // outlives the faces
  std::unique_ptr<SqliteSourceTables> source_;
  std::unique_ptr<SqliteSyncResults> results_;
  std::unique_ptr<PulledTables> pulled_;
};

}  // namespace fulfillsync::merchant
