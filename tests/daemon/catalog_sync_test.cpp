// push_products end to end: the catalog in a real merchant database (SQLite, and PostgreSQL where a
// server is available) pushed to the sandbox through the daemon (sync_fixture.hpp).
#include <SQLiteCpp/SQLiteCpp.h>
#include <simdjson.h>

#include "fulfillsync/daemon/exit_codes.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "merchant_driver.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

// check-config looks at the catalog where push_products reads it: each missing table, column or
// privilege is one line naming the table; missing change triggers are a warning.
TEST_P(CatalogSyncTest, CheckConfigNamesEachCatalogProblemInOneLine) {
  start();
  auto check = daemon({"check-config"});
  EXPECT_EQ(check.exit_status, 0) << check.stdout_text << check.stderr_text;
  EXPECT_THAT(check.stdout_text, HasSubstr("\nOK    catalog tables: every table and column push_products reads\n"));
  EXPECT_THAT(check.stdout_text, HasSubstr("\nOK    catalog change detection: changes are read by "));

  // Without push_products the catalog is not looked at.
  write_config();
  check = daemon({"check-config"});
  EXPECT_THAT(check.stdout_text, Not(HasSubstr("catalog")));
  write_catalog_config();

  // Edits would be found only by comparing the whole catalog at every pass.
  execute(on_postgresql() ? "DROP TRIGGER fulfillsync_variants_xid ON fulfillsync_variants"
                          : "DROP TRIGGER fulfillsync_variants_log_update");
  check = daemon({"check-config"});
  EXPECT_EQ(check.exit_status, 0) << check.stdout_text << check.stderr_text;
  EXPECT_THAT(check.stdout_text, ::testing::ContainsRegex("\nWARN  catalog change detection: [^\n]*whole catalog[^\n]*"
                                                          "fix: fulfillsyncd upgrade-source"));

  if (on_postgresql()) {
    // A role that may not read the variants.
    execute("DO $$ BEGIN CREATE ROLE catalog_check LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;"
            "GRANT USAGE ON SCHEMA shop TO catalog_check; GRANT SELECT ON ALL TABLES IN SCHEMA shop TO catalog_check;"
            "REVOKE SELECT ON fulfillsync_variants FROM catalog_check;");
    const std::string config = read_file(config_path);
    std::string as_reader = config;
    as_reader.replace(as_reader.find(conninfo()), conninfo().size(), conninfo() + " user=catalog_check");
    write_file(config_path, as_reader);
    check = daemon({"check-config"});
    EXPECT_EQ(check.exit_status, daemon::exit_code::config) << check.stdout_text << check.stderr_text;
    EXPECT_THAT(check.stdout_text, HasSubstr("\nERROR catalog tables: fulfillsync_variants: the daemon's role may "
                                             "not read it (GRANT SELECT ON \"shop\".\"fulfillsync_variants\" TO ...)"));
    write_file(config_path, config);
  }

  execute("ALTER TABLE fulfillsync_variants DROP COLUMN gtin");
  check = daemon({"check-config"});
  EXPECT_EQ(check.exit_status, daemon::exit_code::config) << check.stdout_text << check.stderr_text;
  EXPECT_THAT(check.stdout_text, HasSubstr("\nERROR catalog tables: fulfillsync_variants.gtin: no such column"));

  execute("DROP TABLE fulfillsync_variants");
  check = daemon({"check-config"});
  EXPECT_EQ(check.exit_status, daemon::exit_code::config) << check.stdout_text << check.stderr_text;
  EXPECT_THAT(check.stdout_text, ::testing::ContainsRegex("\nERROR catalog tables: fulfillsync_variants[^\n]*no such "
                                                          "table"));
  EXPECT_THAT(check.stdout_text, Not(HasSubstr("ERROR source tables")));
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

// `upgrade-source` adds the catalog's change triggers where the catalog's tables exist, once, and
// skips them with a note where they do not.
class CatalogUpgradeTest : public DriverFixture {};

TEST_P(CatalogUpgradeTest, InstallsTheCatalogsTriggersOnceOrSkipsThemWithoutACatalog) {
  start_sandbox();
  write_config("", "    push_products: {enabled: true, interval: 50ms}\n");
  auto check = daemon({"check-config"});
  EXPECT_THAT(check.stdout_text, HasSubstr("\nWARN  catalog change detection: "));

  const auto first = daemon({"upgrade-source"});
  ASSERT_EQ(first.exit_status, 0) << first.stdout_text << first.stderr_text;
  EXPECT_THAT(first.stdout_text, HasSubstr(": catalog change triggers added; push_products reads only what changed"));
  const auto second = daemon({"upgrade-source"});
  ASSERT_EQ(second.exit_status, 0) << second.stdout_text << second.stderr_text;
  EXPECT_THAT(second.stdout_text, HasSubstr(": change log present; nothing to do\n"));
  EXPECT_THAT(second.stdout_text, HasSubstr(": catalog change triggers present; nothing to do\n"));
  check = daemon({"check-config"});
  EXPECT_EQ(check.exit_status, 0) << check.stdout_text << check.stderr_text;
  EXPECT_THAT(check.stdout_text, HasSubstr("\nOK    catalog change detection: "));

  // A shop without a catalog (and, on SQLite, without the change log yet) still upgrades.
  if (!on_postgresql()) drop_change_log();
  execute("DROP TABLE fulfillsync_variants; DROP TABLE fulfillsync_products;");
  const auto without = daemon({"upgrade-source"});
  ASSERT_EQ(without.exit_status, 0) << without.stdout_text << without.stderr_text;
  EXPECT_THAT(without.stdout_text, HasSubstr(on_postgresql() ? ": change log present" : ": change log added"));
  EXPECT_THAT(without.stdout_text,
              HasSubstr(": no catalog tables (fulfillsync_products and fulfillsync_variants as tables); catalog "
                        "change triggers skipped\n"));
}

INSTANTIATE_TEST_SUITE_P(Drivers, CatalogUpgradeTest, kBothDrivers, driver_name);

// On PostgreSQL the catalog is read by transaction id: after one whole pass only what changed is
// read, a transaction that commits late is read once it commits, and a commit's NOTIFY wakes the job.
class CatalogChangeOrderTest : public CatalogSyncTest {
 protected:
  bool created(const std::string& reference) {
    try {
      return result_column("state", reference, "fulfillsync_product_sync") == "created";
    } catch (const std::runtime_error&) {
      return false;  // the result tables are not there yet
    }
  }
  static bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit = 20s) {
    for (const auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      if (done()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return done();
  }
  // How often the server's log shows `statement` (log_statement = all on this database).
  long logged(std::string_view statement) {
    const std::string log = postgres().log();
    long count = 0;
    for (std::size_t at = log.find(statement); at != std::string::npos; at = log.find(statement, at + 1)) ++count;
    return count;
  }
};

TEST_P(CatalogChangeOrderTest, AnIdlePassReadsNoCatalogRowsAndALateCommitIsNotMissed) {
  start();
  execute("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET log_statement = ''all''', current_database()); END $$");
  insert_products("I", 5);
  auto running = run_in_background();
  ASSERT_TRUE(wait_for([&] { return created("I-0005"); })) << running->stderr_text();
  std::this_thread::sleep_for(500ms);  // the first (whole) pass is over

  // Products read with their variants; the change order looked at.
  constexpr std::string_view kRowsRead = R"(FROM "shop"."fulfillsync_products" AS t WHERE t.reference_id)";
  constexpr std::string_view kChangesLooked =
      R"(SELECT t.change_xid::text, t.reference_id FROM "shop"."fulfillsync_products")";
  const long read = logged(kRowsRead), looked = logged(kChangesLooked);
  EXPECT_GT(read, 0) << postgres().log();
  std::this_thread::sleep_for(1s);  // passes every 50 to 100 ms
  EXPECT_EQ(logged(kRowsRead), read) << "an idle pass read catalog rows";
  EXPECT_GT(logged(kChangesLooked), looked + 3) << "idle passes did not look for changes";

  // A transaction holds a product uncommitted while a newer one is committed and pushed.
  PostgresShopConnection late(conninfo() + " options='-c search_path=shop'");
  late.exec("BEGIN;" + product_sql("LATE", 1));
  execute(product_sql("NEW", 1));
  ASSERT_TRUE(wait_for([&] { return created("NEW-0001"); })) << running->stderr_text();
  std::this_thread::sleep_for(300ms);  // more passes, past NEW's commit
  late.exec("COMMIT");
  EXPECT_TRUE(wait_for([&] { return created("LATE-0001"); })) << running->stderr_text();
  EXPECT_EQ(sandbox_count("products"), 7);
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(20s), 0);
}

TEST_P(CatalogChangeOrderTest, AnEditIsPushedWhenItsCommitNotifiesThoughTheIntervalIsAnHour) {
  start();
  std::string config = read_file(config_path);
  const std::string every = "push_products: {enabled: true, interval: 50ms";
  config.replace(config.find(every), every.size(), "push_products: {enabled: true, interval: 1h");
  write_file(config_path, config);
  insert_products("W", 2);
  auto running = run_in_background();
  ASSERT_TRUE(wait_for([&] { return created("W-0002"); })) << running->stderr_text();
  ASSERT_TRUE(running->wait_for_stderr("listening for changes", 10s)) << running->stderr_text();
  std::this_thread::sleep_for(500ms);  // the first run is over: the job rests for an hour

  execute("UPDATE fulfillsync_products SET name = 'Woken' WHERE reference_id = 'W-0001'");
  EXPECT_TRUE(wait_for([&] { return provider_products().at("W-0001").name == "Woken"; }, 5s))
      << running->stderr_text();
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(20s), 0);
}

