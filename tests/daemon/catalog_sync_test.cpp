// push_products end to end: the catalog in a real merchant database (SQLite, and PostgreSQL where a
// server is available) pushed to the sandbox through the daemon (sync_fixture.hpp).
#include <simdjson.h>

#include "fulfillsync/daemon/exit_codes.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "merchant_driver.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

// A product as the provider shows it, with the fields the catalog sends.
struct RemoteVariant {
  std::int64_t id = 0;
  std::string name, sku, gtin, upc, status, country, hs_code, description, currency, customs_value;
  double weight = 0, length = 0, width = 0, height = 0;
  bool is_lot = false;
  std::int64_t shelf_life = 0;
};
struct RemoteProduct {
  std::int64_t id = 0;
  std::string name, type;
  std::int64_t taxonomy = 0;
  std::vector<RemoteVariant> variants;
};

std::string text_of(simdjson::dom::element element, std::string_view key) {
  std::string_view text;
  return element[key].get_string().get(text) == simdjson::SUCCESS ? std::string(text) : std::string();
}

double number_of(simdjson::dom::element element, std::string_view key) {
  double value = 0;
  return element[key].get_double().get(value) == simdjson::SUCCESS ? value : 0;
}

// The variant rows of product `i` (1 to 5 of them) and the product row, as SQL both databases take.
std::string product_sql(const std::string& prefix, int i, std::string_view customs_value = "12") {
  std::string sql = fmt::format(
      "INSERT INTO fulfillsync_products (reference_id, name, type, taxonomy_id) VALUES ('{0}-{1:04}', 'Product {1}', "
      "{2}, {3});",
      prefix, i, i % 3 == 0 ? "NULL" : "'Apparel'", i % 2 == 0 ? "11" : "NULL");
  for (int j = 1; j <= 1 + i % 5; ++j) {
    sql += fmt::format(
        "INSERT INTO fulfillsync_variants (sku, product_reference_id, name, gtin, upc, status, weight, weight_unit, "
        "length, width, height, dimension_unit, customs_country_of_origin, customs_hs_tariff_code, "
        "customs_description, customs_value, customs_currency, is_lot, minimum_shelf_life_days) VALUES ("
        "'{0}-{1:04}-{2}', '{0}-{1:04}', 'Product {1} size {2}', '{3:013}', '{4:012}', '{5}', {6}, 'oz', {7}, 3, 2, "
        "'in', 'US', '6109.10', 'Cotton shirt {1}', '{8}', 'USD', {9}, {10});",
        prefix, i, j, 4000000000000LL + i * 10 + j, 100000000000LL + i * 10 + j, j % 4 == 0 ? "Inactive" : "Active",
        0.5 + i % 7, 10 + j, customs_value, j % 2, 30 * j);
  }
  return sql;
}

class CatalogSyncTest : public DriverFixture {
 protected:
  void SetUp() override {
    DriverFixture::SetUp();
    if (IsSkipped()) return;
    // The catalog's change order as the reference DDL gives it.
    if (on_postgresql()) {
      execute(read_file(source_path("schema/merchant/postgresql/catalog_change_order.sql")));
    } else {
      merchant->exec(read_file(source_path("schema/merchant/catalog_change_log.sql")));
    }
  }

  void start(std::vector<std::string> sandbox_args = {}, std::string_view version = "2026-07") {
    start_sandbox(std::move(sandbox_args));
    version_ = std::string(version);
    write_catalog_config();
  }

  void write_catalog_config() {
    write_config("", "    push_products: {enabled: true, interval: 50ms, batch_size: 100, concurrency: 4}\n");
    std::string config = read_file(config_path);
    const std::string plain = "  allow_plain_http: true\n";
    config.replace(config.find(plain), plain.size(), plain + "  version: \"" + version_ + "\"\n");
    write_file(config_path, config);
  }

