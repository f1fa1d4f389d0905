#pragma once
// The running daemon: opens its stores, serves metrics, tells systemd how it is, and answers
// SIGTERM/SIGINT (graceful stop within service.shutdown_timeout) and SIGHUP (reload).
#include <filesystem>
#include <memory>
#include <optional>

#include <signal.h>

#include <spdlog/common.h>

#include "fulfillsync/api/api_metrics.hpp"
#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/oauth.hpp"
#include "fulfillsync/api/token_source.hpp"
#include "fulfillsync/api/transport.hpp"
#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/checkpoint_store.hpp"
#include "fulfillsync/daemon/checkpoint_token_store.hpp"
#include "fulfillsync/daemon/metrics.hpp"
#include "fulfillsync/daemon/sd_notify.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"

namespace fulfillsync::daemon {

class Service {
 public:
  // Opens the checkpoint store and the merchant database and starts serving metrics. Throws
  // (CheckpointStoreError, MerchantDatabaseError, std::runtime_error) when any of them cannot start.
  // `log_level_override` is --log-level, which wins over the file at every reload.
  Service(std::filesystem::path config_path, config::Config config,
          std::optional<spdlog::level::level_enum> log_level_override);
  ~Service();

  // Runs until a stop signal and the graceful stop after it. Returns the process exit code.
  int run();

 private:
  boost::asio::awaitable<void> handle_signals();
  boost::asio::awaitable<void> ping_watchdog(std::chrono::microseconds interval);
  boost::asio::awaitable<void> stop_gracefully();
  // Finds the channel for creating calls; retried while the provider cannot be reached, fatal
  // (exit 78) when the token or the configured channel cannot work.
  boost::asio::awaitable<void> connect_to_provider();
  void reload();
  void apply(const config::Config& config);
  std::string status_line() const;

  boost::asio::io_context io_;
  // Installed first, so that a signal arriving while the stores open is held, not fatal.
  boost::asio::signal_set signals_{io_, SIGTERM, SIGINT, SIGHUP};
  std::filesystem::path config_path_;
  config::Config config_;
  std::optional<spdlog::level::level_enum> log_level_override_;
  Notifier notifier_;
  Metrics metrics_;
  std::uint16_t metrics_port_ = 0;
  std::unique_ptr<CheckpointStore> checkpoint_;
  std::unique_ptr<merchant::MerchantDatabase> merchant_;
  std::unique_ptr<api::Transport> transport_;
  std::unique_ptr<api::ApiMetrics> api_metrics_;
  std::unique_ptr<api::Transport> auth_transport_;  // the OAuth server, when api.oauth is set
  std::unique_ptr<api::TokenStore> token_store_;
  std::unique_ptr<api::TokenSource> tokens_;
  std::unique_ptr<api::ApiClient> client_;
  bool stopping_ = false;
  int exit_code_ = 0;
  // Work that a stop waits for (up to the deadline); later sync jobs count themselves here.
  int in_flight_ = 0;
};

}  // namespace fulfillsync::daemon
