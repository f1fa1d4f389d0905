#include "fulfillsync/merchant/sqlite_merchant_database.hpp"

#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/schema/migrations.hpp"
#include "sqlite_contract.hpp"
#include "sqlite_pulled_tables.hpp"
#include "sqlite_source_tables.hpp"
#include "sqlite_support.hpp"
#include "sqlite_sync_results.hpp"

namespace fulfillsync::merchant {

SqliteMerchantDatabase::SqliteMerchantDatabase(const config::MerchantConfig& config, Access access)
    : connection_(std::make_unique<SqliteConnection>(config, access == Access::read_only)),
      source_(std::make_unique<SqliteSourceTables>(*connection_)),
      results_(std::make_unique<SqliteSyncResults>(*connection_)),
      pulled_(make_sqlite_pulled_tables(*connection_)) {
  try {
    ping();
    if (access == Access::read_write) prepare_result_tables(config.manage_result_tables);
  } catch (const SQLite::Exception& e) {
    throw MerchantDatabaseError(fmt::format("merchant database {}: {}", connection_->path().string(), e.what()));
  } catch (const sqlite::MigrationError& e) {
    throw MerchantDatabaseError(e.what());
  }
}

SqliteMerchantDatabase::~SqliteMerchantDatabase() = default;

std::string SqliteMerchantDatabase::describe() const { return fmt::format("sqlite {}", connection_->path().string()); }

void SqliteMerchantDatabase::ping() {
  connection_->guarded("ping", [&] {
    // Reading the schema fails on a file that is not a database.
    SQLite::Statement probe(connection_->db(), "SELECT count(*) FROM sqlite_master");
    probe.executeStep();
  });
}

SourceTables& SqliteMerchantDatabase::source() { return *source_; }
SyncResults& SqliteMerchantDatabase::results() { return *results_; }
PulledTables& SqliteMerchantDatabase::pulled() { return *pulled_; }

void SqliteMerchantDatabase::prepare_result_tables(bool manage) {
  SQLite::Database& db = connection_->db();
  const std::filesystem::path& path = connection_->path();
  const ResultMigrations migrations(connection_->prefix(), schema::merchant_result_migrations());
  if (!manage) {
    const int version = sqlite::schema_version(db, migrations.version_table());
    if (version != static_cast<int>(migrations.steps().size())) {
      throw MerchantDatabaseError(fmt::format(
          "merchant database {}: the result tables (prefix {}) are at schema version {}, this fulfillsync writes "
          "version {}; apply schema/merchant/results/*.sql with the prefix, or set "
          "merchant.manage_result_tables: true",
          path.string(), connection_->prefix(), version, migrations.steps().size()));
    }
    return;
  }
  sqlite::migrate(db, migrations.steps(), migrations.version_table(),
                  fmt::format("the result tables in {}", path.string()));
}

int SqliteMerchantDatabase::result_schema_version() {
  return connection_->guarded("reading the result tables' version", [&] {
    return sqlite::schema_version(connection_->db(), connection_->prefix() + "schema_migrations");
  });
}

}  // namespace fulfillsync::merchant