  void insert_products(const std::string& prefix, int count, std::string_view customs_value = "12") {
    std::string sql = "BEGIN;";
    for (int i = 1; i <= count; ++i) sql += product_sql(prefix, i, customs_value);
    execute(sql + "COMMIT;");
  }

  // Every product the provider has, by its first variant's SKU prefix (the merchant's reference).
  std::map<std::string, RemoteProduct> provider_products() {
    std::map<std::string, RemoteProduct> products;
    simdjson::dom::parser parser;
    for (int cursor = 1;; ++cursor) {
      const auto response = http_request("127.0.0.1", sandbox->port(), "GET",
                                         fmt::format("/{}/product?Limit=250&Cursor={}", version_, cursor),
                                         {{"Authorization", std::string("Bearer ") + Sandbox::kToken}});
      EXPECT_EQ(response.status, 200) << response.body;
      simdjson::dom::element page;
      EXPECT_EQ(parser.parse(simdjson::padded_string(response.body)).get(page), simdjson::SUCCESS);
      simdjson::dom::array items;
      if (page["items"].get_array().get(items) != simdjson::SUCCESS || items.size() == 0) break;
      for (simdjson::dom::element item : items) {
        RemoteProduct product;
        product.id = item["id"].get_int64().value_unsafe();
        product.name = text_of(item, "name");
        product.type = text_of(item, "type");
        product.taxonomy = item["taxonomy"]["id"].get_int64().value_unsafe();
        simdjson::dom::array variants;
        EXPECT_EQ(item["variants"].get_array().get(variants), simdjson::SUCCESS);
        for (simdjson::dom::element v : variants) {
          RemoteVariant variant;
          variant.id = v["id"].get_int64().value_unsafe();
          variant.name = text_of(v, "name");
          variant.sku = text_of(v, "sku");
          variant.gtin = text_of(v, "gtin");
          variant.upc = text_of(v, "upc");
          variant.status = text_of(v, "status");
          variant.country = text_of(v["customs"], "country_code_of_origin");
          variant.hs_code = text_of(v["customs"], "hs_tariff_code");
          variant.description = text_of(v["customs"], "description");
          variant.currency = text_of(v["customs"], "currency");
          variant.customs_value = simdjson::minify(v["customs"]["value"]);
          variant.weight = number_of(v["weight"], "weight");
          variant.length = number_of(v["dimension"], "length");
          variant.width = number_of(v["dimension"], "width");
          variant.height = number_of(v["dimension"], "height");
          variant.is_lot = v["lot_information"]["is_lot"].get_bool().value_unsafe();
          variant.shelf_life = v["lot_information"]["minimum_shelf_life_days"].get_int64().value_unsafe();
          product.variants.push_back(std::move(variant));
        }
        const std::string sku = product.variants.empty() ? "" : product.variants.front().sku;
        const std::string reference = sku.substr(0, sku.rfind('-'));
        if (sku.find('-') == sku.rfind('-')) continue;  // the sandbox's own sample products
        EXPECT_FALSE(products.contains(reference)) << reference << " exists twice at the provider";
        products.emplace(reference, std::move(product));
      }
      if (page["next"].is_null()) break;
    }
    return products;
  }

