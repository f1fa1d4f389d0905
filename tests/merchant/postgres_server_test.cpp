// The test PostgreSQL server (tests/support: testing::PostgresServer) the PostgreSQL connector's
// tests run against: it starts, serves libpq over its socket and over loopback TCP, and is gone
// with the object.
#include <libpq-fe.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "fulfillsync/testing/postgres.hpp"

namespace fulfillsync::testing {
namespace {

using Connection = std::unique_ptr<PGconn, decltype(&PQfinish)>;

Connection connect(const std::string& conninfo) { return Connection(PQconnectdb(conninfo.c_str()), &PQfinish); }

std::string query_one(PGconn* connection, const char* sql) {
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(connection, sql), &PQclear);
  if (PQresultStatus(result.get()) != PGRES_TUPLES_OK || PQntuples(result.get()) != 1) {
    return std::string("error: ") + PQerrorMessage(connection);
  }
  return PQgetvalue(result.get(), 0, 0);
}

TEST(PostgresServerTest, ServesOverItsSocketAndLoopbackAndIsGoneWithTheObject) {
  if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
  std::string socket_conninfo, tcp_conninfo;
  std::filesystem::path dir;
  {
    PostgresServer server;
    socket_conninfo = server.connection_string();
    tcp_conninfo = server.connection_string(true);
    dir = server.socket_dir();
    for (const std::string& conninfo : {socket_conninfo, tcp_conninfo}) {
      Connection connection = connect(conninfo);
      ASSERT_EQ(PQstatus(connection.get()), CONNECTION_OK) << conninfo << ": " << PQerrorMessage(connection.get());
      EXPECT_EQ(PQserverVersion(connection.get()) / 10000, 15);
      EXPECT_EQ(query_one(connection.get(), "SELECT current_user"), server.user());
    }
    EXPECT_TRUE(std::filesystem::exists(dir / ("data")));
    // The server never runs as root (initdb refuses it); as root, the unprivileged `postgres` does.
    Connection connection = connect(socket_conninfo);
    const std::string pid = query_one(connection.get(), "SELECT pg_backend_pid()");
    const auto status = read_file("/proc/" + pid + "/status");
    EXPECT_EQ(status.find("Uid:\t0\t"), std::string::npos) << status;
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  Connection after = connect(tcp_conninfo + " connect_timeout=2");
  EXPECT_NE(PQstatus(after.get()), CONNECTION_OK);
}

// Two servers side by side, as two tests running at once would start them.
TEST(PostgresServerTest, TwoServersRunSideBySide) {
  if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
  PostgresServer first, second;
  EXPECT_NE(first.port(), second.port());
  for (const PostgresServer* server : {&first, &second}) {
    Connection connection = connect(server->connection_string(true));
    EXPECT_EQ(PQstatus(connection.get()), CONNECTION_OK) << PQerrorMessage(connection.get());
  }
}

}  // namespace
}  // namespace fulfillsync::testing
