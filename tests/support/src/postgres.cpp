#include "fulfillsync/testing/postgres.hpp"

#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace fulfillsync::testing {
namespace {

const std::filesystem::path kBinDir = "/usr/lib/postgresql/15/bin";
constexpr const char* kUnprivilegedUser = "postgres";

// A loopback port free now. Another process may take it before the server binds it; start() tries
// again with another then.
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::system_error(error, std::generic_category(), "binding a loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

const passwd* unprivileged_user() {
  const passwd* user = ::getpwnam(kUnprivilegedUser);
  if (user == nullptr) {
    throw std::runtime_error("running as root, and there is no user 'postgres' to run the server as "
                             "(the postgresql-15 package creates it; run scripts/bootstrap)");
  }
  return user;
}

// The command line that runs `program` as the user the server runs as: root hands it to `postgres`
// with setpriv, which execs it (so the process we signal is the program itself, not a wrapper).
std::vector<std::string> as_server_user(std::vector<std::string> argv) {
  if (::geteuid() != 0) return argv;
  std::vector<std::string> wrapped = {"/usr/bin/setpriv", "--reuid", kUnprivilegedUser, "--regid",
                                      kUnprivilegedUser, "--init-groups", "--"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

std::string current_user_name() {
  if (::geteuid() == 0) return kUnprivilegedUser;
  const passwd* user = ::getpwuid(::geteuid());
  if (user == nullptr) throw std::runtime_error("the current user has no name in the password database");
  return user->pw_name;
}

}  // namespace

std::optional<std::string> PostgresServer::unavailable() {
  for (const char* program : {"initdb", "postgres"}) {
    if (::access((kBinDir / program).c_str(), X_OK) != 0) {
      return (kBinDir / program).string() + " is missing: install postgresql-15 (scripts/bootstrap does)";
    }
  }
  return std::nullopt;
}

PostgresServer::PostgresServer() : user_(current_user_name()) {
  if (auto why = unavailable()) throw std::runtime_error(*why);
  if (::geteuid() == 0) {
    const passwd* user = unprivileged_user();
    if (::chown(dir_.path().c_str(), user->pw_uid, user->pw_gid) != 0) {
      throw std::system_error(errno, std::generic_category(), "chown " + dir_.path().string());
    }
  }
  // Trust: the socket lives in a directory only the server's user can enter, and TCP listens on
  // loopback for the test alone. No fsync: the data dies with the test.
  // In the directory: the test's own may be closed to the server's user.
  const RunResult initdb = run(
      ChildProcess::Options{.argv = as_server_user({(kBinDir / "initdb").string(), "--pgdata",
                                                    (dir_ / "data").string(), "--username", user_, "--auth", "trust",
                                                    "--encoding", "UTF8", "--locale", "C", "--no-sync"}),
                            .working_dir = dir_.path()},
      120s);
  if (initdb.exit_status != 0) {
    throw std::runtime_error("initdb failed (" + std::to_string(initdb.exit_status) + "):\n" + initdb.stdout_text +
                             initdb.stderr_text);
  }
  start();
}

void PostgresServer::start(std::uint16_t port) {
  constexpr int kAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    port_ = port != 0 ? port : free_port();
    process_ = std::make_unique<ChildProcess>(ChildProcess::Options{
        .argv = as_server_user({(kBinDir / "postgres").string(), "-D", (dir_ / "data").string(), "-p",
                                std::to_string(port_), "-c", "listen_addresses=127.0.0.1", "-c",
                                "unix_socket_directories=" + dir_.path().string(), "-c", "fsync=off", "-c",
                                "synchronous_commit=off", "-c", "full_page_writes=off"}),
        .working_dir = dir_.path(),
        .stderr_file = dir_ / "server.log"});
    if (process_->wait_for_stderr("database system is ready to accept connections", 60s)) return;
    const std::string output = log();
    process_->send_signal(SIGKILL);
    process_->wait_for_exit(10s);
    // Another process took the port between free_port() and the server's bind.
    if (port == 0 && attempt < kAttempts && output.find("could not bind") != std::string::npos) continue;
    throw std::runtime_error("postgres did not start:\n" + output);
  }
}

PostgresServer::~PostgresServer() { stop(); }

void PostgresServer::stop() {
  if (!process_) return;
  process_->send_signal(SIGINT);
  if (!process_->wait_for_exit(30s)) process_->send_signal(SIGKILL);
  process_->wait_for_exit(10s);
  process_.reset();
}

void PostgresServer::restart() {
  stop();
  // The server's log is written afresh at each start: the earlier one is kept for log().
  std::filesystem::rename(dir_ / "server.log", dir_ / ("server." + std::to_string(++restarts_) + ".log"));
  start(port_);
}

std::string PostgresServer::connection_string(bool tcp) const {
  return "host=" + (tcp ? std::string("127.0.0.1") : socket_dir()) + " port=" + std::to_string(port_) +
         " dbname=" + kDatabase + " user=" + user_;
}

std::string PostgresServer::log() const {
  std::string log;
  for (int restart = 1; restart <= restarts_; ++restart) {
    log += read_file(dir_ / ("server." + std::to_string(restart) + ".log"));
  }
  return log + read_file(dir_ / "server.log");
}

}  // namespace fulfillsync::testing
