#pragma once
// The merchant's database as the daemon sees it: source tables it reads, result tables it writes
// (schema/merchant/). One interface; SQLite first, PostgreSQL next.
#include <memory>
#include <stdexcept>
#include <string>

#include "fulfillsync/config/config.hpp"

namespace fulfillsync::merchant {

class MerchantDatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class MerchantDatabase {
 public:
  virtual ~MerchantDatabase() = default;

  // What it is, for logs: "sqlite /var/lib/shop/shop.db". Never holds a secret.
  virtual std::string describe() const = 0;

  // Cheap liveness check; throws MerchantDatabaseError.
  virtual void ping() = 0;
};

// Opens the configured database. Throws MerchantDatabaseError when it cannot.
std::unique_ptr<MerchantDatabase> open_merchant_database(const config::MerchantConfig& config);

}  // namespace fulfillsync::merchant
