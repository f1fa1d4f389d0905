#pragma once
// The daemon's configuration: one YAML file, loaded and validated completely before anything uses it
// (see loader.hpp). config/fulfillsync.example.yaml documents every key.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/common.h>

namespace fulfillsync::config {

using Duration = std::chrono::milliseconds;

struct ServiceConfig {
  // How long a stop (SIGTERM) lets in-flight requests finish before the daemon exits anyway.
  Duration shutdown_timeout = std::chrono::seconds(30);

  bool operator==(const ServiceConfig&) const = default;
};

struct LoggingConfig {
  spdlog::level::level_enum level = spdlog::level::info;

  bool operator==(const LoggingConfig&) const = default;
};

struct CheckpointConfig {
  std::filesystem::path path;

  bool operator==(const CheckpointConfig&) const = default;
};

enum class MerchantDriver { sqlite, postgresql };

struct SqliteConfig {
  std::filesystem::path path;
  Duration busy_timeout = std::chrono::seconds(5);

  bool operator==(const SqliteConfig&) const = default;
};

// A PostgreSQL merchant database (merchant.postgresql). The server is named either by a libpq
// connection string (`connection`) or by host, port, database and user; never with a password,
// which comes from password_file.
struct PostgresConfig {
  std::string connection;  // a libpq connection string or URI (no password in it); empty: the parts below
  std::string host;        // a host name, an address, or a socket directory (starting with /)
  int port = 5432;
  std::string database;
  std::string user;
  // The password on the file's first line (mode 0600, or a systemd credential); empty: none (peer,
  // certificate or trust authentication).
  std::filesystem::path password_file;
  // libpq's sslmode: as set, or, when not set, verify-full for a host that is not this machine and
  // libpq's default, prefer, for loopback or a socket (resolved at load).
  std::string sslmode;
  std::filesystem::path sslrootcert;  // the CA that signs the server's certificate; empty: libpq's default
  // The schema holding the source tables (or views), and the one the daemon owns for its result tables.
  std::string source_schema = "public";
  std::string result_schema = "fulfillsync";
  // Each statement's limit on the server (statement_timeout), so that a lock cannot hold a job forever.
  Duration statement_timeout = std::chrono::seconds(30);

  bool operator==(const PostgresConfig&) const = default;
};

struct MerchantConfig {
  MerchantDriver driver = MerchantDriver::sqlite;
  SqliteConfig sqlite;         // driver sqlite
  PostgresConfig postgresql;   // driver postgresql
  // Whether the daemon creates and migrates its result tables in the merchant database.
  bool manage_result_tables = true;
  // Prefix of the result tables' names; a plain SQL identifier (validated).
  std::string result_table_prefix = "fulfillsync_";
  // How far behind the newest row seen a poll looks again, for rows committed late with an older
  // updated_at (the merchant application's longest write transaction, plus clock skew).
  Duration look_back = std::chrono::minutes(5);
  // How far ahead of this server's clock a source row's updated_at may be (the merchant application
  // servers' clock skew). The read position never passes now plus this; a row further ahead is
  // rejected until the clock or the row catches up.
  Duration max_clock_skew = std::chrono::minutes(5);
  // The IANA zone in which an updated_at without Z or an offset is read (validated at load).
  std::string timezone = "UTC";
  // Source rows read per batch.
  int batch_size = 250;
  // How often the reconciliation sweep compares every open source row with the outbound ledger and
  // sends what change detection missed; 0: never.
  Duration reconcile_interval = std::chrono::hours(1);

  bool operator==(const MerchantConfig&) const = default;
};

struct RetryConfig {
  Duration base = std::chrono::milliseconds(500);
  Duration cap = std::chrono::seconds(30);
  int attempts = 5;  // including the first

  bool operator==(const RetryConfig&) const = default;
};

// OAuth 2.0 instead of a personal access token: `fulfillsyncd auth login` obtains the first tokens,
// the daemon refreshes them and keeps them in the checkpoint store.
struct OAuthConfig {
  std::string auth_url;
  std::string client_id;
  std::filesystem::path client_secret_file;
  std::string redirect_uri = "http://127.0.0.1:8976/callback";
  std::vector<std::string> scopes = {"openid",          "offline_access", "channels_read",      "orders_read",
                                     "orders_write",    "returns_read",   "returns_write",      "fulfillments_read",
                                     "fulfillments_write", "inventory_read", "receiving_read"};

  bool operator==(const OAuthConfig&) const = default;
};

struct ApiConfig {
  std::string base_url;
  std::string version = "2026-07";
  std::filesystem::path token_file;  // a personal access token; empty with oauth
  std::optional<OAuthConfig> oauth;
  std::optional<std::filesystem::path> ca_file;
  bool allow_plain_http = false;
  std::optional<std::int32_t> channel_id;
  int requests_per_minute = 150;
  Duration connect_timeout = std::chrono::seconds(10);
  Duration request_timeout = std::chrono::seconds(30);
  int pool_size = 4;  // keep-alive connections to the provider
  RetryConfig retry;

  bool operator==(const ApiConfig&) const = default;
};

// One job of the scheduler.
struct JobConfig {
  bool enabled = true;
  // The pause between runs while the job has nothing to do. A push job polls its source table once
  // per run; a poll that finds nothing changed costs almost nothing, so it can be short.
  Duration interval = std::chrono::milliseconds(250);
  int batch_size = 100;  // items taken per run
  int concurrency = 4;   // requests in flight at once

