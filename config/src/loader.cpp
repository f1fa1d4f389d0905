#include "fulfillsync/config/loader.hpp"

#include <libpq-fe.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include "fulfillsync/common/logging.hpp"
#include "fulfillsync/common/time_zone.hpp"
#include "yaml_reader.hpp"

namespace fulfillsync::config {
namespace {

using namespace std::chrono_literals;
using detail::Need;
using detail::Section;

constexpr std::int64_t kMaxPort = 65535;

Section::Parse<spdlog::level::level_enum> log_level() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<spdlog::level::level_enum> {
    auto name = detail::string_value()(value, why);
    if (!name) return std::nullopt;
    if (auto level = logging::parse_level(*name)) return level;
    why = fmt::format("'{}' is not a log level: trace, debug, info, warn, error, critical or off", *name);
    return std::nullopt;
  };
}

// An IANA time zone the system's zoneinfo holds.
Section::Parse<std::string> time_zone_name() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<std::string> {
    auto name = detail::string_value()(value, why);
    if (!name || !timestamps::TimeZone::locate(*name, why)) return std::nullopt;
    return name;
  };
}

// "host:port" or "[ipv6]:port".
struct Endpoint {
  std::string host;
  std::uint16_t port;
};
Section::Parse<Endpoint> endpoint() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<Endpoint> {
    auto text = detail::string_value()(value, why);
    if (!text) return std::nullopt;
    const std::size_t colon = text->rfind(':');
    std::string host = colon == std::string::npos ? "" : text->substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    YAML::Node port_node(colon == std::string::npos ? "" : text->substr(colon + 1));
    std::string port_why;
    const auto port = detail::integer(0, kMaxPort)(port_node, port_why);
    if (host.empty() || !port) {
      why = fmt::format("'{}' is not HOST:PORT (e.g. 127.0.0.1:9464; port 0 picks a free port)", *text);
      return std::nullopt;
    }
    return Endpoint{host, static_cast<std::uint16_t>(*port)};
  };
}

// A key that has no place here, whatever its value.
Section::Parse<bool> rejected(std::string message) {
  return [message = std::move(message)](const YAML::Node&, std::string& why) -> std::optional<bool> {
    why = message;
    return std::nullopt;
  };
}

// What the loading needs beyond the YAML text.
struct LoadContext {
  std::filesystem::path file;  // the configuration file (or the name standing for it)
  Secrets secrets;
  std::vector<std::string>& notes;
};

// The file a packaged unit loads as systemd credential `credential` (its LoadCredential= line):
// fulfillsyncd.service reads /etc/fulfillsync/fulfillsync.yaml and /etc/fulfillsync/api-token,
// fulfillsyncd@shop1.service /etc/fulfillsync/shop1.yaml and /etc/fulfillsync/shop1.api-token.
std::filesystem::path credential_outside_systemd(const std::filesystem::path& config_file,
                                                 const std::string& credential) {
  const std::string stem = config_file.stem().string();
  return config_file.parent_path() / (stem == "fulfillsync" ? credential : stem + "." + credential);
}

// A path to a secret. `${CREDENTIALS_DIRECTORY}/NAME` outside systemd (an operator running
// check-config or once by hand) is the file the unit would have loaded as credential NAME.
Section::Parse<std::filesystem::path> secret_path(const LoadContext& context, std::string key) {
  return [&context, key](const YAML::Node& value, std::string& why) -> std::optional<std::filesystem::path> {
    constexpr std::string_view kCredential = "${CREDENTIALS_DIRECTORY}/";
    if (std::getenv("CREDENTIALS_DIRECTORY") == nullptr && value.IsScalar() &&
        value.Scalar().rfind(kCredential, 0) == 0) {
      const std::string credential = value.Scalar().substr(kCredential.size());
      if (!credential.empty() && credential.find_first_of("/$") == std::string::npos) {
        const auto file = credential_outside_systemd(context.file, credential);
        context.notes.push_back(fmt::format(
            "{}: CREDENTIALS_DIRECTORY is not set (not started by systemd), so {} is read from {}, the file the "
            "unit's LoadCredential= loads as credential '{}'",
            key, value.Scalar(), file.string(), credential));
        return file;
      }
    }
    return detail::path()(value, why);
  };
}

