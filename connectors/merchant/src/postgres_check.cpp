#include <fmt/format.h>

#include "fulfillsync/merchant/postgres_merchant_database.hpp"
#include "fulfillsync/merchant/sqlite_check.hpp"
#include "fulfillsync/schema/migrations.hpp"

namespace fulfillsync::merchant {

std::vector<Finding> check_postgres_merchant_database(const config::MerchantConfig& config, bool catalog) {
  using Level = Finding::Level;
  std::vector<Finding> findings;
  std::unique_ptr<PostgresMerchantDatabase> db;
  try {
    db = std::make_unique<PostgresMerchantDatabase>(config, PostgresMerchantDatabase::Access::read_only);
    findings.push_back({Level::ok, "merchant.postgresql", fmt::format("{} connects (read-only)", db->describe())});
  } catch (const MerchantDatabaseError& e) {
    findings.push_back({Level::error, "merchant.postgresql", e.what()});
    return findings;
  }
  try {
    const auto problems = db->source().check_source_tables();
    for (const auto& problem : problems) {
      findings.push_back({Level::error, "source tables",
                          problem + "; fix: create it as in schema/merchant/postgresql/source_tables.sql, or a view "
                                    "of that name over the shop's own table, and GRANT SELECT on it "
                                    "(schema/merchant/README.md)"});
    }
    if (problems.empty()) findings.push_back({Level::ok, "source tables", "every table and column of the contract"});
    if (db->source().has_change_log()) {
      findings.push_back({Level::ok, "change detection", "changes are read by transaction id (change_xid)"});
    } else {
      findings.push_back({Level::warning, "change detection",
                          fmt::format("no change_xid on {} and {}: changes are found by updated_at, which needs "
                                      "merchant.look_back ({}s) longer than the shop's longest transaction; fix: apply "
                                      "schema/merchant/postgresql/change_order/0001_change_xid.sql as the tables' owner",
                                      kOrdersTable, kReturnsTable,
                                      std::chrono::duration_cast<std::chrono::seconds>(config.look_back).count())});
    }
    if (catalog) {
      const auto catalog_problems = db->source().check_catalog_tables();
      for (const auto& problem : catalog_problems) {
        findings.push_back({Level::error, "catalog tables",
                            problem + "; push_products reads it: create it as in schema/merchant/postgresql/"
                                      "source_tables.sql, or a view of that name over the shop's catalog, and GRANT "
                                      "SELECT on it (schema/merchant/README.md, Catalog)"});
      }
      if (catalog_problems.empty()) {
        findings.push_back({Level::ok, "catalog tables", "every table and column push_products reads"});
        if (db->source().catalog_change_position()) {
          findings.push_back({Level::ok, "catalog change detection",
                              "changes are read by transaction id (change_xid), and a commit's NOTIFY wakes "
                              "push_products"});
        } else {
          findings.push_back({Level::warning, "catalog change detection",
                              fmt::format("no change_xid on {} with its triggers: the daemon cannot tell what "
                                          "changed, so each push_products pass reads and compares the whole catalog "
                                          "and a catalog commit does not wake it; fix: fulfillsyncd upgrade-source "
                                          "(schema/merchant/postgresql/catalog_change_order.sql)",
                                          kProductsTable)});
        }
      }
    }
    const std::string subject = fmt::format("result tables (schema {}, prefix {})", config.postgresql.result_schema,
                                            config.result_table_prefix);
    const int newest = static_cast<int>(schema::merchant_postgresql_result_migrations().size());
    const int version = db->result_schema_version();
    if (version > newest) {
      findings.push_back({Level::error, subject,
                          fmt::format("at schema version {}, written by a newer fulfillsync (this one writes {})",
                                      version, newest)});
    } else if (version == newest) {
      findings.push_back({Level::ok, subject, fmt::format("present at schema version {}", version)});
    } else if (!config.manage_result_tables) {
      findings.push_back({Level::error, subject,
                          fmt::format("at schema version {}, this fulfillsync writes version {}; fix: apply "
                                      "schema/merchant/postgresql/results/*.sql with the prefix, or set "
                                      "merchant.manage_result_tables: true",
                                      version, newest)});
    } else {
      findings.push_back({Level::ok, subject,
                          fmt::format("at schema version {}; run migrates them to version {}", version, newest)});
    }
  } catch (const MerchantDatabaseError& e) {
    findings.push_back({Level::error, "merchant.postgresql", e.what()});
  }
  return findings;
}

std::vector<Finding> check_merchant_database(const config::MerchantConfig& config, bool catalog) {
  switch (config.driver) {
    case config::MerchantDriver::sqlite: return check_sqlite_merchant_database(config, catalog);
    case config::MerchantDriver::postgresql: return check_postgres_merchant_database(config, catalog);
  }
  return {};
}

}  // namespace fulfillsync::merchant
