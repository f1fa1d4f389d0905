#include "fulfillsync/merchant/postgres_merchant_database.hpp"

#include "postgres_pulled_tables.hpp"
#include "postgres_source_tables.hpp"
#include "postgres_support.hpp"
#include "postgres_sync_results.hpp"

namespace fulfillsync::merchant {

PostgresMerchantDatabase::PostgresMerchantDatabase(const config::MerchantConfig& config, Access access)
    : connection_(std::make_unique<PostgresConnection>(config, access == Access::read_only)),
      source_(std::make_unique<PostgresSourceTables>(*connection_)),
      results_(std::make_unique<PostgresSyncResults>(*connection_)),
      pulled_(make_postgres_pulled_tables(*connection_)) {
  if (access == Access::read_write) prepare_postgres_result_tables(*connection_, config.manage_result_tables);
}

PostgresMerchantDatabase::~PostgresMerchantDatabase() = default;

std::string PostgresMerchantDatabase::describe() const { return connection_->describe(); }

void PostgresMerchantDatabase::ping() { connection_->run("ping", "SELECT 1"); }

SourceTables& PostgresMerchantDatabase::source() { return *source_; }
SyncResults& PostgresMerchantDatabase::results() { return *results_; }
PulledTables& PostgresMerchantDatabase::pulled() { return *pulled_; }

int PostgresMerchantDatabase::result_schema_version() { return postgres_result_schema_version(*connection_); }

}  // namespace fulfillsync::merchant
