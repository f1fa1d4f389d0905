// merchant.driver: postgresql loads (tests/config), but until its connector is complete the daemon
// refuses to open it: it never starts on a database it cannot serve.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/merchant/merchant_database.hpp"
#include "fulfillsync/merchant/sqlite_check.hpp"

namespace fulfillsync::merchant {
namespace {

using ::testing::HasSubstr;

config::MerchantConfig postgresql_config() {
  config::MerchantConfig config;
  config.driver = config::MerchantDriver::postgresql;
  config.postgresql.host = "127.0.0.1";
  config.postgresql.database = "shop";
  config.postgresql.user = "fulfillsync";
  return config;
}

TEST(PostgresDriverTest, IsRefusedUntilItsConnectorExists) {
  const auto config = postgresql_config();
  for (const auto& open : {&open_merchant_database, &open_merchant_database_read_only}) {
    try {
      open(config);
      ADD_FAILURE() << "a postgresql merchant database opened";
    } catch (const MerchantDatabaseError& e) {
      EXPECT_THAT(e.what(), HasSubstr("merchant.driver postgresql is not available yet"));
    }
  }
  const auto findings = check_sqlite_merchant_database(config);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].level, Finding::Level::error);
  EXPECT_EQ(findings[0].subject, "merchant.driver");
  EXPECT_THAT(findings[0].message, HasSubstr("postgresql is not available yet"));
}

}  // namespace
}  // namespace fulfillsync::merchant
