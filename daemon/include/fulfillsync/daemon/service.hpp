#pragma once
// The running daemon: opens its stores, serves metrics, tells systemd how it is, and answers
// SIGTERM/SIGINT (graceful stop within service.shutdown_timeout) and SIGHUP (reload).
#include <filesystem>
#include <memory>
#include <optional>

#include <spdlog/common.h>

#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/checkpoint_store.hpp"
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
  void reload();
  void apply(const config::Config& config);
  std::string status_line() const;

  boost::asio::io_context io_;
  std::filesystem::path config_path_;
  config::Config config_;
  std::optional<spdlog::level::level_enum> log_level_override_;
  Notifier notifier_;
  Metrics metrics_;
  std::uint16_t metrics_port_ = 0;
  std::unique_ptr<CheckpointStore> checkpoint_;
  std::unique_ptr<merchant::MerchantDatabase> merchant_;
  bool stopping_ = false;
  // Work that a stop waits for (up to the deadline); later sync jobs count themselves here.
  int in_flight_ = 0;
};

}  // namespace fulfillsync::daemon
