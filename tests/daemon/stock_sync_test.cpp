// The SKU map end to end (sync_fixture.hpp): products created at the sandbox through its API, the
// daemon's pull_stock pass over the product list, and `{prefix}variant_sync` holding each SKU with
// the provider's product, variant and inventory ids and its stock on hand. Every test runs on each
// merchant database driver (merchant_driver.hpp: SQLite, PostgreSQL).
#include <simdjson.h>

#include "merchant_driver.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The sandbox's write channel of the personal token (its seed).
constexpr int kWriteChannel = 2;

// Small pages, so that a handful of products spans several of them.
constexpr std::string_view kStockJobs =
    "    pull_shipments: {enabled: false}\n"
    "    pull_returns: {enabled: false}\n"
    "    pull_lots: {enabled: false}\n"
    "    pull_stock: {interval: 1h, page_size: 5}\n";

// A SKU as both sides hold it: "product/variant/inventory:on_hand".
using SkuMap = std::map<std::string, std::string>;

class StockSyncTest : public DriverFixture {
 protected:
  void start(std::string_view jobs = kStockJobs) {
    start_sandbox();
    write_config("", jobs);
  }

  HttpResponse api_send(std::string_view method, const std::string& target, const std::string& body) {
    return http_request("127.0.0.1", sandbox->port(), method, "/2026-07" + target,
                        {{"Authorization", std::string("Bearer ") + Sandbox::kToken},
                         {"Content-Type", "application/json"},
                         {"service_channel_id", std::to_string(kWriteChannel)}},
                        body);
  }

  // Products STK-001.. with two variants each (SKUs STK-001-A, STK-001-B), created through the API.
  void create_products(int count) {
    for (int i = 1; i <= count; ++i) {
      const auto created = api_send(
          "POST", "/product",
          fmt::format(R"({{"name": "Stock product {0}", "reference_id": "STK-{0:03}", "variants": [)"
                      R"({{"name": "Stock product {0} A", "sku": "STK-{0:03}-A"}},)"
                      R"({{"name": "Stock product {0} B", "sku": "STK-{0:03}-B"}}]}})",
                      i));
      ASSERT_EQ(created.status, 201) << created.body;
    }
  }

  // Every SKU of the provider's product list.
  SkuMap provider_map() {
    SkuMap map;
    for (int cursor = 1;; ++cursor) {
      const auto response = api_get(fmt::format("/product?Limit=250&Cursor={}", cursor));
      EXPECT_EQ(response.status, 200) << response.body;
      auto page = api::decode<api::ProductList>(response.body, api::ApiVersion::v2026_07);
      EXPECT_TRUE(page.ok()) << response.body;
      if (!page) return map;
      for (const auto& product : page->items) {
        for (const auto& variant : product.variants) {
          const auto inventory = variant.inventory.value_or(api::VariantInventory{});
          map[variant.sku.value_or("")] = fmt::format("{}/{}/{}:{}", product.id, variant.id,
                                                      inventory.inventory_id.value_or(0),
                                                      inventory.on_hand_qty.value_or(0));
        }
      }
      if (!page->next) return map;
    }
  }

  SkuMap merchant_map() {
    SkuMap map;
    for (const auto& row : shop_app->query("SELECT sku, product_id, variant_id, inventory_id, on_hand_qty "
                                           "FROM fulfillsync_variant_sync")) {
      map[row[0]] = fmt::format("{}/{}/{}:{}", row[1], row[2], row[3], row[4]);
    }
    return map;
  }

  std::int64_t inventory_of(const std::string& sku) {
    const auto rows = shop_app->query(
        fmt::format("SELECT inventory_id FROM fulfillsync_variant_sync WHERE sku = {}", sql_text(sku)));
    return rows.empty() ? 0 : std::stoll(rows[0][0]);
  }

  // Requests the sandbox answered on GET /product.
  long product_list_requests() {
    simdjson::dom::parser parser;
    const auto stats = parser.parse(sandbox->admin("GET", "/_sandbox/stats").body);
    long total = 0;
    for (auto entry : stats["requests"].get_array()) {
      if (std::string_view(entry["route"].get_string()) == "GET /product") total += entry["count"].get_int64();
    }
    return total;
  }

  void set_stock(std::int64_t inventory_id, int location, int on_hand) {
    const auto response =
        sandbox->admin("POST", fmt::format("/_sandbox/inventory/{}/lots", inventory_id),
                       fmt::format(R"({{"lot_number": "", "location_id": {}, "on_hand": {}}})", location, on_hand));
    ASSERT_EQ(response.status, 200) << response.body;
  }
};

