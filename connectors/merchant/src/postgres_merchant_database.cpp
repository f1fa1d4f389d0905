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

std::optional<OldestTransaction> PostgresMerchantDatabase::oldest_open_transaction() {
  // pg_stat_activity hides xact_start of other roles' sessions unless the role has pg_read_all_stats
  // (a superuser has it): then "none open" cannot be told from "none visible".
  const PgResult oldest = connection_->run(
      "reading the oldest open transaction (pg_stat_activity)",
      "SELECT pg_has_role(current_user, 'pg_read_all_stats', 'USAGE'), "
      "coalesce(floor(extract(epoch FROM clock_timestamp() - min(xact_start)) * 1000), 0)::bigint "
      "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
      "AND backend_type = 'client backend' AND xact_start IS NOT NULL");
  return OldestTransaction{.visible = oldest.text(0, 0) == "t", .age = std::chrono::milliseconds(oldest.integer(0, 1))};
}

void PostgresMerchantDatabase::observe_failures(DatabaseFailureObserver& observer) {
  connection_->observe_failures(observer);
}

void PostgresMerchantDatabase::reopen_without_delay() { connection_->reopen_without_delay(); }

SourceTables& PostgresMerchantDatabase::source() { return *source_; }
SyncResults& PostgresMerchantDatabase::results() { return *results_; }
PulledTables& PostgresMerchantDatabase::pulled() { return *pulled_; }

int PostgresMerchantDatabase::result_schema_version() { return postgres_result_schema_version(*connection_); }

}  // namespace fulfillsync::merchant
