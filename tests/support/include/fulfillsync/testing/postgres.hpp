#pragma once
// A PostgreSQL 15 server started for one test from Debian's binaries (postgresql-15: initdb and
// postgres) in a temporary directory: on a free loopback port, with its socket in that directory,
// trusting local connections. Stopped, and its directory removed, when the object goes, whether the
// test passed or not.
//
// initdb refuses to run as root, and CI runs as root: then both programs run as the package's
// unprivileged user `postgres`, which owns the directory; otherwise as the test's own user.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::testing {

class PostgresServer {
 public:
  // Why no server can be started here (the binaries are missing), or nothing. Tests skip on it:
  //   if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
  static std::optional<std::string> unavailable();

  // Runs initdb and starts the server; returns once it accepts connections. Throws std::runtime_error
  // with the programs' output when it cannot.
  PostgresServer();
  // Fast shutdown (SIGINT: open transactions are rolled back), SIGKILL if that takes too long.
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  std::uint16_t port() const { return port_; }
  // The directory holding the socket, a host name to libpq.
  std::string socket_dir() const { return dir_.path().string(); }
  // The superuser initdb created (the user the server runs as) and its database.
  const std::string& user() const { return user_; }
  static constexpr const char* kDatabase = "postgres";
  // A libpq connection string: over the socket, or over TCP to 127.0.0.1 (`tcp`).
  std::string connection_string(bool tcp = false) const;

  // The server's log so far (for a failing test's message).
  std::string log() const;

  // Stops the server (fast shutdown: its clients' connections are closed) and starts it again on the
  // same data and port, as a restart in production would.
  void restart();
  // Stops the server for good (fast shutdown), as a server that goes away does.
  void stop();

 private:
  // `port`: the one to listen on; 0: a free one.
  void start(std::uint16_t port = 0);

  TempDir dir_;
  std::string user_;
  std::uint16_t port_ = 0;
  int restarts_ = 0;  // the logs before each are server.<n>.log
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace fulfillsync::testing
