#include "fulfillsync/merchant/sqlite_merchant_database.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

namespace fulfillsync::merchant {

SqliteMerchantDatabase::SqliteMerchantDatabase(const config::SqliteConfig& config) : path_(config.path) {
  if (!std::filesystem::exists(path_)) {
    throw MerchantDatabaseError(fmt::format("merchant database {} does not exist", path_.string()));
  }
  try {
    db_ = std::make_unique<SQLite::Database>(path_.string(), SQLite::OPEN_READWRITE);
    // The merchant's application writes to the same file: wait for its locks rather than fail.
    db_->setBusyTimeout(static_cast<int>(config.busy_timeout.count()));
    ping();
  } catch (const SQLite::Exception& e) {
    throw MerchantDatabaseError(fmt::format("merchant database {}: {}", path_.string(), e.what()));
  }
}

SqliteMerchantDatabase::~SqliteMerchantDatabase() = default;

std::string SqliteMerchantDatabase::describe() const { return fmt::format("sqlite {}", path_.string()); }

void SqliteMerchantDatabase::ping() {
  try {
    // Reading the schema fails on a file that is not a database.
    SQLite::Statement probe(*db_, "SELECT count(*) FROM sqlite_master");
    probe.executeStep();
  } catch (const SQLite::Exception& e) {
    throw MerchantDatabaseError(fmt::format("merchant database {}: {}", path_.string(), e.what()));
  }
}

}  // namespace fulfillsync::merchant