INSTANTIATE_TEST_SUITE_P(Drivers, CatalogChangeOrderTest, ::testing::Values(Driver::postgresql), driver_name);

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
  // Compared with the provider, it holds the merchant's version: no note says it may not.
  EXPECT_EQ(result_column("note", "R-0005", "fulfillsync_product_sync"), "");
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

// An update whose answer was lost may have been applied: the version that replaces it before it
// is settled is compared with what the provider holds, so that a field it sets back (a status
// changed and changed back) does not stay at the provider as the lost update left it.
TEST_P(CatalogJobTest, AVersionReplacingAnUpdateWhoseAnswerWasLostIsComparedWithTheProvider) {
  start();
  insert_products("L", 1);  // L-0001 with variants L-0001-1 and L-0001-2, both Active
  ASSERT_EQ(once().exit_status, 0);
  const auto status_of = [&](std::size_t variant) {
    return provider_products().at("L-0001").variants[variant].status;
  };
  ASSERT_EQ(status_of(0), "Active");

  // Applied, its answer lost; looked at again after the request timeout, pending once more when the
  // daemon dies.
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "route=PATCH /**;drop_after=1").status, 200);
  execute("UPDATE fulfillsync_variants SET status = 'Inactive' WHERE sku = 'L-0001-1'");
  const auto killed = once({"FULFILLSYNC_FAILPOINTS=push_products.before_update@2"});
  ASSERT_EQ(killed.exit_status, kKilled) << killed.stderr_text;
  ASSERT_EQ(status_of(0), "Inactive");  // the lost update was applied

  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "").status, 200);
  execute("UPDATE fulfillsync_variants SET status = 'Active' WHERE sku = 'L-0001-1'");
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(status_of(0), "Active");
  EXPECT_EQ(status_of(1), "Active");
  EXPECT_EQ(result_column("state", "L-0001", "fulfillsync_product_sync"), "created");
}