TEST_P(StockSyncTest, TheSkuMapHoldsEveryProductAcrossPagesAndFollowsStock) {
  start();
  create_products(12);  // with the 4 of the demo seed: 16 products on 4 pages of 5
  const long lists_before = product_list_requests();
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(product_list_requests() - lists_before, 4);  // one request per page of products
  const SkuMap provider = provider_map();
  ASSERT_EQ(provider.size(), 24u + 6u);  // 12 x 2, and the seed's 6 variants
  EXPECT_EQ(merchant_map(), provider);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_variant_sync WHERE stock_read_at IS NULL OR product_name IS NULL "
                  "OR status IS NULL"),
            0);

  // Stock changes at the provider; the next pass brings it.
  const std::int64_t inventory = inventory_of("STK-007-B");
  ASSERT_NE(inventory, 0);
  set_stock(inventory, 8, 42);
  set_stock(inventory, 11, 8);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(merchant_map(), provider_map());
  EXPECT_EQ(count("SELECT on_hand_qty FROM fulfillsync_variant_sync WHERE sku = 'STK-007-B'"), 50);

  // A SKU renamed at the provider: the old one goes once a whole pass no longer lists it.
  const auto product_id = shop_app->query("SELECT product_id, variant_id FROM fulfillsync_variant_sync "
                                          "WHERE sku = 'STK-003-A'");
  ASSERT_EQ(product_id.size(), 1u);
  const auto patched = api_send("PATCH", fmt::format("/product/{}/variants", product_id[0][0]),
                                fmt::format(R"([{{"id": {}, "sku": "STK-003-Z"}}])", product_id[0][1]));
  ASSERT_EQ(patched.status, 200) << patched.body;
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(merchant_map(), provider_map());
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_variant_sync WHERE sku = 'STK-003-A'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_variant_sync WHERE sku = 'STK-003-Z'"), 1);
}

TEST_P(StockSyncTest, AKilledPassResumesAfterTheLastPageWritten) {
  start();
  create_products(12);
  for (const std::string failpoint : {"pull_stock.after_page_commit@3", "pull_stock.before_checkpoint"}) {
    SCOPED_TRACE(failpoint);
    const long lists_before = product_list_requests();
    auto result = once({"FULFILLSYNC_FAILPOINTS=" + failpoint});
    ASSERT_EQ(result.exit_status, kKilled) << failpoint << " was not reached: " << result.stderr_text;
    result = once();
    ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
    if (failpoint == "pull_stock.after_page_commit@3") {
      // Pages 1 to 3, then page 3 again (its link was not saved) and page 4: none skipped, one repeated.
      EXPECT_EQ(product_list_requests() - lists_before, 5);
    }
    EXPECT_EQ(merchant_map(), provider_map());
  }
}

TEST_P(StockSyncTest, AFailingProductListIsReadAgainUntilWhole) {
  start();
  create_products(3);
  const auto faults = sandbox->admin("POST", "/_sandbox/faults?seed=3",
                                     "route=GET /*/product;500=0.3;429=0.1;retry_after_s=1;drop_after=0.1;malformed=0.2");
  ASSERT_EQ(faults.status, 200) << faults.body;
  RunResult result;
  for (int attempt = 0; attempt < 5; ++attempt) {
    result = once();
    if (result.exit_status == 0) break;
  }
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults?seed=3", "").status, 200);
  EXPECT_EQ(merchant_map(), provider_map());
}

TEST_P(StockSyncTest, AReturnLineAndAWatchedLotBySkuResolveThroughTheMap) {
  start("    pull_shipments: {enabled: false}\n"
        "    pull_returns: {enabled: false}\n"
        "    pull_lots: {interval: 1s}\n"
        "    pull_stock: {interval: 1h, page_size: 5}\n");
  create_products(2);
  auto result = once();  // the map
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const std::int64_t returned = inventory_of("STK-001-B"), watched = inventory_of("STK-002-A");
  ASSERT_NE(returned, 0);
  ASSERT_NE(watched, 0);
  set_stock(watched, 8, 12);

  execute("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, tracking_number) VALUES "
          "('RMA-SKU', 8, '1Z0000000001'), ('RMA-UNKNOWN', 8, '1Z0000000002');"
          "INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, sku, quantity, requested_action) "
          "VALUES ('RMA-SKU', 1, 'STK-001-B', 2, 'Restock'), ('RMA-UNKNOWN', 1, 'NO-SUCH-SKU', 1, 'Restock');"
          "INSERT INTO fulfillsync_watched_inventory (sku) VALUES ('STK-002-A'), ('NO-SUCH-LOT');");
  result = once();
  EXPECT_EQ(result.exit_status, kRowsStayRejected) << result.stderr_text;

  // By SKU, sent with the map's inventory id; an unknown SKU rejected with its reason, never sent.
  const auto returns = provider_returns();
  ASSERT_TRUE(returns.contains("RMA-SKU"));
  ASSERT_EQ(returns.at("RMA-SKU").inventory.size(), 1u);
  EXPECT_EQ(returns.at("RMA-SKU").inventory[0].id, returned);
  EXPECT_FALSE(returns.contains("RMA-UNKNOWN"));
  EXPECT_EQ(result_states("fulfillsync_return_sync"),
            (std::map<std::string, std::string>{{"RMA-SKU", "created"}, {"RMA-UNKNOWN", "rejected"}}));
  EXPECT_THAT(result_column("last_error", "RMA-UNKNOWN", "fulfillsync_return_sync"),
              HasSubstr("fulfillsync_return_lines line 1: sku is not in the SKU map"));

  // The watched SKU's lots are read by its inventory id; the unknown one is recorded with why.
  EXPECT_EQ(count(fmt::format("SELECT sum(on_hand_quantity) FROM fulfillsync_inventory_lots WHERE inventory_id = {} "
                              "AND location_id = 8",
                              watched)),
            12);
  const auto watched_rows = shop_app->query(
      "SELECT sku, coalesce(CAST(inventory_id AS TEXT), ''), coalesce(error, '') FROM fulfillsync_watched_sku_sync "
      "ORDER BY sku");
  ASSERT_EQ(watched_rows.size(), 2u);
  EXPECT_EQ(watched_rows[0][0], "NO-SUCH-LOT");
  EXPECT_EQ(watched_rows[0][1], "");
  EXPECT_THAT(watched_rows[0][2], HasSubstr("not in"));
  EXPECT_EQ(watched_rows[1], (std::vector<std::string>{"STK-002-A", std::to_string(watched), ""}));
  EXPECT_THAT(result.stderr_text, HasSubstr("watched SKU(s) not in the SKU map"));
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, HasSubstr("Watched SKUs not in the SKU map (no lots read; watched_sku_sync says why): "
                                            "NO-SUCH-LOT"));
  EXPECT_THAT(status.stdout_text, HasSubstr("sku is not in the SKU map"));
}