  // Every product of `prefix`-0001.. exists once at the provider, field by field as product_sql wrote it.
  void expect_catalog_delivered(const std::string& prefix, int count, std::string_view customs_value = "12") {
    const auto products = provider_products();
    EXPECT_EQ(products.size(), static_cast<std::size_t>(count));
    std::set<std::string> skus;
    for (int i = 1; i <= count; ++i) {
      const std::string reference = fmt::format("{}-{:04}", prefix, i);
      SCOPED_TRACE(reference);
      ASSERT_TRUE(products.contains(reference));
      const RemoteProduct& product = products.at(reference);
      EXPECT_EQ(product.name, fmt::format("Product {}", i));
      EXPECT_EQ(product.type, i % 3 == 0 ? "Regular" : "Apparel");  // the provider's default when none is sent
      EXPECT_EQ(product.taxonomy, i % 2 == 0 ? 11 : 0);
      ASSERT_EQ(product.variants.size(), static_cast<std::size_t>(1 + i % 5));
      for (int j = 1; j <= 1 + i % 5; ++j) {
        const RemoteVariant& v = product.variants[static_cast<std::size_t>(j - 1)];
        EXPECT_EQ(v.sku, fmt::format("{}-{}", reference, j));
        EXPECT_TRUE(skus.insert(v.sku).second) << v.sku << " twice";
        EXPECT_EQ(v.name, fmt::format("Product {} size {}", i, j));
        EXPECT_EQ(v.gtin, fmt::format("{:013}", 4000000000000LL + i * 10 + j));
        EXPECT_EQ(v.upc, fmt::format("{:012}", 100000000000LL + i * 10 + j));
        EXPECT_EQ(v.status, j % 4 == 0 ? "Inactive" : "Active");
        EXPECT_DOUBLE_EQ(v.weight, 0.5 + i % 7);
        EXPECT_DOUBLE_EQ(v.length, 10 + j);
        EXPECT_DOUBLE_EQ(v.width, 3);
        EXPECT_DOUBLE_EQ(v.height, 2);
        EXPECT_EQ(v.country, "US");
        EXPECT_EQ(v.hs_code, "6109.10");
        EXPECT_EQ(v.description, fmt::format("Cotton shirt {}", i));
        EXPECT_EQ(v.customs_value, customs_value);
        EXPECT_EQ(v.currency, "USD");
        EXPECT_EQ(v.is_lot, j % 2 == 1);
        EXPECT_EQ(v.shelf_life, 30 * j);
      }
      EXPECT_EQ(result_column("state", reference, "fulfillsync_product_sync"), "created");
      EXPECT_EQ(result_column("remote_id", reference, "fulfillsync_product_sync"), std::to_string(product.id));
    }
  }

  // The catalog writes the sandbox received, in order: {method, path, body}.
  std::vector<std::array<std::string, 3>> catalog_writes() {
    const auto response = sandbox->admin("GET", "/_sandbox/catalog/writes");
    EXPECT_EQ(response.status, 200) << response.body;
    simdjson::dom::parser parser;
    std::vector<std::array<std::string, 3>> writes;
    simdjson::dom::array listed;
    EXPECT_EQ(parser.parse(simdjson::padded_string(response.body)).get_array().get(listed), simdjson::SUCCESS);
    for (simdjson::dom::element write : listed) {
      writes.push_back({text_of(write, "method"), text_of(write, "path"), text_of(write, "body")});
    }
    return writes;
  }

  // The catalog writes after the first `from`.
  std::vector<std::array<std::string, 3>> catalog_writes_after(std::size_t from) {
    const auto writes = catalog_writes();
    return {writes.begin() + static_cast<long>(std::min(from, writes.size())), writes.end()};
  }

  void delete_store() {
    for (const char* side : {"", "-wal", "-shm"}) std::filesystem::remove((dir / "checkpoint.db").string() + side);
  }

  std::string version_ = "2026-07";
};

TEST_P(CatalogSyncTest, FiveHundredProductsExistOnceFieldByField) {
  start();
  insert_products("P", 500);
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_catalog_delivered("P", 500);
  EXPECT_EQ(sandbox_count("products"), 500);
  // One request per product: each created with all its variants.
  long writes = 0;
  for (const auto& write : catalog_writes()) writes += write[0] == "POST" && write[1] == "/product";
  EXPECT_EQ(writes, 500);
  EXPECT_EQ(catalog_writes().size(), 500u);

  // Nothing changed: a second run sends nothing.
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(catalog_writes().size(), 500u);
}