// A version taken while the update before it is unclear waits for it; once that update settles in
// the same run, the version goes out before `once` ends, not at some later run.
TEST_P(CatalogJobTest, AVersionHeldBehindAnUnclearUpdateIsSentByTheSameOnce) {
  start();
  insert_products("H", 1);
  ASSERT_EQ(once().exit_status, 0);
  execute("UPDATE fulfillsync_products SET type = 'Gear' WHERE reference_id = 'H-0001'");
  const auto killed = once({"FULFILLSYNC_FAILPOINTS=push_products.after_mark"});
  ASSERT_EQ(killed.exit_status, kKilled) << killed.stderr_text;  // the update in flight, not sent

  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'H-0001'");
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const auto product = provider_products().at("H-0001");
  EXPECT_EQ(product.type, "Gear");
  EXPECT_EQ(product.name, "Renamed");
}

// An older copy of the store restored: it does not know the versions a newer store sent since. A
// product changed since and changed back is compared with the provider and brought back, not left
// as the lost version has it; the others send nothing.
TEST_P(CatalogJobTest, AnOlderStoreRestoredComparesTheProductsUpdatedSinceWithTheProvider) {
  start();
  insert_products("O", 3);  // O-0001 has the type Apparel
  ASSERT_EQ(once().exit_status, 0);
  const std::filesystem::path copy = dir / "checkpoint-copy.db";
  SQLite::Database((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY).backup(copy.c_str(), SQLite::Database::Save);
  execute("UPDATE fulfillsync_products SET type = 'Changed' WHERE reference_id = 'O-0001'");
  ASSERT_EQ(once().exit_status, 0);
  const auto before = provider_products();
  ASSERT_EQ(before.at("O-0001").type, "Changed");

  delete_store();
  std::filesystem::copy_file(copy, dir / "checkpoint.db");
  execute("UPDATE fulfillsync_products SET type = 'Apparel' WHERE reference_id = 'O-0001'");
  const std::size_t sent_before = catalog_writes().size();
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("1 products changed at the provider since this store was current"));
  EXPECT_EQ(provider_products().at("O-0001").type, "Apparel");
  const std::vector<std::array<std::string, 3>> expected = {
      {"PATCH", fmt::format("/product/{}", before.at("O-0001").id), R"({"type":"Apparel"})"}};
  EXPECT_EQ(catalog_writes_after(sent_before), expected);
  EXPECT_EQ(result_column("state", "O-0001", "fulfillsync_product_sync"), "created");

  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(catalog_writes_after(sent_before).size(), 1u);
}