// Item 4: a line by product_reference_id goes by the provider's product id once the map holds it as
// its product's only variant; orders sent before are not sent again (their content hash is of the
// source row, which did not change), and a SKU among several variants stays a reference.
TEST_P(StockSyncTest, OrderLinesGoByProductIdOnceMappedAndNothingIsSentAgain) {
  start("    pull_shipments: {enabled: false}\n"
        "    pull_returns: {enabled: false}\n"
        "    pull_lots: {enabled: false}\n"
        "    pull_stock: {enabled: false}\n");
  const auto single = api_send("POST", "/product",
                               R"({"name": "Single", "variants": [{"name": "Single", "sku": "ONE-001"}]})");
  ASSERT_EQ(single.status, 201) << single.body;
  create_products(1);  // STK-001-A and STK-001-B, one product
  const auto line = [](const std::string& order, int number, const std::string& sku) {
    return fmt::format("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, "
                       "product_name, quantity) VALUES ({}, {}, {}, 'Named', 1);",
                       sql_text(order), number, sql_text(sku));
  };
  const auto order = [&](const std::string& reference) {
    return fmt::format("INSERT INTO fulfillsync_orders (reference_id, shipping_method, recipient_name, address1, city, "
                       "zip_code, country) VALUES ({}, 'Standard', 'Ada', '1 Main St', 'Austin', '73301', 'US');",
                       sql_text(reference)) +
           line(reference, 1, "ONE-001") + line(reference, 2, "STK-001-B");
  };
  execute(order("BEFORE-MAP"));
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(sandbox_count("orders"), 1);

  write_config("", kStockJobs);  // pull_stock on: the map, then the same order read again
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const std::string one_product = shop_app->query("SELECT product_id FROM fulfillsync_variant_sync WHERE sku = 'ONE-001'")
                                      .at(0)
                                      .at(0);
  execute(order("AFTER-MAP"));
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(sandbox_count("orders"), 2);  // BEFORE-MAP once, AFTER-MAP once
  EXPECT_EQ(ledger_count("created"), 2);

  SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY);
  const auto body_of = [&](const std::string& reference) {
    SQLite::Statement query(store, "SELECT body FROM outbound_ledger WHERE source_key = ? AND kind = 'order_create'");
    query.bind(1, reference);
    return query.executeStep() ? query.getColumn(0).getString() : std::string();
  };
  EXPECT_THAT(body_of("BEFORE-MAP"), Not(HasSubstr("\"id\":")));
  EXPECT_THAT(body_of("AFTER-MAP"), HasSubstr(fmt::format(R"("id":{},"reference_id":"ONE-001")", one_product)));
  EXPECT_THAT(body_of("AFTER-MAP"), HasSubstr(R"("reference_id":"STK-001-B","name":"Named")"));
  // The provider ships what was ordered: the product's one variant, and the right one of two.
  const auto orders = provider_orders();
  ASSERT_TRUE(orders.contains("AFTER-MAP"));
  std::set<std::string> skus;
  for (const auto& product : orders.at("AFTER-MAP").products) skus.insert(product.sku.value_or(""));
  EXPECT_EQ(skus, (std::set<std::string>{"ONE-001", "STK-001-B"}));
}

INSTANTIATE_TEST_SUITE_P(Drivers, StockSyncTest, kBothDrivers, driver_name);

}  // namespace
}  // namespace fulfillsync::testing
