#pragma once
// What the sync tests share: fulfillsyncd against fulfillsync-sandbox, with the test playing the
// merchant application on its own connection to a real SQLite file. What reached the provider is
// read back through the API and the sandbox's admin path.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <simdjson.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/testing/http.hpp"
#include "fulfillsync/testing/process.hpp"
#include "fulfillsync/testing/sandbox.hpp"
#include "fulfillsync/testing/sanitized.hpp"

namespace fulfillsync::testing {

using namespace std::chrono_literals;

constexpr int kKilled = 128 + SIGKILL;
constexpr int kRowsStayRejected = 65;

// The sandbox's demo catalogue: products by reference and name, inventory ids, fulfillment centers.
constexpr std::array<std::pair<const char*, const char*>, 3> kProducts = {{
    {"TSHIRT-L", "Organic Cotton T-Shirt L"}, {"BATT-AA4", "AA Battery 4-pack"}, {"TOTE-CANVAS", "Canvas Tote Bag"}}};

// A text value as an SQL literal (the tests' own values; both databases quote alike).
inline std::string sql_text(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

// Order `n` as the merchant application writes it, as SQL that SQLite and PostgreSQL both run: one or
// two lines of the demo catalogue, updated_at now (the table's default) or `updated_at`, as a
// transaction that took its timestamp early and committed late would leave it.
inline std::string order_sql(const std::string& reference, int n, std::string_view updated_at = {}) {
  std::string sql = fmt::format(
      "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, "
      "recipient_email, address1, city, state, zip_code, country{}) VALUES ({}, '#{}', '{}', 'DTC', 'Customer {}', "
      "'customer{}@example.com', '{} Main Street', 'Austin', 'TX', '{:05}', 'US'{});",
      updated_at.empty() ? "" : ", updated_at", sql_text(reference), n, n % 3 == 0 ? "Express" : "Standard", n, n, n,
      10000 + n, updated_at.empty() ? "" : ", " + sql_text(updated_at));
  for (int line = 1; line <= 1 + n % 2; ++line) {
    const auto& [product, name] = kProducts[static_cast<std::size_t>(n + line) % kProducts.size()];
    sql += fmt::format("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, "
                       "product_name, quantity) VALUES ({}, {}, '{}', '{}', {});",
                       sql_text(reference), line, product, name, 1 + (n + line) % 3);
  }
  if (!updated_at.empty()) {
    // The line triggers touched the order; put its old timestamp back, as a late commit would carry.
    sql += fmt::format("UPDATE fulfillsync_orders SET updated_at = {} WHERE reference_id = {};", sql_text(updated_at),
                       sql_text(reference));
  }
  return sql;
}

// Return `n`: one line of inventory 7002 to restock at center 8.
inline std::string return_sql(const std::string& reference, int n) {
  return fmt::format("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, fulfillment_center_name, "
                     "tracking_number) VALUES ({0}, 8, 'Cicero (IL)', '1Z{1:010}');"
                     "INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, inventory_id, quantity, "
                     "requested_action) VALUES ({0}, 1, 7002, {2}, 'Restock');",
                     sql_text(reference), n, 1 + n % 2);
}

inline void insert_order(SQLite::Database& db, const std::string& reference, int n,
                         std::string_view updated_at = {}) {
  db.exec(order_sql(reference, n, updated_at));
}

inline void insert_return(SQLite::Database& db, const std::string& reference, int n) {
  db.exec(return_sql(reference, n));
}

// The merchant's database as the shop's application reaches it, whichever the driver: SQL run, and
// rows read back as text (NULL as ""). SQLite's here; PostgreSQL's in merchant_driver.hpp.
class ShopConnection {
 public:
  virtual ~ShopConnection() = default;
  // Runs SQL, several statements allowed. Throws std::runtime_error on a failure.
  virtual void exec(const std::string& sql) = 0;
  virtual std::vector<std::vector<std::string>> query(const std::string& sql) = 0;
};

class SqliteShopConnection : public ShopConnection {
 public:
  explicit SqliteShopConnection(SQLite::Database& db) : db_(db) {}
  void exec(const std::string& sql) override { db_.exec(sql); }
  std::vector<std::vector<std::string>> query(const std::string& sql) override {
    std::vector<std::vector<std::string>> rows;
    SQLite::Statement statement(db_, sql);
    while (statement.executeStep()) {
      auto& row = rows.emplace_back();
      for (int i = 0; i < statement.getColumnCount(); ++i) row.push_back(statement.getColumn(i).getString());
    }
    return rows;
  }

 private:
  SQLite::Database& db_;
};

// A shipment as the sandbox's admin path shows it.
struct SandboxShipment {
  std::string order_reference{};
  std::string status{};
  std::string tracking_number{};
  bool uploaded = false;
  std::int64_t marks = 0;
};

// A shipment as the merchant's result tables hold it.
struct MerchantShipment {
  std::string order_reference{};
  std::string status{};
  std::string last_update_at{};
  std::string tracking_number{};  // "" without a tracking row
  bool marked = false;          // upload_marked_at set
  int items = 0;
};

class SyncFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir / "api-token", std::string(Sandbox::kToken) + "\n");
    chmod((dir / "api-token").c_str(), 0600);
    create_merchant_database();
  }

  // A new merchant database with the contract's source tables and their change log (as
  // `fulfillsyncd upgrade-source` adds it), and no checkpoint store. A test on another driver makes
  // its own database too (merchant_driver.hpp).
  virtual void create_merchant_database() {
    shop_app.reset();
    merchant.reset();
    for (const char* file : {"merchant.db", "merchant.db-wal", "merchant.db-shm", "checkpoint.db", "checkpoint.db-wal",
                             "checkpoint.db-shm"}) {
      std::filesystem::remove(dir / file);
    }
    merchant = std::make_unique<SQLite::Database>((dir / "merchant.db").string(),
                                                  SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    merchant->setBusyTimeout(5000);
    merchant->exec("PRAGMA journal_mode = WAL");
    merchant->exec(read_file(source_path("schema/merchant/source_tables.sql")));
    merchant->exec(read_file(source_path("schema/merchant/change_log/0001_change_log.sql")));
    shop_app = std::make_unique<SqliteShopConnection>(*merchant);
  }

  // The source tables as a shop that has not run `fulfillsyncd upgrade-source` has them: the daemon
  // reads them by updated_at.
  void drop_change_log() {
    std::vector<std::string> triggers;
    SQLite::Statement query(*merchant, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE "
                                       "'fulfillsync\\_%\\_log\\_%' ESCAPE '\\'");
    while (query.executeStep()) triggers.push_back(query.getColumn(0).getString());
    for (const auto& name : triggers) merchant->exec("DROP TRIGGER " + name);
    merchant->exec("DROP TABLE fulfillsync_changes");
  }

  void start_sandbox(std::vector<std::string> args = {}) {
    sandbox = std::make_unique<Sandbox>(std::move(args));
    write_config();
  }

  // `jobs`: more lines under sync.jobs, e.g. "    pull_lots: {interval: 1s}\n"; `merchant`: under merchant.
  void write_config(std::string_view extra = "", std::string_view jobs = "", std::string_view merchant_keys = "") {
    write_file(config_path, "checkpoint:\n"
                            "  path: " + (dir / "checkpoint.db").string() + "\n"
                            "merchant:\n" + merchant_driver_yaml() + std::string(merchant_keys) +
                            "api:\n"
                            "  base_url: " + sandbox->base_url() + "\n"
                            "  allow_plain_http: true\n"
                            "  token_file: " + (dir / "api-token").string() + "\n"
                            "  requests_per_minute: 100000\n"
                            "  request_timeout: 5s\n"
                            "  retry: {base: 10ms, cap: 200ms, attempts: 3}\n"
                            "sync:\n"
                            "  orders_since: 2020-01-01T00:00:00Z\n"
                            "  progress_interval: 1s\n"
                            "  jobs:\n"
                            "    push_orders: {interval: 50ms, batch_size: 100, concurrency: 4}\n"
                            "    push_cancels: {interval: 50ms}\n"
                            "    push_returns: {interval: 50ms}\n" + std::string(jobs) +
                            "metrics:\n"
                            "  enabled: false\n" + std::string(extra));
  }

  // The merchant section's driver and its keys (indented by two spaces).
  virtual std::string merchant_driver_yaml() const {
    return "  sqlite:\n    path: " + (dir / "merchant.db").string() + "\n";
  }

  // The sandbox, with a token the test can revoke (a sandbox reset forgets tokens added through the
  // admin path), and a configuration with the metrics endpoint on a free loopback port.
  void start_sandbox_with_revocable_token_and_metrics() {
    start_sandbox();
    ASSERT_EQ(sandbox->admin("POST", "/_sandbox/tokens", R"({"token": "revocable-token"})").status, 201);
    write_file(dir / "api-token", "revocable-token\n");
    write_config("  listen: 127.0.0.1:0\n");
    std::string config = read_file(config_path);
    const std::string disabled = "  enabled: false\n";
    config.replace(config.find(disabled), disabled.size(), "  enabled: true\n");
    write_file(config_path, config);
  }

  // `fulfillsyncd run` in the background, with FULFILLSYNC_FAILPOINTS set to `failpoints` when given.
  std::unique_ptr<ChildProcess> run_in_background(const std::string& failpoints = "") {
    ChildProcess::Options options{
        .argv = {binary_path("fulfillsyncd").string(), "--config", config_path.string(), "run"},
        .unset_env = {"NOTIFY_SOCKET"}};
    if (failpoints.empty()) {
      options.unset_env.push_back("FULFILLSYNC_FAILPOINTS");
    } else {
      options.set_env.push_back("FULFILLSYNC_FAILPOINTS=" + failpoints);
    }
    return std::make_unique<ChildProcess>(std::move(options));
  }

  // The same, waiting until its metrics listen; `metrics_port` is where (0: they never did).
  std::unique_ptr<ChildProcess> start_daemon(std::uint16_t& metrics_port) {
    auto running = run_in_background();
    const auto line = running->wait_for_stderr("metrics listening on 127.0.0.1:", 20s);
    metrics_port = line ? static_cast<std::uint16_t>(std::stoi(line->substr(line->rfind(':') + 1))) : 0;
    return running;
  }

  RunResult daemon(std::vector<std::string> command, std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {binary_path("fulfillsyncd").string(), "--config", config_path.string()};
    argv.insert(argv.end(), command.begin(), command.end());
    return run(ChildProcess::Options{.argv = argv, .set_env = std::move(env), .unset_env = {"FULFILLSYNC_FAILPOINTS"}},
               180s * kSanitizedSlowdown);
  }
  RunResult once(std::vector<std::string> env = {}) { return daemon({"once"}, std::move(env)); }

  // --- the merchant's side -------------------------------------------------------------------

  void insert_order(const std::string& reference, int n, std::string_view updated_at = {}) {
    shop_app->exec(order_sql(reference, n, updated_at));
  }

  // In one transaction.
  void insert_orders(const std::string& prefix, int count) {
    std::string sql = "BEGIN;";
    for (int i = 1; i <= count; ++i) sql += order_sql(fmt::format("{}-{:04}", prefix, i), i);
    shop_app->exec(sql + "COMMIT;");
  }

  void insert_returns(const std::string& prefix, int count) {
    std::string sql = "BEGIN;";
    for (int i = 1; i <= count; ++i) sql += return_sql(fmt::format("{}-{:03}", prefix, i), i);
    shop_app->exec(sql + "COMMIT;");
  }

  void request_cancel(const std::string& reference) {
    ASSERT_EQ(shop_app->query(fmt::format("UPDATE fulfillsync_orders SET cancel_requested = 1 WHERE reference_id = {} "
                                      "RETURNING reference_id",
                                      sql_text(reference)))
                  .size(),
              1u);
  }

  void execute(const std::string& sql) { shop_app->exec(sql); }

  // reference id -> state, from the result table.
  virtual std::map<std::string, std::string> result_states(std::string_view table = "fulfillsync_order_sync") {
    std::map<std::string, std::string> states;
    for (const auto& row : shop_app->query(fmt::format("SELECT reference_id, state FROM {}", table))) {
      states[row[0]] = row[1];
    }
    return states;
  }

  // Waits up to `limit` for exactly `count` orders in the result table, every one created.
  bool wait_for_results_created(std::size_t count, std::chrono::milliseconds limit) {
    for (const auto deadline = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(100ms)) {
      const auto states = result_states();
      if (states.size() == count &&
          std::all_of(states.begin(), states.end(), [](const auto& state) { return state.second == "created"; })) {
        return true;
      }
    }
    return false;
  }

  std::string result_column(std::string_view column, const std::string& reference,
                            std::string_view table = "fulfillsync_order_sync") {
    const auto rows = shop_app->query(fmt::format("SELECT coalesce(CAST({} AS TEXT), '') FROM {} WHERE reference_id = {}",
                                              column, table, sql_text(reference)));
    return rows.empty() ? "(no row)" : rows[0][0];
  }

  // The same before the daemon has created its result tables: "(no row)".
  std::string result_column_if_any(std::string_view column, const std::string& reference) {
    try {
      return result_column(column, reference);
    } catch (const std::runtime_error&) {
      return "(no row)";
    }
  }

  // --- the provider's side -------------------------------------------------------------------

  HttpResponse api_get(const std::string& target) {
    return http_request("127.0.0.1", sandbox->port(), "GET", "/2026-07" + target,
                        {{"Authorization", std::string("Bearer ") + Sandbox::kToken}});
  }

  // Every order the provider has, by reference id.
  std::map<std::string, api::Order> provider_orders() {
    std::map<std::string, api::Order> orders;
    for (int page = 1;; ++page) {
      const auto response = api_get(fmt::format("/order?Limit=250&Page={}", page));
      EXPECT_EQ(response.status, 200) << response.body;
      auto decoded = api::decode<api::OrderPage>(response.body, api::ApiVersion::v2026_07);
      EXPECT_TRUE(decoded.ok()) << decoded.error().to_string();
      if (!decoded || decoded->empty()) break;
      for (auto& order : *decoded) {
        const std::string reference = order.reference_id.value_or("");
        EXPECT_FALSE(orders.contains(reference)) << reference << " exists twice at the provider";
        orders.emplace(reference, std::move(order));
      }
      if (!response.headers.contains("next-page")) break;
    }
    return orders;
  }

  std::map<std::string, api::ReturnOrder> provider_returns() {
    std::map<std::string, api::ReturnOrder> returns;
    std::string target = "/return?Limit=250";
    for (;;) {
      const auto response = api_get(target);
      EXPECT_EQ(response.status, 200) << response.body;
      auto decoded = api::decode<api::ReturnList>(response.body, api::ApiVersion::v2026_07);
      EXPECT_TRUE(decoded.ok()) << decoded.error().to_string();
      if (!decoded) break;
      for (auto& item : decoded->items) {
        const std::string reference = item.reference_id.value_or("");
        EXPECT_FALSE(returns.contains(reference)) << reference << " exists twice at the provider";
        returns.emplace(reference, std::move(item));
      }
      if (!decoded->next || decoded->next->empty()) break;
      const std::string& next = *decoded->next;
      const std::size_t question = next.find('?');
      target = "/return" + (question == std::string::npos ? std::string() : next.substr(question));
    }
    return returns;
  }

  // How many orders and returns the sandbox created in all (duplicates would count twice).
  std::pair<long, long> creates() { return {sandbox_count("orders"), sandbox_count("returns")}; }

  // A count of GET /_sandbox/stats by its name (`requests_total`, `orders`, `drop_after`, ...); 0
  // while it is absent (a kind of create or fault not seen yet).
  long sandbox_count(std::string_view name) {
    const std::string body = sandbox->admin("GET", "/_sandbox/stats").body;
    const std::string key = fmt::format("\"{}\":", name);
    const std::size_t at = body.find(key);
    return at == std::string::npos ? 0 : std::stol(body.substr(at + key.size()));
  }

  // Every order of `prefix`-0001.. exists once at the provider with the source row's fields, and
  // the result table holds its id.
  void expect_orders_delivered(const std::string& prefix, int count, const std::set<std::string>& cancelled = {}) {
    const auto orders = provider_orders();
    const auto states = result_states();
    int seen = 0;
    for (int i = 1; i <= count; ++i) {
      const std::string reference = fmt::format("{}-{:04}", prefix, i);
      const auto it = orders.find(reference);
      if (it == orders.end()) {
        ADD_FAILURE() << reference << " is missing at the provider";
        continue;
      }
      ++seen;
      const api::Order& order = it->second;
      const bool cancel = cancelled.contains(reference);
      EXPECT_EQ(order.status, cancel ? "Cancelled" : "Processing") << reference;
      EXPECT_EQ(order.order_number, fmt::format("#{}", i));
      EXPECT_EQ(order.shipping_method, i % 3 == 0 ? "Express" : "Standard");
      ASSERT_TRUE(order.recipient && order.recipient->address) << reference;
      EXPECT_EQ(order.recipient->name, fmt::format("Customer {}", i));
      EXPECT_EQ(order.recipient->email, fmt::format("customer{}@example.com", i));
      EXPECT_EQ(order.recipient->address->address1, fmt::format("{} Main Street", i));
      EXPECT_EQ(order.recipient->address->zip_code, fmt::format("{:05}", 10000 + i));
      EXPECT_EQ(order.recipient->address->country, "US");
      ASSERT_EQ(order.products.size(), static_cast<std::size_t>(1 + i % 2)) << reference;
      for (std::size_t line = 0; line < order.products.size(); ++line) {
        const auto& [product, name] = kProducts[(static_cast<std::size_t>(i) + line + 1) % kProducts.size()];
        EXPECT_EQ(order.products[line].reference_id, product) << reference;
        EXPECT_EQ(order.products[line].quantity, 1 + (i + static_cast<int>(line) + 1) % 3) << reference;
      }
      EXPECT_EQ(states.count(reference) ? states.at(reference) : "(none)", cancel ? "cancelled" : "created")
          << reference;
      EXPECT_EQ(result_column("remote_id", reference), std::to_string(order.id)) << reference;
      EXPECT_NE(result_column("remote_created_at", reference), "") << reference;
    }
    EXPECT_EQ(seen, count);
  }

  // --- both sides ----------------------------------------------------------------------------

  // shipment id -> what the sandbox knows of it.
  std::map<std::int64_t, SandboxShipment> sandbox_shipments() {
    const auto response = sandbox->admin("GET", "/_sandbox/orders");
    EXPECT_EQ(response.status, 200) << response.body;
    simdjson::ondemand::parser parser;
    simdjson::padded_string body(response.body);
    std::map<std::int64_t, SandboxShipment> shipments;
    auto document = parser.iterate(body);
    auto orders = document.get_array();
    // The admin body is either an array or an object holding `orders`.
    simdjson::ondemand::array list;
    if (orders.error()) {
      list = document.find_field("orders").get_array().value();
    } else {
      list = orders.value();
    }
    for (auto order : list) {
      std::string reference;
      std::string_view text;
      if (!order.find_field_unordered("reference_id").get_string().get(text)) reference = std::string(text);
      for (auto shipment : order.find_field_unordered("shipments").get_array()) {
        SandboxShipment s{.order_reference = reference};
        const std::int64_t id = shipment.find_field_unordered("id").get_int64().value();
        if (!shipment.find_field_unordered("status").get_string().get(text)) s.status = std::string(text);
        if (!shipment.find_field_unordered("tracking_number").get_string().get(text)) {
          s.tracking_number = std::string(text);
        }
        s.uploaded = shipment.find_field_unordered("is_tracking_uploaded").get_bool().value();
        s.marks = shipment.find_field_unordered("tracking_upload_marks").get_int64().value();
        shipments.emplace(id, std::move(s));
      }
    }
    return shipments;
  }

  // reference id -> the cancel requests the sandbox processed for that order (answered 200).
  std::map<std::string, std::int64_t> cancels_processed() {
    const auto response = sandbox->admin("GET", "/_sandbox/orders");
    EXPECT_EQ(response.status, 200) << response.body;
    simdjson::ondemand::parser parser;
    simdjson::padded_string body(response.body);
    std::map<std::string, std::int64_t> counts;
    auto document = parser.iterate(body);
    for (auto order : document.get_array()) {
      std::string_view reference;
      if (order.find_field_unordered("reference_id").get_string().get(reference)) continue;
      counts[std::string(reference)] = order.find_field_unordered("cancels_processed").get_int64().value();
    }
    return counts;
  }

  // How many ledger entries are in `state`, read from the checkpoint store as an operator would.
  long ledger_count(std::string_view state) {
    SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY);
    SQLite::Statement query(store, "SELECT count(*) FROM outbound_ledger WHERE state = ?");
    query.bind(1, std::string(state));
    query.executeStep();
    return query.getColumn(0).getInt64();
  }

  // Waits up to `limit` until the sandbox's count `name` (sandbox_count) reaches `at_least`.
  bool wait_for_sandbox_count(std::string_view name, long at_least, std::chrono::milliseconds limit) {
    for (const auto deadline = std::chrono::steady_clock::now() + limit; sandbox_count(name) < at_least;) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  // Waits up to `limit` for the result table to show `state` for `reference`.
  bool wait_for_result(const std::string& reference, std::string_view state, std::chrono::milliseconds limit,
                       std::string_view table = "fulfillsync_order_sync") {
    for (const auto deadline = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < deadline;) {
      try {
        if (result_column("state", reference, table) == state) return true;
      } catch (const std::runtime_error&) {
        // The result tables do not exist yet.
      }
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  std::map<std::int64_t, MerchantShipment> merchant_shipments() {
    std::map<std::int64_t, MerchantShipment> shipments;
    for (const auto& row : shop_app->query(
             "SELECT s.shipment_id, coalesce(s.order_reference_id, ''), s.status, s.last_update_at, "
             "coalesce(t.tracking_number, ''), CASE WHEN t.upload_marked_at IS NULL THEN 0 ELSE 1 END, "
             "(SELECT count(*) FROM fulfillsync_shipment_items i WHERE i.shipment_id = s.shipment_id) "
             "FROM fulfillsync_shipments s LEFT JOIN fulfillsync_tracking t USING (shipment_id)")) {
      shipments.emplace(std::stoll(row[0]), MerchantShipment{.order_reference = row[1],
                                                             .status = row[2],
                                                             .last_update_at = row[3],
                                                             .tracking_number = row[4],
                                                             .marked = row[5] == "1",
                                                             .items = std::stoi(row[6])});
    }
    return shipments;
  }

  // The first column of the first row, a count.
  long count(std::string_view sql) { return std::stol(shop_app->query(std::string(sql)).at(0).at(0)); }

  // Nothing is marked at the provider that the merchant database does not hold.
  void expect_no_mark_without_merchant_tracking() {
    const auto held = merchant_shipments();
    for (const auto& [id, shipment] : sandbox_shipments()) {
      if (shipment.marks == 0) continue;
      const auto it = held.find(id);
      EXPECT_TRUE(it != held.end() && !it->second.tracking_number.empty())
          << "shipment " << id << " was marked before the merchant database held its tracking";
    }
  }

  // Every shipment of the provider is in the merchant database as the provider has it, with its
  // items; every one with tracking has it there and was marked exactly once.
  // `max_marks`: how often a shipment may have been marked (1 unless a test restores older stores).
  void expect_shipments_synced(std::size_t expected, int max_marks = 1) {
    const auto provider = sandbox_shipments();
    const auto held = merchant_shipments();
    EXPECT_EQ(provider.size(), expected);
    EXPECT_EQ(held.size(), expected);
    const auto orders = provider_orders();
    for (const auto& [id, shipment] : provider) {
      SCOPED_TRACE(fmt::format("shipment {} of {}", id, shipment.order_reference));
      const auto it = held.find(id);
      if (it == held.end()) {
        ADD_FAILURE() << "shipment " << id << " of " << shipment.order_reference << " is not in the merchant database";
        continue;
      }
      EXPECT_EQ(it->second.order_reference, shipment.order_reference) << id;
      EXPECT_EQ(it->second.status, shipment.status) << id;
      EXPECT_EQ(it->second.tracking_number, shipment.tracking_number) << id;
      EXPECT_GT(it->second.items, 0) << id;
      if (!shipment.tracking_number.empty()) {
        EXPECT_GE(shipment.marks, 1) << "shipment " << id << " not marked";
        EXPECT_LE(shipment.marks, max_marks) << "shipment " << id << " marked " << shipment.marks << " times";
        EXPECT_TRUE(shipment.uploaded) << id;
        EXPECT_TRUE(it->second.marked) << id;
      }
      const auto order = orders.find(shipment.order_reference);
      if (order != orders.end()) {
        EXPECT_EQ(result_column("remote_status", shipment.order_reference), order->second.status) << id;
      }
    }
  }

  TempDir dir;
  std::filesystem::path config_path = dir / "fulfillsync.yaml";
  std::unique_ptr<SQLite::Database> merchant;  // the SQLite merchant database, whatever the driver
  std::unique_ptr<ShopConnection> shop_app;      // the shop's application on the configured driver
  std::unique_ptr<Sandbox> sandbox;
};

}  // namespace fulfillsync::testing