TEST_P(CatalogJobTest, AnUpdateAnOlderStoreHadUnderWayIsComparedWithTheProviderWhenSentAgain) {
  start();
  insert_products("W", 1);  // W-0001: 'Product 1', Apparel
  ASSERT_EQ(once().exit_status, 0);
  // An update reaches the provider, and the store is copied before it records the answer.
  execute("UPDATE fulfillsync_products SET type = 'Gear' WHERE reference_id = 'W-0001'");
  ASSERT_EQ(once({"FULFILLSYNC_FAILPOINTS=push_products.after_response"}).exit_status, kKilled);
  const std::filesystem::path copy = dir / "checkpoint-copy.db";
  SQLite::Database((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY).backup(copy.c_str(), SQLite::Database::Save);
  ASSERT_EQ(once().exit_status, 0);
  // A newer store sends a rename.
  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'W-0001'");
  ASSERT_EQ(once().exit_status, 0);
  ASSERT_EQ(provider_products().at("W-0001").name, "Renamed");

  // The older copy comes back, and the merchant takes the rename back: its row is again the version
  // the copy's update under way carries, so only that update can bring the name back.
  delete_store();
  std::filesystem::copy_file(copy, dir / "checkpoint.db");
  execute("UPDATE fulfillsync_products SET name = 'Product 1' WHERE reference_id = 'W-0001'");
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("1 products changed at the provider since this store was current"));
  const auto after = provider_products().at("W-0001");
  EXPECT_EQ(after.name, "Product 1");
  EXPECT_EQ(after.type, "Gear");
}