TEST_P(CatalogSyncTest, EditsReachTheProviderAndOnlyWhatChangedIsSent) {
  start();
  insert_products("E", 6);
  ASSERT_EQ(once().exit_status, 0);
  const auto before = provider_products();
  const std::size_t sent_before = catalog_writes().size();
  ASSERT_EQ(sent_before, 6u);

  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'E-0001'");
  execute("UPDATE fulfillsync_variants SET gtin = '9999999999999', customs_value = '15' WHERE sku = 'E-0002-2'");
  execute(
      "INSERT INTO fulfillsync_variants (sku, product_reference_id, name) VALUES ('E-0003-9', 'E-0003', 'New size')");
  execute("DELETE FROM fulfillsync_variants WHERE sku = 'E-0004-5'");
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  const auto writes = catalog_writes();
  std::vector<std::array<std::string, 3>> sent(writes.begin() + static_cast<long>(sent_before), writes.end());
  const auto id = [&](const std::string& reference) { return before.at(reference).id; };
  const std::int64_t variant = before.at("E-0002").variants[1].id;
  const std::vector<std::array<std::string, 3>> expected = {
      {"PATCH", fmt::format("/product/{}", id("E-0001")), R"({"name":"Renamed"})"},
      {"PATCH", fmt::format("/product/{}/variants", id("E-0002")),
       fmt::format(R"([{{"id":{},"gtin":"9999999999999","customs":{{"value":15}}}}])", variant)},
      {"POST", fmt::format("/product/{}/variants", id("E-0003")), R"([{"sku":"E-0003-9","name":"New size"}])"},
  };
  std::sort(sent.begin(), sent.end());
  std::vector<std::array<std::string, 3>> sorted = expected;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sent, sorted);

  const auto after = provider_products();
  EXPECT_EQ(after.at("E-0001").name, "Renamed");
  EXPECT_EQ(after.at("E-0002").variants[1].gtin, "9999999999999");
  EXPECT_EQ(after.at("E-0002").variants[1].customs_value, "15");
  EXPECT_EQ(after.at("E-0003").variants.back().sku, "E-0003-9");
  // The removed variant stays at the provider, and the result row says so.
  EXPECT_EQ(after.at("E-0004").variants.size(), 5u);
  EXPECT_THAT(result_column("note", "E-0004", "fulfillsync_product_sync"), HasSubstr("E-0004-5"));
  EXPECT_EQ(result_column("state", "E-0004", "fulfillsync_product_sync"), "created");
  for (const char* reference : {"E-0001", "E-0002", "E-0003"}) {
    EXPECT_EQ(result_column("state", reference, "fulfillsync_product_sync"), "created") << reference;
  }
  EXPECT_EQ(sandbox_count("products"), 6);
}

TEST_P(CatalogSyncTest, LocalRulesRejectWithReasons) {
  start();
  execute("INSERT INTO fulfillsync_products (reference_id, name) VALUES ('BAD-1', 'No variants');"
          "INSERT INTO fulfillsync_products (reference_id, name) VALUES ('BAD-2', 'Bad status');"
          "INSERT INTO fulfillsync_variants (sku, product_reference_id, name, status, gtin) VALUES "
          "('BAD-2-1', 'BAD-2', 'V', 'Sold out', '123456789012345');");
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);  // rows stay rejected
  EXPECT_EQ(result_column("state", "BAD-1", "fulfillsync_product_sync"), "rejected");
  EXPECT_THAT(result_column("last_error", "BAD-1", "fulfillsync_product_sync"), HasSubstr("at least one row"));
  EXPECT_EQ(result_column("state", "BAD-2", "fulfillsync_product_sync"), "rejected");
  const std::string reasons = result_column("last_error", "BAD-2", "fulfillsync_product_sync");
  EXPECT_THAT(reasons, HasSubstr("status must be one of Active, Inactive"));
  EXPECT_THAT(reasons, HasSubstr("gtin must be at most 14 characters"));
  EXPECT_EQ(sandbox_count("products"), 0);
  EXPECT_TRUE(catalog_writes().empty());

  // Fixed, it is sent.
  execute("UPDATE fulfillsync_variants SET status = 'Active', gtin = NULL WHERE sku = 'BAD-2-1'");
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);  // BAD-1 still is
  EXPECT_EQ(result_column("state", "BAD-2", "fulfillsync_product_sync"), "created");
}

