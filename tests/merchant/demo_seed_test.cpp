// The quick start's demo database loads, and yields the valid and invalid rows it promises.
#include <gmock/gmock.h>

#include "fulfillsync/daemon/mapping/request_mapping.hpp"
#include "merchant_fixture.hpp"

namespace fulfillsync::merchant {
namespace {

using daemon::cancel_requested;
using daemon::map_order;
using daemon::map_return;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(DemoSeed, LoadsAndSplitsIntoValidAndRejectedRows) {
  testing::TempDir dir;
  {
    SQLite::Database app((dir / "merchant.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    app.exec(testing::read_file(testing::source_path("schema/merchant/source_tables.sql")));
    app.exec(testing::read_file(testing::source_path("config/demo-merchant.sql")));
  }
  config::MerchantConfig config;
  config.sqlite.path = dir / "merchant.db";
  SqliteMerchantDatabase db(config);
  EXPECT_THAT(db.source().check_source_tables(), ::testing::IsEmpty());

  std::map<std::string, std::string> rejected;
  int valid = 0, cancels = 0;
  for (const OrderRow& row : db.source().read_orders(ReadRange{.limit = 1000})) {
    const auto mapped = map_order(row);
    if (mapped.ok()) ++valid;
    if (!mapped.ok()) rejected[row.reference_id.substr(0, 9)] = mapped.reason();
    if (cancel_requested(row)) ++cancels;
  }
  EXPECT_EQ(valid, 19);
  EXPECT_EQ(cancels, 2);
  EXPECT_THAT(rejected,
              ElementsAre(Pair("DEMO-9001", "fulfillsync_orders: recipient_name is required, found NULL"),
                          Pair("DEMO-9002", "fulfillsync_order_lines line 2: quantity must be at least 1, found 0"),
                          Pair("DEMO-9003",
                               "fulfillsync_orders: reference_id must be 1 to 300 characters, found 310")));

  std::vector<std::string> returns;
  for (const ReturnRow& row : db.source().read_returns(ReadRange{.limit = 1000})) {
    const auto mapped = map_return(row);
    returns.push_back(row.reference_id + (mapped.ok() ? " ok" : ": " + mapped.reason()));
  }
  EXPECT_THAT(returns, UnorderedElementsAre("RMA-5001 ok", "RMA-5002 ok",
                                            "RMA-5003: fulfillsync_returns: fulfillment_center_id is required, "
                                            "found NULL"));
  EXPECT_THAT(db.pulled().watched_inventory_ids(), ElementsAre(7001, 7002, 7003, 7005));
}

}  // namespace
}  // namespace fulfillsync::merchant
