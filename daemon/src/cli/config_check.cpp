#include "cli/config_check.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <prometheus/registry.h>

#include "fulfillsync/api/channel_selection.hpp"
#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/oauth.hpp"
#include "fulfillsync/api/token_source.hpp"
#include "fulfillsync/api/transport.hpp"
#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/common/time_zone.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/loader.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/merchant/sqlite_check.hpp"
#include "push/source_time_zone.hpp"
#include "service/http_endpoint.hpp"
#include "store/checkpoint_token_store.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using Level = ConfigCheck::Level;

namespace {

// The daemon creates the store (and SQLite its journal files) in this directory.
ConfigCheck check_checkpoint_directory(const std::filesystem::path& store) {
  const std::filesystem::path directory = store.parent_path().empty() ? "." : store.parent_path();
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    return {Level::error, "checkpoint.path",
            fmt::format("the directory {} does not exist; fix: create it for the user the daemon runs as (the "
                        "packaged unit's StateDirectory= makes /var/lib/fulfillsync)",
                        directory.string())};
  }
  for (const auto& file : {directory, store}) {
    if (std::filesystem::exists(file, error) && ::access(file.c_str(), R_OK | W_OK) != 0) {
      return {Level::error, "checkpoint.path",
              fmt::format("{} is not writable by this user (uid {}); fix: give it to the user the daemon runs as",
                          file.string(), ::geteuid())};
    }
  }
  const bool exists = std::filesystem::exists(store, error);
  return {Level::ok, "checkpoint.path",
          fmt::format("{} {}", store.string(), exists ? "is writable" : "can be created (its directory is writable)")};
}

ConfigCheck check_secret(std::string subject, const std::filesystem::path& file) {
  if (auto problem = config::secret_file_problem(file)) return {Level::error, std::move(subject), *problem};
  return {Level::ok, std::move(subject), fmt::format("{} is readable, private and not empty", file.string())};
}

std::optional<ConfigCheck> check_starting_point(const config::SyncConfig& sync) {
  if (!sync.orders_since) return std::nullopt;
  const auto since = timestamps::parse_iso8601(*sync.orders_since);
  if (!since || *since <= std::chrono::system_clock::now()) return std::nullopt;
  return ConfigCheck{Level::warning, "sync.orders_since",
                     fmt::format("{} is in the future: nothing older is sent or pulled, so nothing is until then; "
                                 "fix: set the date the sync should start from",
                                 *sync.orders_since)};
}

// The zone naive updated_at values are read in, with its offset now, and whether the checkpoint
// store's read positions were saved under another one.
ConfigCheck check_time_zone(const config::Config& config) {
  std::string why;
  const auto zone = timestamps::TimeZone::locate(config.merchant.timezone, why);
  if (!zone) return {Level::error, "merchant.timezone", why};
  const auto now = timestamps::Clock::now();
  const auto offset = std::chrono::duration_cast<std::chrono::minutes>(zone->offset_at(now)).count();
  std::string message = fmt::format("{} (now UTC{}{:02}:{:02}): an updated_at without Z or an offset is a wall time "
                                    "there",
                                    zone->name(), offset < 0 ? '-' : '+', std::abs(offset) / 60, std::abs(offset) % 60);
  std::optional<std::string> saved;
  std::error_code error;
  if (std::filesystem::exists(config.checkpoint.path, error)) {
    try {
      CheckpointStore store(config.checkpoint.path, CheckpointStore::Access::read_only);
      saved = saved_source_time_zone(store);
    } catch (const std::exception&) {
      // The store's own problems are the daemon's to report at start.
    }
  }
  if (saved && *saved != zone->name()) {
    return {Level::warning, "merchant.timezone",
            fmt::format("{}; the checkpoint store's read positions were saved under {}: the next start reads the "
                        "last 27 hours of rows by updated_at again (nothing is sent twice)",
                        message, *saved)};
  }
  return {Level::ok, "merchant.timezone", std::move(message)};
}

