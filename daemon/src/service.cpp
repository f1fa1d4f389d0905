#include "fulfillsync/daemon/service.hpp"

#include <signal.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/channel_selection.hpp"
#include "fulfillsync/api/oauth.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/config/loader.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;

Service::Service(std::filesystem::path config_path, config::Config config,
                 std::optional<spdlog::level::level_enum> log_level_override)
    : config_path_(std::move(config_path)),
      config_(std::move(config)),
      log_level_override_(log_level_override),
      notifier_(Notifier::from_environment()) {
  apply(config_);
  checkpoint_ = std::make_unique<CheckpointStore>(config_.checkpoint.path);
  spdlog::info("checkpoint store {} at schema version {}", checkpoint_->path().string(), checkpoint_->schema_version());
  merchant_ = merchant::open_merchant_database(config_.merchant);
  spdlog::info("merchant database: {}", merchant_->describe());
  if (config_.metrics.enabled) {
    metrics_port_ = metrics_.serve(config_.metrics);
    spdlog::info("metrics listening on {}:{}", config_.metrics.host, metrics_port_);
  }
  metrics_.record_config_load(true);

  const auto base = api::parse_base_url(config_.api.base_url);
  if (!base) throw std::runtime_error("api.base_url " + config_.api.base_url + " is not a URL");
  transport_ = std::make_unique<api::Transport>(
      io_.get_executor(),
      api::TransportOptions{*base, config_.api.ca_file, config_.api.connect_timeout, config_.api.request_timeout,
                            static_cast<std::size_t>(config_.api.pool_size)});
  api_metrics_ = std::make_unique<api::ApiMetrics>(metrics_.registry());
  if (const auto& oauth = config_.api.oauth) {
    const auto auth_base = api::parse_base_url(oauth->auth_url);
    if (!auth_base) throw std::runtime_error("api.oauth.auth_url " + oauth->auth_url + " is not a URL");
    auth_transport_ = std::make_unique<api::Transport>(
        io_.get_executor(), api::TransportOptions{*auth_base, config_.api.ca_file, config_.api.connect_timeout,
                                                  config_.api.request_timeout, 1});
    token_store_ = std::make_unique<CheckpointTokenStore>(*checkpoint_);
    tokens_ = std::make_unique<api::OAuthTokenSource>(
        *auth_transport_,
        api::OAuthOptions{oauth->auth_url, oauth->client_id, api::read_token_file(oauth->client_secret_file),
                          oauth->redirect_uri, oauth->scopes},
        *token_store_, *api_metrics_);
  } else {
    tokens_ = std::make_unique<api::PersonalAccessToken>(config_.api.token_file);
  }
  client_ = std::make_unique<api::ApiClient>(
      io_.get_executor(), *transport_, *tokens_, *api_metrics_,
      api::ClientOptions{config_.api.version, config_.api.requests_per_minute,
                         api::RetryPolicy{config_.api.retry.base, config_.api.retry.cap, config_.api.retry.attempts}});
}

Service::~Service() = default;

int Service::run() {
  asio::co_spawn(io_, handle_signals(), asio::detached);
  asio::co_spawn(io_, connect_to_provider(), asio::detached);
  if (const auto interval = notifier_.watchdog_interval()) {
    asio::co_spawn(io_, ping_watchdog(*interval), asio::detached);
  }
  notifier_.notify("READY=1\nSTATUS=" + status_line());
  spdlog::info("fulfillsyncd ready ({})", config_path_.string());
  io_.run();
  spdlog::info("fulfillsyncd stopped");
  return exit_code_;
}