TEST_P(CatalogJobTest, AnUpdateAStoreSinceReplacedSentIsNotLeftAtTheProviderWhenTheRowTurnsBack) {
  start();
  insert_products("T", 1);  // T-0001: 'Product 1', Apparel
  ASSERT_EQ(once().exit_status, 0);
  const std::filesystem::path copy = dir / "checkpoint-copy.db";
  SQLite::Database((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY).backup(copy.c_str(), SQLite::Database::Save);
  // An update reaches the provider; the store is killed before it records the answer, so the result
  // table never shows the version as sent.
  execute("UPDATE fulfillsync_products SET type = 'Gear' WHERE reference_id = 'T-0001'");
  ASSERT_EQ(once({"FULFILLSYNC_FAILPOINTS=push_products.after_response"}).exit_status, kKilled);
  ASSERT_EQ(provider_products().at("T-0001").type, "Gear");

  // The copy from before the update comes back, and the merchant turns the row back to the version
  // the copy last sent: only a store that knows the provider moved on sends it.
  delete_store();
  std::filesystem::copy_file(copy, dir / "checkpoint.db");
  execute("UPDATE fulfillsync_products SET type = 'Apparel' WHERE reference_id = 'T-0001'");
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("1 products changed at the provider since this store was current"));
  EXPECT_EQ(provider_products().at("T-0001").type, "Apparel");
}

INSTANTIATE_TEST_SUITE_P(Sqlite, CatalogJobTest, ::testing::Values(Driver::sqlite), driver_name);

// The operator's tools over the catalog: status, retry and --dry-run.
class CatalogOperatorTest : public CatalogSyncTest {
 protected:
  // The POST /product requests the sandbox received whose body holds `text`.
  long creates_holding(std::string_view text) {
    long count = 0;
    for (const auto& write : catalog_writes()) {
      count += write[0] == "POST" && write[1] == "/product" && write[2].find(text) != std::string::npos;
    }
    return count;
  }

  // A product the local rules reject for one variant's status, and one the provider rejects (a
  // taxonomy it does not have).
  void insert_rejected_products() {
    execute("INSERT INTO fulfillsync_products (reference_id, name) VALUES ('BAD-2', 'Bad status');"
            "INSERT INTO fulfillsync_variants (sku, product_reference_id, name) VALUES ('BAD-2-1', 'BAD-2', 'Fine');"
            "INSERT INTO fulfillsync_variants (sku, product_reference_id, name, status) VALUES "
            "('BAD-2-2', 'BAD-2', 'V', 'Sold out');"
            "INSERT INTO fulfillsync_products (reference_id, name, taxonomy_id) VALUES ('TAX-1', 'No such taxonomy', "
            "999999);"
            "INSERT INTO fulfillsync_variants (sku, product_reference_id, name) VALUES ('TAX-1-1', 'TAX-1', 'V');");
  }
};