// A column the merchant sets NULL: the spec makes a product's `type` nullable (`string | null`), so
// it is cleared with null; a variant's `gtin` (`string`) and a product's taxonomy (an object) cannot
// be cleared through the API: nothing is sent for them, the result row's note says what the
// provider keeps, and the passes after it send nothing again.
TEST_P(CatalogSyncTest, AColumnSetNullIsClearedWhereTheSpecAllowsAndNotedWhereItDoesNot) {
  start();
  insert_products("C", 4);  // C-0001 and C-0002 have a type; C-0002 and C-0004 a taxonomy
  ASSERT_EQ(once().exit_status, 0);
  const auto before = provider_products();
  const std::size_t sent_before = catalog_writes().size();
  ASSERT_EQ(before.at("C-0001").type, "Apparel");

  execute("UPDATE fulfillsync_products SET type = NULL WHERE reference_id = 'C-0001'");
  execute("UPDATE fulfillsync_variants SET gtin = NULL WHERE sku = 'C-0002-1'");
  execute("UPDATE fulfillsync_products SET taxonomy_id = NULL WHERE reference_id = 'C-0004'");
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  const std::vector<std::array<std::string, 3>> expected = {
      {"PATCH", fmt::format("/product/{}", before.at("C-0001").id), R"({"type":null})"}};
  EXPECT_EQ(catalog_writes_after(sent_before), expected);
  const auto after = provider_products();
  EXPECT_EQ(after.at("C-0001").type, "");  // null
  EXPECT_EQ(after.at("C-0002").variants[0].gtin, before.at("C-0002").variants[0].gtin);
  EXPECT_EQ(after.at("C-0004").taxonomy, 11);
  const std::string gtin = before.at("C-0002").variants[0].gtin;
  EXPECT_THAT(result_column("note", "C-0002", "fulfillsync_product_sync"),
              HasSubstr(fmt::format("gtin of variant 'C-0002-1' was removed at the shop; the provider keeps \"{}\"",
                                    gtin)));
  EXPECT_THAT(result_column("note", "C-0004", "fulfillsync_product_sync"),
              HasSubstr("taxonomy_id was removed at the shop; the provider keeps 11"));
  EXPECT_EQ(result_column("note", "C-0001", "fulfillsync_product_sync"), "");
  for (const char* reference : {"C-0001", "C-0002", "C-0004"}) {
    EXPECT_EQ(result_column("state", reference, "fulfillsync_product_sync"), "created") << reference;
  }

  // Passes after the note send nothing, and the note stays; a later change of the product still
  // does not send the gtin, and notes it again.
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(catalog_writes_after(sent_before).size(), 1u);
  execute("UPDATE fulfillsync_variants SET name = 'Renamed' WHERE sku = 'C-0002-1'");
  ASSERT_EQ(once().exit_status, 0);
  const auto writes = catalog_writes_after(sent_before);
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[1][2], fmt::format(R"([{{"id":{},"name":"Renamed"}}])", before.at("C-0002").variants[0].id));
  EXPECT_THAT(result_column("note", "C-0002", "fulfillsync_product_sync"), HasSubstr("gtin of variant 'C-0002-1'"));
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(catalog_writes_after(sent_before).size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Drivers, CatalogSyncTest, kBothDrivers, driver_name);

// On SQLite only: what follows is about the job, not the database.
class CatalogJobTest : public CatalogSyncTest {};

