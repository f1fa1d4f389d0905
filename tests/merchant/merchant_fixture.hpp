#pragma once
// A merchant database in a temporary directory, written by its own connection as the shop's
// application would, and the connector under test opened on the same file.
#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "fulfillsync/merchant/sqlite_merchant_database.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::merchant {

class MerchantDatabaseTest : public ::testing::Test {
 protected:
  MerchantDatabaseTest();

  config::MerchantConfig config(std::string prefix = "fulfillsync_") const;
  std::unique_ptr<SqliteMerchantDatabase> open(std::string prefix = "fulfillsync_") const;

  // A valid order with `lines` lines, written with this exact updated_at (lines first, so the
  // reference triggers do not move it).
  void add_order(const std::string& reference_id, const std::string& updated_at, int lines = 1);
  void add_return(const std::string& reference_id, const std::string& updated_at);

  testing::TempDir dir;
  std::filesystem::path path;
  SQLite::Database app;  // the merchant's application
};

}  // namespace fulfillsync::merchant