TEST_P(CatalogOperatorTest, StatusShowsTheCatalogBacklogAndItsRejectionsWithTheirSkus) {
  start();
  insert_products("S", 3);
  insert_rejected_products();
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);  // rows stay rejected
  // A new product not sent yet, and a change not sent yet.
  execute(product_sql("S", 4));
  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'S-0001'");

  const auto status = daemon({"status"});
  EXPECT_EQ(status.exit_status, 3) << status.stderr_text;  // no daemon runs
  EXPECT_THAT(status.stdout_text, HasSubstr("Catalog: 6 products; 1 not created yet, 1 with changes not sent yet, 0 "
                                            "awaiting an unclear outcome, 2 rejected\n"));
  EXPECT_THAT(status.stdout_text, HasSubstr("No order or return waiting to be sent\n"));
  EXPECT_THAT(status.stdout_text, Not(HasSubstr("Nothing waiting to be sent")));
  EXPECT_THAT(status.stdout_text, HasSubstr("product BAD-2 SKU BAD-2-2 ("));
  EXPECT_THAT(status.stdout_text, Not(HasSubstr("  product BAD-2 (")));  // listed once, with its SKU
  EXPECT_THAT(status.stdout_text, HasSubstr("status must be one of Active, Inactive"));
  EXPECT_THAT(status.stdout_text, ::testing::ContainsRegex("product TAX-1 \\([^)]*\\): [^\n]*Taxonomy 999999 does not "
                                                           "exist"));
  const auto json = daemon({"status", "--json"});
  EXPECT_THAT(json.stdout_text, HasSubstr(R"("catalog":{"push_products":true,"products":6,"not_created":1,)"
                                          R"("changes_unsent":1,"unclear":0,"rejected":2,"source_problem":null,)"));
  EXPECT_THAT(json.stdout_text, HasSubstr(R"("kind":"product_create","reference_id":"BAD-2","skus":["BAD-2-2"],)"));
  EXPECT_THAT(json.stdout_text, HasSubstr(R"("reference_id":"TAX-1","skus":[],)"));

  // Sent, the backlog is the rejections alone.
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);
  EXPECT_THAT(daemon({"status"}).stdout_text,
              HasSubstr("Catalog: 6 products; 0 not created yet, 0 with changes not sent yet, 0 awaiting an unclear "
                        "outcome, 2 rejected\n"));
  // A create interrupted after it was marked in flight awaits its lookup.
  execute(product_sql("S", 5));
  ASSERT_EQ(once({"FULFILLSYNC_FAILPOINTS=push_products.after_mark"}).exit_status, kKilled);
  EXPECT_THAT(daemon({"status"}).stdout_text, HasSubstr("1 awaiting an unclear outcome, 2 rejected\n"));

  // push_products off: one line from the ledger, without reading the catalog.
  write_config();
  execute("DROP TABLE fulfillsync_variants");
  const auto off = daemon({"status"});
  EXPECT_THAT(off.stdout_text, HasSubstr("Catalog: push_products is off (sync.jobs.push_products); the ledger holds"));
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text,
              HasSubstr(R"("catalog":{"push_products":false,"products":null,)"));
}

TEST_P(CatalogOperatorTest, StatusSaysNothingOfTheCatalogWhenPushProductsIsOffAndNothingIsThere) {
  start_sandbox();  // push_products off
  insert_orders("Q", 1);
  ASSERT_EQ(once().exit_status, 0);
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, Not(HasSubstr("Catalog")));
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, HasSubstr(R"("catalog":null)"));
}

TEST_P(CatalogOperatorTest, RetryBySkuOrReferenceTakesARejectedProductAgain) {
  start({}, "2025-07");
  execute(product_sql("F", 1, "12.50"));  // a fraction before 2026-07: rejected by the local rules
  insert_rejected_products();
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);
  EXPECT_EQ(result_column("state", "F-0001", "fulfillsync_product_sync"), "rejected");

  // From 2026-07 the row is valid, but unchanged: nothing takes it again by itself.
  version_ = "2026-07";
  write_catalog_config();
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);
  EXPECT_EQ(result_column("state", "F-0001", "fulfillsync_product_sync"), "rejected");

  const auto by_sku = daemon({"retry", "--sku", "F-0001-2"});
  EXPECT_EQ(by_sku.exit_status, 0) << by_sku.stderr_text;
  EXPECT_THAT(by_sku.stdout_text, HasSubstr("product_create F-0001 (SKU F-0001-2) requeued"));
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);  // BAD-2 and TAX-1 still are
  EXPECT_EQ(result_column("state", "F-0001", "fulfillsync_product_sync"), "created");
  EXPECT_EQ(provider_products().at("F-0001").variants[0].customs_value, "12.5");

  // Unknown, or not rejected: one line, and 65.
  const auto expect_refused = [&](std::vector<std::string> command, std::string_view says) {
    const auto refused = daemon(std::move(command));
    EXPECT_EQ(refused.exit_status, daemon::exit_code::data_error) << refused.stderr_text;
    EXPECT_THAT(refused.stderr_text, HasSubstr(says));
    EXPECT_EQ(std::count(refused.stderr_text.begin(), refused.stderr_text.end(), '\n'), 1) << refused.stderr_text;
  };
  expect_refused({"retry", "--sku", "NO-SUCH-SKU"}, "no product has SKU 'NO-SUCH-SKU'");
  expect_refused({"retry", "--product", "NO-SUCH"}, "no product 'NO-SUCH' is known");
  expect_refused({"retry", "--product", "F-0001"}, "product 'F-0001' has nothing rejected to retry: its create is "
                                                   "created");

  // Beside a running daemon, whose passes the catalog's change log skips while nothing changes: a
  // product the provider rejected is sent again at its next run, by its reference.
  ASSERT_EQ(creates_holding("999999"), 1);
  auto running = run_in_background();
  std::this_thread::sleep_for(500ms);  // passes that found nothing new
  const auto by_reference = daemon({"retry", "--product", "TAX-1"});
  EXPECT_EQ(by_reference.exit_status, 0) << by_reference.stderr_text;
  bool sent_again = false;
  for (int i = 0; i < 200 && !sent_again; ++i) {
    sent_again = creates_holding("999999") == 2;
    if (!sent_again) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(sent_again) << running->stderr_text();
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(20s), 0);
  EXPECT_EQ(result_column("state", "TAX-1", "fulfillsync_product_sync"), "rejected");
  EXPECT_EQ(creates_holding("BAD-2"), 0);  // a product the rules still reject is never sent
}