void check_secret_file(Section& section, std::string_view key, const std::filesystem::path& file) {
  if (auto problem = secret_file_problem(file)) section.reject(key, *problem);
}

void read_service(Section section, ServiceConfig& out) {
  section.read("shutdown_timeout", out.shutdown_timeout, Need::optional, detail::duration(1s, 10min));
}

void read_logging(Section section, LoggingConfig& out) {
  section.read("level", out.level, Need::optional, log_level());
}

void read_checkpoint(Section section, CheckpointConfig& out) {
  section.read("path", out.path, Need::required, detail::path());
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// What a libpq connection string names, as libpq itself parses it (keyword=value pairs or a
// postgresql:// URI).
struct ConnectionParts {
  std::string text;
  std::map<std::string, std::string> values;  // the keywords set in it
};
Section::Parse<ConnectionParts> libpq_connection() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<ConnectionParts> {
    auto text = detail::string_value()(value, why);
    if (!text) return std::nullopt;
    char* error = nullptr;
    PQconninfoOption* options = PQconninfoParse(text->c_str(), &error);
    if (options == nullptr) {
      std::string message = error != nullptr ? error : "out of memory";
      PQfreemem(error);
      while (!message.empty() && message.back() == '\n') message.pop_back();
      why = fmt::format("not a libpq connection string: {}", message);
      return std::nullopt;
    }
    ConnectionParts parts{.text = *text, .values = {}};
    for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
      if (option->val != nullptr) parts.values.emplace(option->keyword, option->val);
    }
    PQconninfoFree(options);
    if (parts.values.contains("password")) {
      why = "holds a password: never write it in the configuration; put it in password_file (mode 0600) or a "
            "systemd credential";
      return std::nullopt;
    }
    return parts;
  };
}

// libpq's host list ("a,b"): every one on this machine (a socket directory, loopback, or none: the
// default socket).
bool only_this_machine(const std::string& hosts) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = hosts.find(',', start);
    const std::string host = hosts.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!host.empty() && host.front() != '/' && !is_loopback(host)) return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