TEST_P(CatalogJobTest, CustomsValueIsAnIntegerBefore2026_07AndAFractionIsRejected) {
  start({}, "2025-07");
  execute(product_sql("W", 1, "12.00") + product_sql("F", 1, "12.50"));
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);  // F-0001 stays rejected
  const auto writes = catalog_writes();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_THAT(writes[0][2], HasSubstr(R"("value":12,)"));
  EXPECT_EQ(result_column("state", "W-0001", "fulfillsync_product_sync"), "created");
  EXPECT_EQ(result_column("state", "F-0001", "fulfillsync_product_sync"), "rejected");
  EXPECT_THAT(result_column("last_error", "F-0001", "fulfillsync_product_sync"),
              HasSubstr("customs_value must be a whole number before API version 2026-07"));

  // From 2026-07 the fraction is sent as the number it is.
  version_ = "2026-07";
  write_catalog_config();
  execute("UPDATE fulfillsync_variants SET customs_value = '12.5' WHERE product_reference_id = 'F-0001'");
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(result_column("state", "F-0001", "fulfillsync_product_sync"), "created");
  EXPECT_THAT(catalog_writes().back()[2], HasSubstr(R"("value":12.5,)"));
  EXPECT_EQ(provider_products().at("F-0001").variants[0].customs_value, "12.5");
}

// The orders' change log without the catalog's triggers (a shop that ran upgrade-source only): it
// says nothing of the catalog, so every pass compares the catalog, and an edit is found.
TEST_P(CatalogJobTest, AnEditIsFoundWithoutTheCatalogsChangeLog) {
  create_merchant_database();  // source tables and the orders' change log, no catalog triggers
  start();
  insert_products("N", 3);
  auto running = run_in_background();
  const auto wait_for = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 200; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  };
  const auto created = [&] {
    try {
      return result_column("state", "N-0003", "fulfillsync_product_sync") == "created";
    } catch (const std::runtime_error&) {
      return false;  // the result tables are not there yet
    }
  };
  ASSERT_TRUE(wait_for(created)) << running->stderr_text();
  // Passes that found nothing new have run; an order written now moves only the orders' log.
  std::this_thread::sleep_for(300ms);
  insert_order("N-ORDER", 1);
  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'N-0002'");
  EXPECT_TRUE(wait_for([&] { return provider_products().at("N-0002").name == "Renamed"; })) << running->stderr_text();
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(20s), 0);
}

TEST_P(CatalogJobTest, KilledAtEveryFailpointLeavesNoDuplicateProductOrVariant) {
  std::vector<std::string> failpoints;
  for (const std::string_view name : daemon::kFailpoints) {
    if (name.starts_with("push_products.")) failpoints.emplace_back(name);
  }
  ASSERT_EQ(failpoints.size(), 8u);
  const auto arm = [](const std::string& name) { return std::vector<std::string>{"FULFILLSYNC_FAILPOINTS=" + name}; };
  for (const std::string& failpoint : failpoints) {
    SCOPED_TRACE(failpoint);
    sandbox.reset();
    create_merchant_database();
    merchant->exec(read_file(source_path("schema/merchant/catalog_change_log.sql")));
    start();
    insert_products("K", 20);
    const bool of_updates = failpoint.ends_with("before_update") || failpoint.ends_with("between_requests");
    if (of_updates) {
      ASSERT_EQ(once().exit_status, 0);
      // A product field and a new variant of each product: two requests per update.
      execute("UPDATE fulfillsync_products SET name = name || ' v2';"
              "INSERT INTO fulfillsync_variants (sku, product_reference_id, name) "
              "SELECT reference_id || '-9', reference_id, 'Added' FROM fulfillsync_products;");
    }
    if (failpoint.ends_with("after_reconcile_lookup")) {
      const auto first = once(arm("push_products.after_mark"));
      ASSERT_EQ(first.exit_status, kKilled) << first.stderr_text;
    }
    const auto killed = once(arm(failpoint));
    ASSERT_EQ(killed.exit_status, kKilled) << "the failpoint was never reached:\n" << killed.stderr_text;
    EXPECT_THAT(killed.stderr_text, HasSubstr("failpoint " + failpoint));
    const auto finished = once();
    ASSERT_EQ(finished.exit_status, 0) << finished.stderr_text;

    const auto products = provider_products();
    EXPECT_EQ(products.size(), 20u);
    EXPECT_EQ(sandbox_count("products"), 20);
    for (int i = 1; i <= 20; ++i) {
      const std::string reference = fmt::format("K-{:04}", i);
      ASSERT_TRUE(products.contains(reference)) << reference;
      const auto& product = products.at(reference);
      EXPECT_EQ(product.variants.size(), static_cast<std::size_t>(1 + i % 5 + (of_updates ? 1 : 0))) << reference;
      EXPECT_EQ(product.name, fmt::format("Product {}{}", i, of_updates ? " v2" : "")) << reference;
      EXPECT_EQ(result_column("state", reference, "fulfillsync_product_sync"), "created") << reference;
    }
  }
}

