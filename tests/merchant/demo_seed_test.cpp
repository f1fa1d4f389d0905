// The quick start's demo database loads, and yields the valid and invalid rows it promises.
#include <set>

#include <gmock/gmock.h>

#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"
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

// The demo's merchant database as ./dev demo seeds it, in `dir`.
config::MerchantConfig seed_demo(const testing::TempDir& dir) {
  {
    SQLite::Database app((dir / "merchant.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    for (const char* file : {"schema/merchant/source_tables.sql", "schema/merchant/change_log/0001_change_log.sql",
                             "schema/merchant/catalog_change_log.sql", "config/demo-merchant.sql"}) {
      app.exec(testing::read_file(testing::source_path(file)));
    }
  }
  config::MerchantConfig config;
  config.sqlite.path = dir / "merchant.db";
  return config;
}

TEST(DemoSeed, LoadsAndSplitsIntoValidAndRejectedRows) {
  testing::TempDir dir;
  SqliteMerchantDatabase db(seed_demo(dir));
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

// The demo's catalog: a few products of one to three variants, each valid, holding every SKU the
// demo's orders name, so that push_products sends them before the orders.
TEST(DemoSeed, TheCatalogHoldsEverySkuTheOrdersName) {
  testing::TempDir dir;
  SqliteMerchantDatabase db(seed_demo(dir));
  std::set<std::string> skus;
  const std::vector<ProductRow> products = db.source().read_products("", 1000);
  EXPECT_EQ(products.size(), 5u);
  for (const ProductRow& product : products) {
    EXPECT_THAT(product.lines.size(), ::testing::AllOf(::testing::Ge(1u), ::testing::Le(3u))) << product.reference_id;
    const daemon::ProductBody body = daemon::product_body(product, api::ApiVersion::v2026_07);
    EXPECT_TRUE(body.body.has_value()) << product.reference_id << ": " << body.problems;
    for (const VariantRow& variant : product.lines) skus.insert(variant.sku.text);
  }
  std::set<std::string> named;
  for (const OrderRow& row : db.source().read_orders(ReadRange{.limit = 1000})) {
    for (const OrderLineRow& line : row.lines) {
      if (line.product_reference_id.type == Field::Type::text) named.insert(line.product_reference_id.text);
    }
  }
  EXPECT_THAT(named, ::testing::IsSubsetOf(skus));
  EXPECT_TRUE(named.contains("MUG-ENAMEL-WHITE"));  // new to the provider: created before its order
}

}  // namespace
}  // namespace fulfillsync::merchant