asio::awaitable<void> Service::connect_to_provider() {
  std::chrono::milliseconds wait = 1s;
  asio::steady_timer timer(io_);
  while (!stopping_) {
    const api::ChannelSelection selection = co_await api::select_channel(*client_, config_.api.channel_id);
    if (selection.status == api::ChannelSelection::Status::selected) {
      spdlog::info("provider {}: {}", config_.api.base_url, selection.message);
      co_return;
    }
    if (!selection.transient()) {
      spdlog::critical("cannot start: {}", selection.message);
      exit_code_ = 78;  // EX_CONFIG: an operator has to act; systemd does not restart on it
      if (!stopping_) asio::co_spawn(io_, stop_gracefully(), asio::detached);
      co_return;
    }
    spdlog::warn("{}; asking again in {}", selection.message, config::format_duration(wait));
    timer.expires_after(wait);
    co_await timer.async_wait(asio::use_awaitable);
    wait = std::min<std::chrono::milliseconds>(wait * 2, 60s);
  }
}

asio::awaitable<void> Service::handle_signals() {
  for (;;) {
    const int signal = co_await signals_.async_wait(asio::use_awaitable);
    if (signal == SIGHUP) {
      if (!stopping_) reload();
      continue;
    }
    if (stopping_) {
      spdlog::warn("second stop signal: exiting without waiting for in-flight work");
      io_.stop();
      co_return;
    }
    spdlog::info("received {}: stopping", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    asio::co_spawn(io_, stop_gracefully(), asio::detached);
  }
}

asio::awaitable<void> Service::stop_gracefully() {
  stopping_ = true;
  notifier_.notify("STOPPING=1\nSTATUS=Stopping");
  const auto deadline = std::chrono::steady_clock::now() + config_.service.shutdown_timeout;
  asio::steady_timer poll(io_);
  while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline) {
    poll.expires_after(50ms);
    co_await poll.async_wait(asio::use_awaitable);
  }
  if (in_flight_ > 0) {
    spdlog::warn("shutdown timeout ({}) reached with {} requests in flight; the ledger resumes them at next start",
                 config::format_duration(config_.service.shutdown_timeout), in_flight_);
  }
  io_.stop();
}

asio::awaitable<void> Service::ping_watchdog(std::chrono::microseconds interval) {
  // Pinging from the event loop itself is the point: a loop that hangs stops the pings and systemd
  // restarts the service.
  asio::steady_timer timer(io_);
  for (;;) {
    notifier_.notify("WATCHDOG=1");
    timer.expires_after(interval);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

void Service::reload() {
  const auto monotonic_usec =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch());
  notifier_.notify(fmt::format("RELOADING=1\nMONOTONIC_USEC={}", monotonic_usec.count()));
  spdlog::info("received SIGHUP: reloading {}", config_path_.string());
  try {
    config::Config fresh = config::load_file(config_path_);
    const auto needs_restart = [&](const char* section, bool changed) {
      if (changed) spdlog::warn("reload: changes to '{}' take effect at the next restart", section);
    };
    needs_restart("checkpoint", !(fresh.checkpoint == config_.checkpoint));
    needs_restart("merchant", !(fresh.merchant == config_.merchant));
    needs_restart("api", !(fresh.api == config_.api));
    needs_restart("metrics", !(fresh.metrics == config_.metrics));
    // Sections read at start stay as they were, so what runs matches what the log says.
    fresh.checkpoint = config_.checkpoint;
    fresh.merchant = config_.merchant;
    fresh.api = config_.api;
    fresh.metrics = config_.metrics;
    apply(fresh);
    config_ = std::move(fresh);
    metrics_.record_config_load(true);
    spdlog::info("configuration reloaded");
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) spdlog::error("{}", diagnostic.to_string());
    spdlog::error("reload failed: keeping the running configuration");
    metrics_.record_config_load(false);
  }
  notifier_.notify("READY=1\nSTATUS=" + status_line());
}

void Service::apply(const config::Config& config) {
  spdlog::set_level(log_level_override_.value_or(config.logging.level));
}

std::string Service::status_line() const {
  std::string status = "Running";
  if (metrics_port_ != 0) status += fmt::format("; metrics on {}:{}", config_.metrics.host, metrics_port_);
  return status;
}

}  // namespace fulfillsync::daemon