TEST_P(CatalogOperatorTest, DryRunShowsWhatPushProductsWouldSendAndSendsNothing) {
  start();
  insert_products("D", 3);
  ASSERT_EQ(once().exit_status, 0);
  const auto before = provider_products();
  execute("UPDATE fulfillsync_products SET name = 'Renamed' WHERE reference_id = 'D-0001'");
  execute("UPDATE fulfillsync_variants SET gtin = '9999999999999' WHERE sku = 'D-0002-2'");
  execute(product_sql("D", 4));
  execute("INSERT INTO fulfillsync_products (reference_id, name) VALUES ('BAD-1', 'No variants')");
  const std::size_t sent = catalog_writes().size();
  const std::string store_before = read_file(dir / "checkpoint.db");

  const auto dry = daemon({"--dry-run", "once"});
  EXPECT_EQ(dry.exit_status, daemon::exit_code::data_error) << dry.stderr_text;  // BAD-1 would be rejected
  EXPECT_THAT(dry.stdout_text,
              HasSubstr("; 1 products would be created, 2 updated, 1 rejected, 0 looked up first. Nothing was sent"));
  EXPECT_THAT(dry.stderr_text,
              HasSubstr(R"(product D-0004 would be created with its 5 variants: POST /product {"name":"Product 4",)"));
  EXPECT_THAT(dry.stderr_text, HasSubstr(fmt::format("product D-0001 would be updated with only what changed: PATCH "
                                                     R"(/product/{} {{"name":"Renamed"}})",
                                                     before.at("D-0001").id)));
  EXPECT_THAT(dry.stderr_text, HasSubstr(fmt::format("product D-0002 would be updated with only what changed: PATCH "
                                                     "/product/{}/variants SKU 'D-0002-2' "
                                                     R"({{"gtin":"9999999999999"}})",
                                                     before.at("D-0002").id)));
  EXPECT_THAT(dry.stderr_text, HasSubstr("product BAD-1 would be rejected: fulfillsync_products: variants must be at "
                                         "least one row"));
  EXPECT_THAT(dry.stderr_text, Not(HasSubstr("product D-0003")));  // unchanged
  EXPECT_EQ(catalog_writes().size(), sent);
  EXPECT_EQ(read_file(dir / "checkpoint.db"), store_before);

  // The real run sends just that.
  ASSERT_EQ(once().exit_status, daemon::exit_code::data_error);
  EXPECT_EQ(catalog_writes().size(), sent + 3);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, CatalogOperatorTest, ::testing::Values(Driver::sqlite), driver_name);


}  // namespace
}  // namespace fulfillsync::testing
