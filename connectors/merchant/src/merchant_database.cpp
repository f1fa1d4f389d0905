#include "fulfillsync/merchant/merchant_database.hpp"

#include "fulfillsync/merchant/sqlite_merchant_database.hpp"

namespace fulfillsync::merchant {
namespace {

// The configuration loads merchant.postgresql, but its connector is not complete: refusing it here
// keeps the daemon from starting on a database it cannot serve.
[[noreturn]] void postgresql_not_available() {
  throw MerchantDatabaseError(
      "merchant.driver postgresql is not available yet in this version of fulfillsyncd: use sqlite (README: Using "
      "PostgreSQL)");
}

}  // namespace

std::unique_ptr<MerchantDatabase> open_merchant_database(const config::MerchantConfig& config) {
  switch (config.driver) {
    case config::MerchantDriver::sqlite: return std::make_unique<SqliteMerchantDatabase>(config);
    case config::MerchantDriver::postgresql: postgresql_not_available();
  }
  throw MerchantDatabaseError("unknown merchant database driver");
}

std::unique_ptr<MerchantDatabase> open_merchant_database_read_only(const config::MerchantConfig& config) {
  switch (config.driver) {
    case config::MerchantDriver::sqlite:
      return std::make_unique<SqliteMerchantDatabase>(config, SqliteMerchantDatabase::Access::read_only);
    case config::MerchantDriver::postgresql: postgresql_not_available();
  }
  throw MerchantDatabaseError("unknown merchant database driver");
}

}  // namespace fulfillsync::merchant
