// The quick start's demo (./dev demo) on its own seed: config/demo-merchant.sql against the
// sandbox's demo data, with push_products on as config/demo.yaml has it.
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

class DemoTest : public SyncFixture {};

// The catalog reaches the provider before the orders that name its SKUs, each product once, and the
// SKU map the demo prints (config/demo-sku-map.sql) holds every SKU with the provider's ids and stock.
TEST_F(DemoTest, TheCatalogGoesFirstAndTheSkuMapHoldsEverySkuWithItsStock) {
  merchant->exec(read_file(source_path("schema/merchant/catalog_change_log.sql")));
  merchant->exec(read_file(source_path("config/demo-merchant.sql")));
  start_sandbox({"--seed", "demo"});
  write_config("", "    push_products: {enabled: true, interval: 50ms}\n");
  const RunResult run = once();
  EXPECT_EQ(run.exit_status, kRowsStayRejected) << run.stderr_text;  // the demo's invalid orders

  const std::map<std::string, std::string> created = {{"BATT-AA4", "created"},   {"MUG-ENAMEL", "created"},
                                                      {"SNACK-TRAIL", "created"}, {"TOTE-CANVAS", "created"},
                                                      {"TSHIRT-ORGANIC", "created"}};
  EXPECT_EQ(result_states("fulfillsync_product_sync"), created);
  // The mug is new to the provider and was created, not adopted: had DEMO-1016 gone first, it would
  // have made a stub product of its SKU, found by the create.
  EXPECT_EQ(result_column("note", "MUG-ENAMEL", "fulfillsync_product_sync"), "");
  EXPECT_EQ(sandbox_count("products"), 1);
  EXPECT_EQ(result_column("state", "DEMO-1016"), "created");

  // product, sku, product_id, variant_id, inventory_id, on_hand, stock_read_at
  const auto rows = shop_app->query(read_file(source_path("config/demo-sku-map.sql")));
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) {
    for (std::size_t column = 2; column < row.size(); ++column) EXPECT_NE(row[column], "") << row[1] << " " << column;
    const bool new_product = row[0] == "MUG-ENAMEL";
    EXPECT_EQ(std::stol(row[5]) > 0, !new_product) << row[1] << " on hand " << row[5];
  }
}

}  // namespace
}  // namespace fulfillsync::testing