  bool operator==(const JobConfig&) const = default;
};

// A pull job that walks the provider's changes in windows (pull_shipments) or polls what is still
// open (pull_returns).
struct PullJobConfig {
  bool enabled = true;
  // Each run reads every order changed since the last window: a longer interval reads each order in
  // fewer windows (fewer calls per order), a shorter one brings shipments in sooner.
  Duration interval = std::chrono::minutes(2);
  int page_size = 250;  // items per list request (the API takes at most 250)
  // How far before the newest change already stored a window starts again: the provider's pages are
  // not sorted across boundaries and its updates may land late; re-reading them only repeats work.
  Duration overlap = std::chrono::minutes(1);
  // pull_shipments only: also keep the timeline of every changed shipment (one request each).
  bool timelines = false;

  bool operator==(const PullJobConfig&) const = default;
};

enum class TrackingMarkMode {
  after_write,   // once the merchant database holds the tracking
  acknowledged,  // once the merchant's application sets `acknowledged_at` in the tracking table
  never,
};

struct TrackingMarksConfig {
  TrackingMarkMode mode = TrackingMarkMode::after_write;
  Duration interval = std::chrono::seconds(10);
  int batch_size = 100;  // shipment ids per batch request
  // A batch short of batch_size waits at most this long (from its oldest mark's queuing) for more
  // shipments: fewer requests per shipment in a trickle, the provider told later. 0: sent at once.
  Duration batch_wait = std::chrono::minutes(5);
  // The safety sweep: orders the provider says have tracking not marked uploaded.
  Duration sweep_interval = std::chrono::minutes(30);

  bool operator==(const TrackingMarksConfig&) const = default;
};

struct LotsConfig {
  bool enabled = true;
  // Each watched inventory id is read once per interval, the reads spread evenly across it.
  Duration interval = std::chrono::minutes(15);

  bool operator==(const LotsConfig&) const = default;
};

// pull_stock: the SKU map and each SKU's stock, from a whole pass over the provider's product list.
struct StockConfig {
  bool enabled = true;
  // A pass starts this long after the previous one started; its pages are read one after another.
  Duration interval = std::chrono::minutes(15);
  int page_size = 250;  // products per request (the provider's most)

  bool operator==(const StockConfig&) const = default;
};

struct SyncConfig {
  // Where a first start begins: source rows with updated_at at or after it (ISO 8601). Unset: the
  // moment of the first start, so years of history are never pushed by surprise. Kept in the
  // checkpoint store at the first start; changing it later has no effect.
  std::optional<std::string> orders_since;
  // How often a backlog's progress is logged.
  Duration progress_interval = std::chrono::seconds(10);
  JobConfig push_orders;
  JobConfig push_cancels;
  JobConfig push_returns;
  // The catalog (fulfillsync_products and fulfillsync_variants): off unless the merchant keeps it.
  // Pushed before the orders in a run, so that an order's new SKU is a product first.
  JobConfig push_products{.enabled = false, .interval = std::chrono::seconds(30)};
  PullJobConfig pull_shipments;
  TrackingMarksConfig mark_tracking;
  PullJobConfig pull_returns{.interval = std::chrono::minutes(5), .page_size = 100};
  LotsConfig pull_lots;
  StockConfig pull_stock;

  bool operator==(const SyncConfig&) const = default;
};

// The endpoint's TLS, in the shape of the Prometheus exporters' web config (tls_server_config).
struct MetricsTlsConfig {
  std::filesystem::path cert_file;  // PEM chain; with key_file, read again on SIGHUP
  std::filesystem::path key_file;
  std::filesystem::path client_ca_file;  // set: client certificates signed by it are required
  enum class MinVersion { tls12, tls13 } min_version = MinVersion::tls12;

  bool operator==(const MetricsTlsConfig&) const = default;
};

struct MetricsConfig {
  bool enabled = true;
  std::string host = "127.0.0.1";  // loopback unless configured otherwise
  std::uint16_t port = 9464;       // 0 picks a free port (logged)
  // From a request's first byte to the end of its header; a client slower than that is dropped.
  std::chrono::milliseconds header_read_timeout = std::chrono::seconds(10);
  // How long a kept-alive connection may wait for its next request.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(60);
  std::optional<MetricsTlsConfig> tls;
  // User name to bcrypt hash ("$2y$..."); empty: no authentication.
  std::map<std::string, std::string> basic_auth_users;
  // Serving beyond loopback without TLS or basic auth is refused unless this says it is meant.
  bool insecure = false;

  bool operator==(const MetricsConfig&) const = default;
};

struct Config {
  std::filesystem::path source;  // the file it was loaded from
  ServiceConfig service;
  LoggingConfig logging;
  CheckpointConfig checkpoint;
  MerchantConfig merchant;
  ApiConfig api;
  SyncConfig sync;
  MetricsConfig metrics;
  // What the loader assumed on the operator's behalf, for check-config to show (e.g. where a
  // systemd credential is read from outside systemd).
  std::vector<std::string> notes;

  bool operator==(const Config&) const = default;
};

}  // namespace fulfillsync::config