void read_postgresql(Section section, PostgresConfig& out, const LoadContext& context) {
  std::optional<ConnectionParts> connection;
  section.read("connection", connection, Need::optional, libpq_connection());
  if (connection) out.connection = connection->text;
  const bool parts_set = section.has("host") || section.has("port") || section.has("database") || section.has("user");
  if (section.has("connection") && parts_set) {
    section.reject("connection", "set either connection or host, port, database and user, not both");
  }
  const Need part = section.has("connection") ? Need::optional : Need::required;
  section.read("host", out.host, part, detail::string_value());
  section.read("port", out.port, Need::optional, detail::integer(1, kMaxPort));
  section.read("database", out.database, part, detail::string_value());
  section.read("user", out.user, part, detail::string_value());
  section.read("password_file", out.password_file, Need::optional,
               secret_path(context, "merchant.postgresql.password_file"));
  if (context.secrets == Secrets::check && !out.password_file.empty()) {
    check_secret_file(section, "password_file", out.password_file);
  }

  section.read("sslmode", out.sslmode, Need::optional,
               detail::one_of({"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}));
  const auto set_in_connection = [&](const char* keyword) {
    return connection && connection->values.contains(keyword);
  };
  if (!out.sslmode.empty() && set_in_connection("sslmode")) {
    section.reject("sslmode", "the connection string sets sslmode too: set it once");
  }
  if (out.sslmode.empty() && !set_in_connection("sslmode")) {
    const std::string hosts = connection ? (connection->values.contains("host") ? connection->values.at("host")
                                                                                : connection->values["hostaddr"])
                                         : out.host;
    // Over the network the server's certificate must name it, or anyone on the way can pose as it.
    out.sslmode = only_this_machine(hosts) ? "prefer" : "verify-full";
  }
  section.read("sslrootcert", out.sslrootcert, Need::optional, detail::path());
  if (!out.sslrootcert.empty() && set_in_connection("sslrootcert")) {
    section.reject("sslrootcert", "the connection string sets sslrootcert too: set it once");
  } else if (!out.sslrootcert.empty() && ::access(out.sslrootcert.c_str(), R_OK) != 0) {
    section.reject("sslrootcert", fmt::format("cannot read {}: {}", out.sslrootcert.string(), std::strerror(errno)));
  }

  // PostgreSQL truncates identifiers at 63 bytes.
  section.read("source_schema", out.source_schema, Need::optional, detail::sql_identifier(63));
  section.read("result_schema", out.result_schema, Need::optional, detail::sql_identifier(63));
  if (out.result_schema == out.source_schema) {
    section.reject("result_schema", fmt::format("'{}' is source_schema too: the daemon owns a schema of its own for "
                                                "the result tables (README: Using PostgreSQL)",
                                                out.result_schema));
  }
  section.read("statement_timeout", out.statement_timeout, Need::optional, detail::duration(100ms, 1h));
}

void read_merchant(Section section, MerchantConfig& out, const LoadContext& context) {
  std::string driver = "sqlite";
  section.read("driver", driver, Need::optional, detail::one_of({"sqlite", "postgresql"}));
  out.driver = driver == "postgresql" ? MerchantDriver::postgresql : MerchantDriver::sqlite;
  // The section of the driver chosen; the other one is a mistake worth naming, not an unknown key.
  const std::string_view other = out.driver == MerchantDriver::sqlite ? "postgresql" : "sqlite";
  bool ignored = false;
  section.read(other, ignored, Need::optional, rejected(fmt::format("merchant.driver is {}: remove this section", driver)));
  if (out.driver == MerchantDriver::sqlite) {
    Section sqlite = section.section("sqlite", Need::required);
    sqlite.read("path", out.sqlite.path, Need::required, detail::path());
    sqlite.read("busy_timeout", out.sqlite.busy_timeout, Need::optional, detail::duration(0ms, 10min));
  } else {
    read_postgresql(section.section("postgresql", Need::required), out.postgresql, context);
  }
  section.read("manage_result_tables", out.manage_result_tables, Need::optional, detail::boolean());
  section.read("result_table_prefix", out.result_table_prefix, Need::optional, detail::sql_identifier(40));
  section.read("look_back", out.look_back, Need::optional, detail::duration(0ms, 7 * 24h));
  section.read("max_clock_skew", out.max_clock_skew, Need::optional, detail::duration(0ms, 24h));
  section.read("timezone", out.timezone, Need::optional, time_zone_name());
  section.read("batch_size", out.batch_size, Need::optional, detail::integer(1, 10'000));
  section.read("reconcile_interval", out.reconcile_interval, Need::optional, detail::duration(0ms, 7 * 24h));
}

void read_api(Section section, ApiConfig& out, const LoadContext& context) {
  const bool check_secrets = context.secrets == Secrets::check;
  section.read("base_url", out.base_url, Need::required, detail::string_value());
  section.read("allow_plain_http", out.allow_plain_http, Need::optional, detail::boolean());
  section.read("version", out.version, Need::optional, detail::one_of({"2025-07", "2026-01", "2026-07"}));
  // Exactly one way to authenticate: a personal access token, or OAuth.
  const bool oauth = section.has("oauth");
  section.read("token_file", out.token_file, oauth ? Need::optional : Need::required,
               secret_path(context, "api.token_file"));
  if (oauth && !out.token_file.empty()) section.reject("token_file", "set either token_file or oauth, not both");
  if (oauth) {
    OAuthConfig config;
    Section o = section.section("oauth");
    o.read("auth_url", config.auth_url, Need::required, detail::string_value());
    o.read("client_id", config.client_id, Need::required, detail::string_value());
    o.read("client_secret_file", config.client_secret_file, Need::required,
           secret_path(context, "api.oauth.client_secret_file"));
    o.read("redirect_uri", config.redirect_uri, Need::optional, detail::string_value());
    o.read("scopes", config.scopes, Need::optional, detail::string_list());
    if (!config.auth_url.empty() && config.auth_url.rfind("https://", 0) != 0 &&
        !(config.auth_url.rfind("http://", 0) == 0 && out.allow_plain_http)) {
      o.reject("auth_url", "must be an https:// URL (http:// only with api.allow_plain_http)");
    }
    if (config.redirect_uri.rfind("http://127.0.0.1:", 0) != 0 && config.redirect_uri.rfind("http://localhost:", 0) != 0) {
      o.reject("redirect_uri", "must be a loopback http://127.0.0.1:PORT/... or http://localhost:PORT/... address, "
                               "where 'fulfillsyncd auth login' listens for the callback");
    }
    if (check_secrets && !config.client_secret_file.empty()) {
      check_secret_file(o, "client_secret_file", config.client_secret_file);
    }
    out.oauth = std::move(config);
  }
  section.read("ca_file", out.ca_file, Need::optional, detail::path());
  section.read("channel_id", out.channel_id, Need::optional, detail::integer(1, INT32_MAX));
  section.read("requests_per_minute", out.requests_per_minute, Need::optional, detail::integer(1, 1'000'000));
  section.read("connect_timeout", out.connect_timeout, Need::optional, detail::duration(100ms, 5min));
  section.read("request_timeout", out.request_timeout, Need::optional, detail::duration(100ms, 10min));
  section.read("pool_size", out.pool_size, Need::optional, detail::integer(1, 64));
  {
    Section retry = section.section("retry");
    retry.read("base", out.retry.base, Need::optional, detail::duration(1ms, 1min));
    retry.read("cap", out.retry.cap, Need::optional, detail::duration(1ms, 1h));
    retry.read("attempts", out.retry.attempts, Need::optional, detail::integer(1, 100));
    if (out.retry.cap < out.retry.base) retry.reject("cap", "must not be shorter than api.retry.base");
  }

  if (!out.base_url.empty()) {
    const bool https = out.base_url.rfind("https://", 0) == 0;
    const bool http = out.base_url.rfind("http://", 0) == 0;
    if (!https && !http) {
      section.reject("base_url", fmt::format("'{}' is not an http:// or https:// URL", out.base_url));
    } else if (http && !out.allow_plain_http) {
      section.reject("base_url", "plain http:// sends the token unencrypted; use https://, or set "
                                 "api.allow_plain_http: true for a local sandbox");
    }
  }
  if (check_secrets && !out.token_file.empty()) check_secret_file(section, "token_file", out.token_file);
}

void read_job(Section section, JobConfig& out) {
  section.read("enabled", out.enabled, Need::optional, detail::boolean());
  section.read("interval", out.interval, Need::optional, detail::duration(10ms, 24h));
  section.read("batch_size", out.batch_size, Need::optional, detail::integer(1, 1'000));
  section.read("concurrency", out.concurrency, Need::optional, detail::integer(1, 64));
}

// `windowed`: the job walks windows of changes (pull_shipments), so `overlap` and `timelines` apply.
void read_pull_job(Section section, PullJobConfig& out, int max_page_size, bool windowed) {
  section.read("enabled", out.enabled, Need::optional, detail::boolean());
  section.read("interval", out.interval, Need::optional, detail::duration(10ms, 24h));
  section.read("page_size", out.page_size, Need::optional, detail::integer(1, max_page_size));
  if (windowed) {
    section.read("overlap", out.overlap, Need::optional, detail::duration(0ms, 7 * 24h));
    section.read("timelines", out.timelines, Need::optional, detail::boolean());
  }
}

void read_tracking_marks(Section section, TrackingMarksConfig& out) {
  std::string mode;
  section.read("mode", mode, Need::optional, detail::one_of({"after_write", "acknowledged", "never"}));
  if (mode == "acknowledged") out.mode = TrackingMarkMode::acknowledged;
  if (mode == "never") out.mode = TrackingMarkMode::never;
  section.read("interval", out.interval, Need::optional, detail::duration(10ms, 24h));
  section.read("batch_size", out.batch_size, Need::optional, detail::integer(1, 1'000));
  section.read("batch_wait", out.batch_wait, Need::optional, detail::duration(0ms, 24h));
  section.read("sweep_interval", out.sweep_interval, Need::optional, detail::duration(1min, 7 * 24h));
}

void read_sync(Section section, SyncConfig& out) {
  section.read("orders_since", out.orders_since, Need::optional, detail::timestamp());
  section.read("progress_interval", out.progress_interval, Need::optional, detail::duration(1s, 1h));
  Section jobs = section.section("jobs");
  read_job(jobs.section("push_orders"), out.push_orders);
  read_job(jobs.section("push_cancels"), out.push_cancels);
  read_job(jobs.section("push_returns"), out.push_returns);
  read_job(jobs.section("push_products"), out.push_products);
  read_pull_job(jobs.section("pull_shipments"), out.pull_shipments, 250, true);
  read_tracking_marks(jobs.section("mark_tracking"), out.mark_tracking);
  read_pull_job(jobs.section("pull_returns"), out.pull_returns, 100, false);
  {
    Section lots = jobs.section("pull_lots");
    lots.read("enabled", out.pull_lots.enabled, Need::optional, detail::boolean());
    lots.read("interval", out.pull_lots.interval, Need::optional, detail::duration(10ms, 7 * 24h));
  }
  {
    Section stock = jobs.section("pull_stock");
    stock.read("enabled", out.pull_stock.enabled, Need::optional, detail::boolean());
    stock.read("interval", out.pull_stock.interval, Need::optional, detail::duration(10ms, 7 * 24h));
    stock.read("page_size", out.pull_stock.page_size, Need::optional, detail::integer(1, 250));
  }
}

// basic_auth_users: a mapping of user names to bcrypt hashes, as the exporters' web config has it.
Section::Parse<std::map<std::string, std::string>> bcrypt_users() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<std::map<std::string, std::string>> {
    if (!value.IsMap()) {
      why = "expected a mapping of user names to bcrypt hashes (e.g. prometheus: $2y$10$...)";
      return std::nullopt;
    }
    std::map<std::string, std::string> users;
    for (const auto& entry : value) {
      const std::string user = entry.first.as<std::string>("");
      const std::string hash = entry.second.IsScalar() ? entry.second.Scalar() : "";
      if (user.empty() || user.find(':') != std::string::npos) {
        why = fmt::format("'{}' is not a user name (not empty, no ':')", user);
        return std::nullopt;
      }
      if (hash.rfind("$2a$", 0) != 0 && hash.rfind("$2b$", 0) != 0 && hash.rfind("$2y$", 0) != 0) {
        why = fmt::format("the password of '{}' is not a bcrypt hash ($2y$...); make one with "
                          "'htpasswd -nBC 10 \"\" | tr -d :' ",
                          user);
        return std::nullopt;
      }
      users.emplace(user, hash);
    }
    return users;
  };
}

void read_metrics(Section section, MetricsConfig& out) {
  section.read("enabled", out.enabled, Need::optional, detail::boolean());
  std::optional<Endpoint> listen;
  section.read("listen", listen, Need::optional, endpoint());
  if (listen) {
    out.host = listen->host;
    out.port = listen->port;
  }
  section.read("header_read_timeout", out.header_read_timeout, Need::optional, detail::duration(100ms, 5min));
  section.read("idle_timeout", out.idle_timeout, Need::optional, detail::duration(100ms, 1h));
  if (section.has("tls_server_config")) {
    Section tls = section.section("tls_server_config");
    MetricsTlsConfig& config = out.tls.emplace();
    tls.read("cert_file", config.cert_file, Need::required, detail::path());
    tls.read("key_file", config.key_file, Need::required, detail::path());
    tls.read("client_ca_file", config.client_ca_file, Need::optional, detail::path());
    std::string client_auth = config.client_ca_file.empty() ? "NoClientCert" : "RequireAndVerifyClientCert";
    tls.read("client_auth_type", client_auth, Need::optional,
             detail::one_of({"NoClientCert", "RequireAndVerifyClientCert"}));
    if (client_auth == "NoClientCert") {
      config.client_ca_file.clear();
    } else if (config.client_ca_file.empty()) {
      tls.reject("client_auth_type", "RequireAndVerifyClientCert needs client_ca_file");
    }
    std::string min_version = "TLS12";
    tls.read("min_version", min_version, Need::optional, detail::one_of({"TLS12", "TLS13"}));
    if (min_version == "TLS13") config.min_version = MetricsTlsConfig::MinVersion::tls13;
  }
  section.read("basic_auth_users", out.basic_auth_users, Need::optional, bcrypt_users());
  section.read("insecure", out.insecure, Need::optional, detail::boolean());
  if (out.enabled && !is_loopback(out.host) && !out.tls && out.basic_auth_users.empty() && !out.insecure) {
    section.reject("listen", fmt::format(
                                 "{} is not loopback, and the endpoint has neither TLS nor basic auth: anyone who can "
                                 "reach the address reads the metrics (merchant and job details) unencrypted and "
                                 "unauthenticated; set metrics.tls_server_config and metrics.basic_auth_users, or "
                                 "metrics.insecure: true if the network is trusted",
                                 out.host));
  }
}

Config parse(const YAML::Node& root, std::string_view name, Secrets secrets, detail::Diagnostics& diagnostics) {
  Config config;
  config.source = std::string(name);
  const LoadContext context{config.source, secrets, config.notes};
  Section top(root, "", YAML::Mark(), diagnostics);
  read_service(top.section("service"), config.service);
  read_logging(top.section("logging"), config.logging);
  read_checkpoint(top.section("checkpoint", Need::required), config.checkpoint);
  read_merchant(top.section("merchant", Need::required), config.merchant, context);
  read_api(top.section("api", Need::required), config.api, context);
  read_sync(top.section("sync"), config.sync);
  read_metrics(top.section("metrics"), config.metrics);
  return config;
}

Config load(std::string_view yaml, std::string_view name, Secrets secrets) {
  detail::Diagnostics diagnostics{std::string(name)};
  YAML::Node root;
  const auto open_quote = detail::first_open_quote(yaml);
  const auto at = [](const YAML::Mark& mark) { return fmt::format("{}:{}", mark.line + 1, mark.column + 1); };
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::DeepRecursion& e) {
    diagnostics.error(e.mark, "", fmt::format("nested too deeply: lists or mappings {} levels inside one another",
                                              e.depth()));
    throw ConfigError(diagnostics.take());
  } catch (const YAML::Exception& e) {
    // Where the parser gave up is a consequence; an open quote before it is the likely cause.
    if (open_quote) {
      diagnostics.error(open_quote->mark, "",
                        fmt::format("this quote is not closed on its line (the YAML parser then stopped at {}: {})",
                                    at(e.mark), e.msg));
    } else {
      diagnostics.error(e.mark, "", e.msg);
    }
    throw ConfigError(diagnostics.take());
  }
  if (!root || root.IsNull()) {
    diagnostics.error(YAML::Mark::null_mark(), "", "the file holds no configuration (it is empty, or only comments)");
    throw ConfigError(diagnostics.take());
  }
  // yaml-cpp takes a quote left open at the end of the file as closed there.
  if (open_quote && !open_quote->closed_later) {
    diagnostics.error(open_quote->mark, "", "this quote is never closed");
    throw ConfigError(diagnostics.take());
  }
  Config config = parse(root, name, secrets, diagnostics);
  if (!diagnostics.empty()) throw ConfigError(diagnostics.take());
  return config;
}

std::string summary(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const auto& diagnostic : diagnostics) {
    if (!text.empty()) text += '\n';
    text += diagnostic.to_string();
  }
  return text;
}

}  // namespace

std::optional<std::string> secret_file_problem(const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return fmt::format("cannot read {}: {}", file.string(), std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fmt::format("{} is not a regular file", file.string());
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return fmt::format("{} is accessible to group or others (mode {:04o}); restrict it with 'chmod 600 {}', or pass "
                       "it with systemd's LoadCredential= (see README)",
                       file.string(), st.st_mode & 07777, file.string());
  }
  std::ifstream in(file);
  if (!in) return fmt::format("cannot read {}: {}", file.string(), std::strerror(errno));
  std::string first_line;
  std::getline(in, first_line);
  if (first_line.find_first_not_of(" \t\r") == std::string::npos) {
    return fmt::format("{} is empty: write the secret on its first line", file.string());
  }
  return std::nullopt;
}

std::string Diagnostic::to_string() const {
  std::string text = file;
  if (line > 0) text += fmt::format(":{}:{}", line, column);
  text += ": ";
  if (!key_path.empty()) text += key_path + ": ";
  return text + message;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(summary(diagnostics)), diagnostics_(std::move(diagnostics)) {}

Config load_file(const std::filesystem::path& path, Secrets secrets) {
  // A directory opens as a stream that reads as empty: every required key would seem missing.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    throw ConfigError({Diagnostic{path.string(), 0, 0, "",
                                  fmt::format("is a directory, not a configuration file (e.g. {})",
                                              (path / "fulfillsync.yaml").string())}});
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError({Diagnostic{path.string(), 0, 0, "", fmt::format("cannot read: {}", std::strerror(errno))}});
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load(text.str(), path.string(), secrets);
}

Config load_string(std::string_view yaml, std::string_view name, Secrets secrets) {
  return load(yaml, name, secrets);
}

}  // namespace fulfillsync::config