TEST_P(CatalogJobTest, FaultsStillCreateEachProductAndVariantOnce) {
  start({"--fault-seed", "11", "--faults",
         "route=POST /**;500=0.1;429=0.05;retry_after_s=1;drop_after=0.1;drop_before=0.05;latency_ms=200@0.05"
         " | route=PATCH /**;503=0.1;drop_after=0.1 | route=GET /**;503=0.05;drop_before=0.05"});
  insert_products("FLT", 120);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("adopted"));  // a create whose answer was lost, found by SKU
  execute("UPDATE fulfillsync_products SET name = name || ' v2' WHERE reference_id <= 'FLT-0060';"
          "INSERT INTO fulfillsync_variants (sku, product_reference_id, name) "
          "SELECT reference_id || '-9', reference_id, 'Added' FROM fulfillsync_products WHERE reference_id > 'FLT-0060';");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  sandbox->admin("POST", "/_sandbox/faults", "");

  const auto products = provider_products();
  EXPECT_EQ(products.size(), 120u);
  EXPECT_EQ(sandbox_count("products"), 120);
  for (int i = 1; i <= 120; ++i) {
    const std::string reference = fmt::format("FLT-{:04}", i);
    ASSERT_TRUE(products.contains(reference)) << reference;
    const auto& product = products.at(reference);
    EXPECT_EQ(product.name, fmt::format("Product {}{}", i, i <= 60 ? " v2" : "")) << reference;
    EXPECT_EQ(product.variants.size(), static_cast<std::size_t>(1 + i % 5 + (i > 60 ? 1 : 0))) << reference;
    EXPECT_EQ(result_column("remote_id", reference, "fulfillsync_product_sync"), std::to_string(product.id));
  }
  const auto stats = sandbox->admin("GET", "/_sandbox/stats").body;
  EXPECT_THAT(stats, HasSubstr("\"drop_after\":"));
}

