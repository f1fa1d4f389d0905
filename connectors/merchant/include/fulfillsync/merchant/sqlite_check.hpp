#pragma once
// What `fulfillsyncd check-config` finds in the merchant database, read-only: it creates nothing,
// not a SQLite file when it is missing, nor the result tables.
#include <string>
#include <vector>

#include "fulfillsync/config/config.hpp"

namespace fulfillsync::merchant {

struct Finding {
  enum class Level { ok, warning, error };
  Level level;
  std::string subject;  // what was checked: "merchant.sqlite.path", "fulfillsync_orders", ...
  std::string message;  // the reason, and for a warning or an error the fix
};

// The file, the source contract (tables or views and their columns; the change log, a warning when
// tables lack it), and the result tables: that they can be created (the prefix, no
// table of another owner in their way) or, when they exist, that their version is one this
// fulfillsync writes (equal to it without merchant.manage_result_tables). With `catalog` (push_products
// reads it), the catalog's tables too, and a warning when their change triggers are missing.
std::vector<Finding> check_sqlite_merchant_database(const config::MerchantConfig& config, bool catalog = false);

// The same for a PostgreSQL merchant database, over a read-only connection: that it connects, the
// source tables (each missing table, column or privilege named), the change order, and the result
// tables' version; with `catalog`, the catalog's tables and their change order.
std::vector<Finding> check_postgres_merchant_database(const config::MerchantConfig& config, bool catalog = false);

// The check of the configured driver.
std::vector<Finding> check_merchant_database(const config::MerchantConfig& config, bool catalog = false);

}  // namespace fulfillsync::merchant
