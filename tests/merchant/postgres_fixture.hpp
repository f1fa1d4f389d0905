#pragma once
// A PostgreSQL merchant database for one test: a database of its own on a server the test suite
// starts (testing::PostgresServer), the reference source tables in schema `shop` written by a
// connection of their own as the shop's application would, the result tables in `fulfillsync`, and
// the connector's faces under test on another connection.
#include <libpq-fe.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fulfillsync/testing/postgres.hpp"
#include "postgres_source_tables.hpp"
#include "postgres_sync_results.hpp"

namespace fulfillsync::merchant {

using testing::PostgresServer;

// A libpq connection of its own: the shop's application, or an administrator.
class Client {
 public:
  explicit Client(const std::string& conninfo) : connection_(PQconnectdb(conninfo.c_str()), &PQfinish) {
    if (PQstatus(connection_.get()) != CONNECTION_OK) {
      throw std::runtime_error(std::string("connecting: ") + PQerrorMessage(connection_.get()));
    }
  }
  // Runs SQL (several statements allowed); returns the first column of the first row, if any.
  std::string exec(const std::string& sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(connection_.get(), sql.c_str()), &PQclear);
    const auto status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      throw std::runtime_error(sql + ": " + PQresultErrorMessage(result.get()));
    }
    return PQntuples(result.get()) > 0 ? PQgetvalue(result.get(), 0, 0) : "";
  }

 private:
  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_;
};

class PostgresMerchantTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (PostgresServer::unavailable()) return;
    server_ = new PostgresServer();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
    // A database of its own for each test.
    static std::atomic<int> next{0};
    database_ = fmt::format("shop_{}", next++);
    Client(server_->connection_string()).exec(fmt::format("CREATE DATABASE {}", database_));
    app = std::make_unique<Client>(conninfo());
    app->exec(fmt::format("CREATE SCHEMA shop; SET search_path = shop; {}",
                          testing::read_file(testing::source_path("schema/merchant/postgresql/source_tables.sql"))));
    connection = std::make_unique<PostgresConnection>(config());
    prepare_postgres_result_tables(*connection, true);
    source = std::make_unique<PostgresSourceTables>(*connection);
    results = std::make_unique<PostgresSyncResults>(*connection);
  }

  std::string conninfo() const {
    return server_->connection_string() + " dbname=" + database_ + " options='-c search_path=shop'";
  }

  config::MerchantConfig config(config::Duration statement_timeout = std::chrono::seconds(30)) const {
    config::MerchantConfig merchant;
    merchant.driver = config::MerchantDriver::postgresql;
    merchant.postgresql.connection = server_->connection_string() + " dbname=" + database_;
    merchant.postgresql.source_schema = "shop";
    merchant.postgresql.result_schema = "fulfillsync";
    merchant.postgresql.statement_timeout = statement_timeout;
    return merchant;
  }

  // An order with `lines` lines, written with this exact updated_at.
  static std::string order_sql(const std::string& reference_id, const std::string& updated_at, int lines = 1) {
    std::string sql = fmt::format(
        "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, location_id, recipient_name, "
        "country, updated_at) VALUES ('{0}', 'N-{0}', 'Standard', 7, 'Ada', 'US', '{1}');",
        reference_id, updated_at);
    for (int i = 1; i <= lines; ++i) {
      sql += fmt::format("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_id, quantity, "
                         "product_name) VALUES ('{}', {}, {}, {}, 'widget');",
                         reference_id, i, 100 + i, i);
    }
    // The lines' trigger touched updated_at: set it back to the time the test chose.
    return sql + fmt::format("UPDATE fulfillsync_orders SET updated_at = '{}' WHERE reference_id = '{}';", updated_at,
                             reference_id);
  }
  void add_order(const std::string& reference_id, const std::string& updated_at, int lines = 1) {
    app->exec(order_sql(reference_id, updated_at, lines));
  }

  static std::vector<std::string> keys_of(const std::vector<OrderRow>& rows) {
    std::vector<std::string> keys;
    for (const auto& row : rows) keys.push_back(row.reference_id);
    return keys;
  }

  static inline PostgresServer* server_ = nullptr;
  std::string database_;
  std::unique_ptr<Client> app;  // the merchant's application
  std::unique_ptr<PostgresConnection> connection;
  std::unique_ptr<PostgresSourceTables> source;
  std::unique_ptr<PostgresSyncResults> results;
};

}  // namespace fulfillsync::merchant