// The checkpoint store lost: the start rebuilds it from the result tables, products too. No product
// is posted again (to be refused as a duplicate SKU, looked up and updated whole): each is known as
// created with the version it was sent at, and an edit after the rebuild sends only itself. One
// whose result never got its remote_id (its create's answer lost with the store) is found in the
// SKU map (variant_sync, pull_stock's read of the provider's product list) and compared there.
TEST_P(CatalogJobTest, ADeletedStoreIsRebuiltWithItsProductsAndAnEditSendsOnlyItself) {
  start();
  insert_products("R", 20);
  ASSERT_EQ(once().exit_status, 0);
  const auto before = provider_products();
  const std::size_t sent_before = catalog_writes().size();
  ASSERT_EQ(sent_before, 20u);
  const auto mapped = shop_app->query("SELECT CAST(product_id AS TEXT) FROM fulfillsync_variant_sync WHERE sku = 'R-0005-1'");
  ASSERT_EQ(mapped.size(), 1u);  // pull_stock read the provider's product list
  ASSERT_EQ(mapped[0][0], std::to_string(before.at("R-0005").id));

  delete_store();
  execute("UPDATE fulfillsync_product_sync SET state = 'in_flight', remote_id = NULL WHERE reference_id = 'R-0005'");
  const long requests_before = sandbox_count("requests_total");
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("20 products adopted as created (1 to be compared with the provider"));
  EXPECT_EQ(result_column("remote_id", "R-0005", "fulfillsync_product_sync"), std::to_string(before.at("R-0005").id));
  EXPECT_TRUE(catalog_writes_after(sent_before).empty());
  // The channel, a few pulls, R-0005 read: nothing per product.
  EXPECT_LE(sandbox_count("requests_total") - requests_before, 12) << result.stderr_text;

  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'R-0003'");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const std::vector<std::array<std::string, 3>> expected = {
      {"PATCH", fmt::format("/product/{}", before.at("R-0003").id), R"({"name":"Renamed"})"}};
  EXPECT_EQ(catalog_writes_after(sent_before), expected);
  EXPECT_EQ(sandbox_count("products"), 20);
  EXPECT_EQ(provider_products().size(), 20u);
  for (int i = 1; i <= 20; ++i) {
    const std::string reference = fmt::format("R-{:04}", i);
    EXPECT_EQ(result_column("state", reference, "fulfillsync_product_sync"), "created") << reference;
    EXPECT_EQ(result_column("remote_id", reference, "fulfillsync_product_sync"), std::to_string(before.at(reference).id));
  }
}

// Edited while the store was lost, a product's version at the provider is not known from the result
// table: recover-store adopts it all the same, and the next pass reads it at the provider and sends
// only what differs from the merchant's version, without a POST.
TEST_P(CatalogJobTest, RecoverStoreAdoptsAProductEditedMeanwhileAndComparesItWithTheProvider) {
  start();
  insert_products("M", 10);
  ASSERT_EQ(once().exit_status, 0);
  const auto before = provider_products();
  const std::size_t sent_before = catalog_writes().size();

  delete_store();
  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'M-0002';"
          "UPDATE fulfillsync_variants SET gtin = '9999999999999' WHERE sku = 'M-0002-2';"
          "INSERT INTO fulfillsync_variants (sku, product_reference_id, name) VALUES ('M-0002-9', 'M-0002', 'New');");
  auto result = daemon({"recover-store"});
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("10 products adopted as created (1 to be compared with the provider"));
  EXPECT_EQ(result_column("state", "M-0002", "fulfillsync_product_sync"), "created");
  EXPECT_TRUE(catalog_writes_after(sent_before).empty());

  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const std::int64_t id = before.at("M-0002").id;
  std::vector<std::array<std::string, 3>> expected = {
      {"PATCH", fmt::format("/product/{}", id), R"({"name":"Renamed"})"},
      {"POST", fmt::format("/product/{}/variants", id), R"([{"sku":"M-0002-9","name":"New"}])"},
      {"PATCH", fmt::format("/product/{}/variants", id),
       fmt::format(R"([{{"id":{},"gtin":"9999999999999"}}])", before.at("M-0002").variants[1].id)},
  };
  EXPECT_EQ(catalog_writes_after(sent_before), expected);
  const auto after = provider_products();
  EXPECT_EQ(after.size(), 10u);
  EXPECT_EQ(sandbox_count("products"), 10);
  EXPECT_EQ(after.at("M-0002").name, "Renamed");
  EXPECT_EQ(after.at("M-0002").variants.size(), before.at("M-0002").variants.size() + 1);
  EXPECT_EQ(result_column("state", "M-0002", "fulfillsync_product_sync"), "created");

  // The version it was brought to is known now: a pass sends nothing more.
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(catalog_writes_after(sent_before).size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, CatalogJobTest, ::testing::Values(Driver::sqlite), driver_name);

}  // namespace
}  // namespace fulfillsync::testing
