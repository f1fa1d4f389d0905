#pragma once
// An end-to-end test value-parameterized over the merchant database driver: the same test on a SQLite
// file and on a PostgreSQL 15 server (testing::PostgresServer). The server is started once for the
// test suite, at its first PostgreSQL test, and each test has a database of its own on it with the
// reference source tables and their change order in schema `shop`, as `fulfillsyncd upgrade-source`
// leaves them; the daemon's result tables go to schema `fulfillsync`. The test plays the shop's
// application through `shop_app` (sync_fixture.hpp) with the same SQL on either database.
//
//   class MyTest : public DriverFixture {};
//   TEST_P(MyTest, ...) { ... }
//   INSTANTIATE_TEST_SUITE_P(Drivers, MyTest, kBothDrivers, driver_name);
#include <libpq-fe.h>

#include <atomic>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fulfillsync/testing/postgres.hpp"
#include "sync_fixture.hpp"

namespace fulfillsync::testing {

enum class Driver { sqlite, postgresql };

inline const auto kBothDrivers = ::testing::Values(Driver::sqlite, Driver::postgresql);

inline std::string driver_name(const ::testing::TestParamInfo<Driver>& info) {
  return info.param == Driver::sqlite ? "sqlite" : "postgresql";
}

// Its name in GoogleTest's messages and ctest's test names ("# GetParam() = postgresql").
inline void PrintTo(Driver driver, std::ostream* out) { *out << (driver == Driver::sqlite ? "sqlite" : "postgresql"); }

// The shop's application on a PostgreSQL database: one libpq connection, source schema first.
class PostgresShopConnection : public ShopConnection {
 public:
  explicit PostgresShopConnection(const std::string& conninfo)
      : connection_(PQconnectdb(conninfo.c_str()), &PQfinish) {
    if (PQstatus(connection_.get()) != CONNECTION_OK) {
      throw std::runtime_error(std::string("connecting: ") + PQerrorMessage(connection_.get()));
    }
  }
  void exec(const std::string& sql) override { run(sql); }
  std::vector<std::vector<std::string>> query(const std::string& sql) override {
    const auto result = run(sql);
    std::vector<std::vector<std::string>> rows;
    for (int r = 0; r < PQntuples(result.get()); ++r) {
      auto& row = rows.emplace_back();
      for (int c = 0; c < PQnfields(result.get()); ++c) row.emplace_back(PQgetvalue(result.get(), r, c));
    }
    return rows;
  }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> run(const std::string& sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(connection_.get(), sql.c_str()), &PQclear);
    const auto status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      throw std::runtime_error(sql.substr(0, 200) + ": " + PQresultErrorMessage(result.get()));
    }
    return result;
  }

  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_;
};

class DriverFixture : public SyncFixture, public ::testing::WithParamInterface<Driver> {
 protected:
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (GetParam() == Driver::postgresql) {
      if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
      if (!server_) server_ = std::make_unique<PostgresServer>();
    }
    SyncFixture::SetUp();
  }

  bool on_postgresql() const { return GetParam() == Driver::postgresql; }
  PostgresServer& postgres() { return *server_; }

  // A libpq connection string for this test's database.
  std::string conninfo() const { return server_->connection_string() + " dbname=" + database_; }

  // Also a new PostgreSQL database, with the reference tables and their change order.
  void create_merchant_database() override {
    SyncFixture::create_merchant_database();
    if (!on_postgresql()) return;
    static std::atomic<int> next{0};
    database_ = fmt::format("shop_{}", next++);
    PostgresShopConnection(server_->connection_string()).exec(fmt::format("CREATE DATABASE {}", database_));
    connect_shop();
    shop_app->exec(fmt::format("CREATE SCHEMA shop; {} {}",
                           read_file(source_path("schema/merchant/postgresql/source_tables.sql")),
                           read_file(source_path("schema/merchant/postgresql/change_order/0001_change_xid.sql"))));
  }

  // The shop's connection again (after the server restarted): the source tables first, then the
  // result tables, unqualified.
  void connect_shop() {
    shop_app = std::make_unique<PostgresShopConnection>(conninfo() + " options='-c search_path=shop,fulfillsync'");
  }

  std::string merchant_driver_yaml() const override {
    if (!on_postgresql()) return SyncFixture::merchant_driver_yaml();
    return fmt::format("  driver: postgresql\n  postgresql:\n    connection: \"{}\"\n    source_schema: shop\n"
                       "    result_schema: fulfillsync\n",
                       conninfo());
  }

 private:
  static inline std::unique_ptr<PostgresServer> server_;
  std::string database_;
};

}  // namespace fulfillsync::testing
