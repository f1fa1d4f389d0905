#pragma once
// The merchant database in PostgreSQL: its three faces over one libpq connection
// (src/postgres_source_tables.cpp, src/postgres_sync_results.cpp, src/postgres_pulled_tables.cpp,
// with what they share in src/postgres_support.hpp). The source tables are read in
// merchant.postgresql.source_schema, the result tables kept in merchant.postgresql.result_schema.
#include <memory>
#include <string>

#include "fulfillsync/merchant/merchant_database.hpp"

namespace fulfillsync::merchant {

class PostgresConnection;
class PostgresSourceTables;
class PostgresSyncResults;

class PostgresMerchantDatabase final : public MerchantDatabase {
 public:
  enum class Access {
    // Prepares the result tables (see open_merchant_database).
    read_write,
    // Every transaction read only (default_transaction_read_only): the result tables are neither
    // created nor checked, and every write throws.
    read_only,
  };

  // Connects; throws MerchantDatabaseError with the server's or libpq's message when it cannot.
  explicit PostgresMerchantDatabase(const config::MerchantConfig& config, Access access = Access::read_write);
  ~PostgresMerchantDatabase() override;

  std::string describe() const override;
  void ping() override;
  // From pg_stat_activity: the other sessions' transactions in this database.
  std::optional<OldestTransaction> oldest_open_transaction() override;
  void observe_failures(DatabaseFailureObserver& observer) override;
  void reopen_without_delay() override;
  SourceTables& source() override;
  SyncResults& results() override;
  PulledTables& pulled() override;

  // The result tables' schema version (0 before the first migration).
  int result_schema_version();

 private:
  std::unique_ptr<PostgresConnection> connection_;  // outlives the faces
  std::unique_ptr<PostgresSourceTables> source_;
  std::unique_ptr<PostgresSyncResults> results_;
  std::unique_ptr<PulledTables> pulled_;
};

}  // namespace fulfillsync::merchant
