// The PostgreSQL change listener (change_notifications.hpp): its own libpq connection, non-blocking,
// whose socket the Asio loop watches. Connecting (PQconnectStartParams, PQconnectPoll), LISTEN and
// reading notifications each wait for the socket to be ready, never block the loop.
#include <libpq-fe.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/doubling.hpp"
#include "fulfillsync/merchant/change_notifications.hpp"
#include "postgres_support.hpp"
#include "sql_names.hpp"

namespace fulfillsync::merchant {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// Opening the connection and LISTEN, together, take no longer than this.
constexpr auto kConnectTimeout = 10s;
// Reconnecting after a loss: 250 ms, doubling to 30 s.
constexpr Doubling kReconnect{250ms, 30s};

class PostgresChangeListener final : public ChangeNotifications {
 public:
  PostgresChangeListener(const config::MerchantConfig& config, asio::any_io_executor executor)
      : params_(config.postgresql), socket_(executor), deadline_(executor), retry_(executor) {}

  // Once the loop no longer runs (a wait in progress is abandoned, not resumed).
  ~PostgresChangeListener() override { close(); }

  asio::awaitable<Event> next() override {
    for (;;) {
      if (connection_ == nullptr) {
        if (failures_ > 0) {
          retry_.expires_after(kReconnect.after(failures_));
          boost::system::error_code ignored;
          co_await retry_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
        }
        if (std::string error = co_await connect(); !error.empty()) {
          close();
          ++failures_;
          // Logged once per loss (lose() did) or at the first try, not per try: the tries go on at debug.
          if (failures_ == 1) {
            spdlog::warn("merchant database: cannot listen for changes ({}); trying again with back-off, the "
                         "interval's polling goes on meanwhile",
                         error);
          } else {
            spdlog::debug("merchant database: cannot listen for changes ({}); trying again in {} ms", error,
                          kReconnect.after(failures_).count());
          }
          continue;
        }
        spdlog::info("merchant database: listening for changes on channel {}{}", kChangeChannel,
                     listened_ ? " again" : "");
        failures_ = 0;
        listened_ = true;
        co_return Event::listening;
      }
      // libpq may hold notifications read with the last answer: those first.
      bool changed = false;
      while (PGnotify* notification = PQnotifies(connection_)) {
        changed = true;
        PQfreemem(notification);
      }
      if (changed) co_return Event::changed;
      if (std::string error = co_await wait_for(asio::posix::stream_descriptor::wait_read); !error.empty()) {
        co_return lose(error);
      }
      if (PQconsumeInput(connection_) == 0 || PQstatus(connection_) == CONNECTION_BAD) {
        co_return lose(pg_error_message(connection_));
      }
    }
  }

 private:
  Event lose(const std::string& error) {
    spdlog::warn("merchant database: the change listener's connection was lost ({}); reconnecting with back-off",
                 error.empty() ? "closed" : error);
    close();
    failures_ = 1;
    return Event::lost;
  }

  // Connects and LISTENs; what went wrong, or nothing.
  asio::awaitable<std::string> connect() {
    deadline_at_ = std::chrono::steady_clock::now() + kConnectTimeout;
    connection_ = PQconnectStartParams(params_.keywords(), params_.values(), params_.expand_dbname());
    if (connection_ == nullptr || PQstatus(connection_) == CONNECTION_BAD) co_return pg_error_message(connection_);
    for (PostgresPollingStatusType polling = PGRES_POLLING_WRITING; polling != PGRES_POLLING_OK;) {
      if (polling == PGRES_POLLING_FAILED) co_return pg_error_message(connection_);
      const auto wait = polling == PGRES_POLLING_READING ? asio::posix::stream_descriptor::wait_read
                                                         : asio::posix::stream_descriptor::wait_write;
      if (std::string error = co_await wait_for(wait); !error.empty()) co_return error;
      polling = PQconnectPoll(connection_);
    }
    PQsetNoticeProcessor(connection_, [](void*, const char*) {}, nullptr);
    if (PQsetnonblocking(connection_, 1) != 0) co_return pg_error_message(connection_);
    const std::string listen = fmt::format("LISTEN {}", sql_name(kChangeChannel));
    if (PQsendQuery(connection_, listen.c_str()) == 0) co_return pg_error_message(connection_);
    for (int flushing; (flushing = PQflush(connection_)) != 0;) {
      if (flushing < 0) co_return pg_error_message(connection_);
      if (std::string error = co_await wait_for(asio::posix::stream_descriptor::wait_write); !error.empty()) {
        co_return error;
      }
    }
    std::string failed;
    for (;;) {
      while (PQisBusy(connection_) != 0) {
        if (std::string error = co_await wait_for(asio::posix::stream_descriptor::wait_read); !error.empty()) {
          co_return error;
        }
        if (PQconsumeInput(connection_) == 0) co_return pg_error_message(connection_);
      }
      PGresult* result = PQgetResult(connection_);
      if (result == nullptr) break;
      if (PQresultStatus(result) != PGRES_COMMAND_OK) {
        failed = PQresultErrorMessage(result);
        while (!failed.empty() && failed.back() == '\n') failed.pop_back();
      }
      PQclear(result);
    }
    deadline_at_.reset();
    co_return failed;
  }

  // Waits until the connection's socket is ready for `wait`; what went wrong, or nothing. While
  // connecting, no later than the connect deadline.
  asio::awaitable<std::string> wait_for(asio::posix::stream_descriptor::wait_type wait) {
    // While connecting, libpq may close its socket and open another (the next address of a host),
    // perhaps with the same number: registered afresh for each wait then.
    const int fd = PQsocket(connection_);
    if (fd < 0) co_return "no socket";
    if (!socket_.is_open() || socket_.native_handle() != fd || deadline_at_) {
      release_socket();
      socket_.assign(fd);
    }
    const unsigned generation = ++waits_;
    if (deadline_at_) {
      deadline_.expires_at(*deadline_at_);
      deadline_.async_wait([this, generation](boost::system::error_code error) {
        if (!error && generation == waits_) socket_.cancel();
      });
    }
    boost::system::error_code error;
    co_await socket_.async_wait(wait, asio::redirect_error(asio::use_awaitable, error));
    deadline_.cancel();
    if (error == asio::error::operation_aborted) {
      co_return fmt::format("no answer within {} s", std::chrono::duration_cast<std::chrono::seconds>(kConnectTimeout).count());
    }
    if (error) co_return error.message();
    co_return std::string();
  }

  // The descriptor does not own the socket: libpq does, and closes it in PQfinish.
  void release_socket() {
    if (socket_.is_open()) socket_.release();
  }

  void close() {
    release_socket();
    deadline_.cancel();
    if (connection_ != nullptr) PQfinish(connection_);
    connection_ = nullptr;
    deadline_at_.reset();
  }

  PgConnectionParams params_;
  PGconn* connection_ = nullptr;
  asio::posix::stream_descriptor socket_;
  asio::steady_timer deadline_;
  std::optional<std::chrono::steady_clock::time_point> deadline_at_;
  unsigned waits_ = 0;  // tells a stale deadline from the current wait's
  asio::steady_timer retry_;
  int failures_ = 0;       // connects failed in a row (a loss counts as the first)
  bool listened_ = false;  // once: a later LISTEN is "again"
};

}  // namespace

std::unique_ptr<ChangeNotifications> listen_for_changes(const config::MerchantConfig& config,
                                                        asio::any_io_executor executor) {
  if (config.driver != config::MerchantDriver::postgresql) return nullptr;
  return std::make_unique<PostgresChangeListener>(config, std::move(executor));
}

}  // namespace fulfillsync::merchant
