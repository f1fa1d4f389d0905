#include "fulfillsync/merchant/merchant_database.hpp"

#include "fulfillsync/common/invariant.hpp"

#include "fulfillsync/merchant/postgres_merchant_database.hpp"
#include "fulfillsync/merchant/sqlite_merchant_database.hpp"

namespace fulfillsync::merchant {

std::string_view to_string(DatabaseFailure failure) {
  switch (failure) {
    case DatabaseFailure::connection_lost: return "connection_lost";
    case DatabaseFailure::unreachable: return "unreachable";
    case DatabaseFailure::statement_timeout: return "statement_timeout";
    case DatabaseFailure::read_only: return "read_only";
    case DatabaseFailure::permission_denied: return "permission_denied";
    case DatabaseFailure::other: return "other";
  }
  FULFILLSYNC_UNREACHABLE("every DatabaseFailure is named");
}

std::unique_ptr<MerchantDatabase> open_merchant_database(const config::MerchantConfig& config) {
  switch (config.driver) {
    case config::MerchantDriver::sqlite: return std::make_unique<SqliteMerchantDatabase>(config);
    case config::MerchantDriver::postgresql: return std::make_unique<PostgresMerchantDatabase>(config);
  }
  throw MerchantDatabaseError("unknown merchant database driver");
}

std::unique_ptr<MerchantDatabase> open_merchant_database_read_only(const config::MerchantConfig& config) {
  switch (config.driver) {
    case config::MerchantDriver::sqlite:
      return std::make_unique<SqliteMerchantDatabase>(config, SqliteMerchantDatabase::Access::read_only);
    case config::MerchantDriver::postgresql:
      return std::make_unique<PostgresMerchantDatabase>(config, PostgresMerchantDatabase::Access::read_only);
  }
  throw MerchantDatabaseError("unknown merchant database driver");
}

}  // namespace fulfillsync::merchant