// GET /channel with the configured token: the channel creating calls would name.
ConfigCheck check_provider(const config::Config& config) {
  const auto base = api::parse_base_url(config.api.base_url);
  if (!base) return {Level::error, "api.base_url", config.api.base_url + " is not a URL"};
  asio::io_context io;
  prometheus::Registry registry;
  api::ApiMetrics metrics(registry);
  const auto& api = config.api;
  std::optional<ConfigCheck> result;
  try {
    api::Transport transport(io.get_executor(), api::TransportOptions{*base, api.ca_file, api.connect_timeout,
                                                                      api.request_timeout, 1});
    std::unique_ptr<api::Transport> auth_transport;
    std::unique_ptr<CheckpointStore> store;
    std::unique_ptr<CheckpointTokenStore> token_store;
    std::unique_ptr<api::TokenSource> tokens;
    if (const auto& oauth = api.oauth) {
      const auto auth_base = api::parse_base_url(oauth->auth_url);
      if (!auth_base) return {Level::error, "api.oauth.auth_url", oauth->auth_url + " is not a URL"};
      auth_transport = std::make_unique<api::Transport>(
          io.get_executor(),
          api::TransportOptions{*auth_base, api.ca_file, api.connect_timeout, api.request_timeout, 1});
      // Tokens saved by `auth login`; a refresh rotates them and is saved, as the daemon would.
      store = std::make_unique<CheckpointStore>(config.checkpoint.path, CheckpointStore::Access::alongside);
      token_store = std::make_unique<CheckpointTokenStore>(*store);
      tokens = std::make_unique<api::OAuthTokenSource>(
          *auth_transport,
          api::OAuthOptions{oauth->auth_url, oauth->client_id, api::read_token_file(oauth->client_secret_file),
                            oauth->redirect_uri, oauth->scopes},
          *token_store, metrics);
    } else {
      tokens = std::make_unique<api::PersonalAccessToken>(api.token_file);
    }
    api::ApiClient client(io.get_executor(), transport, *tokens, metrics,
                          api::ClientOptions{api.version, api.requests_per_minute,
                                             api::RetryPolicy{api.retry.base, api.retry.cap, api.retry.attempts}});
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          const auto selection = co_await api::select_channel(client, api.channel_id);
          result = ConfigCheck{selection.status == api::ChannelSelection::Status::selected ? Level::ok : Level::error,
                               "provider", fmt::format("{}: {}", api.base_url, selection.message)};
        },
        asio::detached);
    io.run();
  } catch (const std::exception& e) {
    return {Level::error, "provider", fmt::format("{}: {}", api.base_url, e.what())};
  }
  return result.value_or(ConfigCheck{Level::error, "provider", "no answer"});
}

}  // namespace

std::vector<ConfigCheck> check_configuration(const config::Config& config, bool online) {
  std::vector<ConfigCheck> checks;
  checks.push_back({Level::ok, "configuration", config.source.string() + " loads"});
  for (const auto& note : config.notes) checks.push_back({Level::ok, "note", note});

  // Only push_products reads the catalog (pull_stock's SKU map is a result table).
  const bool catalog = config.sync.push_products.enabled;
  for (const auto& finding : merchant::check_merchant_database(config.merchant, catalog)) {
    const Level level = finding.level == merchant::Finding::Level::error     ? Level::error
                        : finding.level == merchant::Finding::Level::warning ? Level::warning
                                                                             : Level::ok;
    checks.push_back({level, finding.subject, finding.message});
  }
  checks.push_back(check_time_zone(config));
  checks.push_back(check_checkpoint_directory(config.checkpoint.path));
  if (const auto& oauth = config.api.oauth) {
    checks.push_back(check_secret("api.oauth.client_secret_file", oauth->client_secret_file));
  } else {
    checks.push_back(check_secret("api.token_file", config.api.token_file));
  }
  if (auto since = check_starting_point(config.sync)) checks.push_back(std::move(*since));
  if (config.metrics.enabled && config.metrics.tls) {
    const auto problem = tls_files_problem(*config.metrics.tls);
    checks.push_back(problem ? ConfigCheck{Level::error, "metrics.tls_server_config", *problem}
                             : ConfigCheck{Level::ok, "metrics.tls_server_config", "the certificate and key load"});
  }
  if (online) {
    bool secrets_ok = true;
    for (const auto& check : checks) {
      if (check.level == Level::error && check.subject.starts_with("api.")) secrets_ok = false;
    }
    if (secrets_ok) checks.push_back(check_provider(config));
  }
  return checks;
}

std::string format_check(const ConfigCheck& check) {
  const char* level = check.level == Level::ok ? "OK   " : check.level == Level::warning ? "WARN " : "ERROR";
  return fmt::format("{} {}: {}", level, check.subject, check.message);
}

}  // namespace fulfillsync::daemon
