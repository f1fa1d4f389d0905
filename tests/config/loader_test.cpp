#include "fulfillsync/config/loader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::config {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ConfigLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    token = dir / "api-token";
    testing::write_file(token, "secret\n");
    chmod(token.c_str(), 0600);
  }

  // A complete, valid file; `extra` is appended as further top-level YAML.
  std::string valid(std::string_view extra = "") const {
    return "checkpoint:\n"
           "  path: /var/lib/fulfillsync/checkpoint.db\n"
           "merchant:\n"
           "  sqlite:\n"
           "    path: /var/lib/shop/shop.db\n"
           "api:\n"
           "  base_url: https://api.example.com\n"
           "  token_file: " +
           token.string() + "\n" + std::string(extra);
  }

  // valid() with a PostgreSQL merchant database: driver postgresql and `postgresql_lines` (each
  // indented under merchant.postgresql) in place of the SQLite section.
  std::string valid_postgresql(std::string_view postgresql_lines =
                                   "host: db.shop.example\ndatabase: shop\nuser: fulfillsync\n") const {
    std::string section;
    std::size_t start = 0;
    for (std::size_t end; (end = postgresql_lines.find('\n', start)) != std::string_view::npos; start = end + 1) {
      section += fmt::format("    {}\n", postgresql_lines.substr(start, end - start));
    }
    std::string yaml = valid();
    const std::string sqlite = "  sqlite:\n    path: /var/lib/shop/shop.db\n";
    yaml.replace(yaml.find(sqlite), sqlite.size(), "  driver: postgresql\n  postgresql:\n" + section);
    return yaml;
  }

  // The diagnostics of a file that must not load.
  static std::vector<std::string> errors_of(std::string_view yaml) {
    try {
      load_string(yaml, "test.yaml");
    } catch (const ConfigError& error) {
      std::vector<std::string> lines;
      for (const auto& diagnostic : error.diagnostics()) lines.push_back(diagnostic.to_string());
      return lines;
    }
    ADD_FAILURE() << "the configuration loaded:\n" << yaml;
    return {};
  }

  testing::TempDir dir;
  std::filesystem::path token;
};

TEST_F(ConfigLoaderTest, ValidFileWithDefaults) {
  const Config config = load_string(valid(), "test.yaml");
  EXPECT_EQ(config.checkpoint.path, "/var/lib/fulfillsync/checkpoint.db");
  EXPECT_EQ(config.merchant.sqlite.path, "/var/lib/shop/shop.db");
  EXPECT_EQ(config.merchant.sqlite.busy_timeout, 5s);
  EXPECT_EQ(config.merchant.result_table_prefix, "fulfillsync_");
  EXPECT_EQ(config.merchant.look_back, 5min);
  EXPECT_EQ(config.merchant.max_clock_skew, 5min);
  EXPECT_EQ(config.merchant.timezone, "UTC");
  EXPECT_EQ(config.merchant.batch_size, 250);
  EXPECT_EQ(config.api.version, "2026-07");
  EXPECT_EQ(config.api.requests_per_minute, 150);
  EXPECT_EQ(config.api.channel_id, std::nullopt);
  EXPECT_EQ(config.service.shutdown_timeout, 30s);
  EXPECT_EQ(config.logging.level, spdlog::level::info);
  EXPECT_EQ(config.metrics.host, "127.0.0.1");  // loopback unless configured
  EXPECT_EQ(config.metrics.port, 9464);
}

TEST_F(ConfigLoaderTest, EveryKeySet) {
  const Config config = load_string(
      "service:\n"
      "  shutdown_timeout: 1m30s\n"
      "logging:\n"
      "  level: debug\n"
      "checkpoint:\n"
      "  path: state/checkpoint.db\n"
      "merchant:\n"
      "  driver: sqlite\n"
      "  sqlite:\n"
      "    path: shop.db\n"
      "    busy_timeout: 250ms\n"
      "  manage_result_tables: false\n"
      "  result_table_prefix: fs_\n"
      "  look_back: 30s\n"
      "  max_clock_skew: 1m30s\n"
      "  timezone: Europe/Berlin\n"
      "  batch_size: 50\n"
      "api:\n"
      "  base_url: http://127.0.0.1:8080\n"
      "  allow_plain_http: true\n"
      "  version: 2025-07\n"
      "  token_file: " + token.string() + "\n"
      "  ca_file: /etc/ssl/provider.pem\n"
      "  channel_id: 42\n"
      "  requests_per_minute: 120\n"
      "  connect_timeout: 5s\n"
      "  request_timeout: 1m\n"
      "  pool_size: 8\n"
      "  retry:\n"
      "    base: 100ms\n"
      "    cap: 10s\n"
      "    attempts: 3\n"
      "sync:\n"
      "  orders_since: 2026-03-01T02:00:00+02:00\n"
      "  progress_interval: 5s\n"
      "  jobs:\n"
      "    push_orders: {enabled: true, interval: 2s, batch_size: 10, concurrency: 2}\n"
      "    push_cancels: {enabled: false}\n"
      "metrics:\n"
      "  enabled: true\n"
      "  listen: '[::1]:0'\n",
      "test.yaml");
  EXPECT_EQ(config.service.shutdown_timeout, 90s);
  EXPECT_EQ(config.logging.level, spdlog::level::debug);
  EXPECT_EQ(config.merchant.sqlite.busy_timeout, 250ms);
  EXPECT_FALSE(config.merchant.manage_result_tables);
  EXPECT_EQ(config.merchant.result_table_prefix, "fs_");
  EXPECT_EQ(config.merchant.look_back, 30s);
  EXPECT_EQ(config.merchant.max_clock_skew, 90s);
  EXPECT_EQ(config.merchant.timezone, "Europe/Berlin");
  EXPECT_EQ(config.merchant.batch_size, 50);
  EXPECT_EQ(config.api.version, "2025-07");
  EXPECT_EQ(config.api.ca_file, std::filesystem::path("/etc/ssl/provider.pem"));
  EXPECT_EQ(config.api.channel_id, 42);
  EXPECT_EQ(config.api.requests_per_minute, 120);
  EXPECT_EQ(config.api.request_timeout, 60s);
  EXPECT_EQ(config.api.pool_size, 8);
  EXPECT_EQ(config.api.retry.base, 100ms);
  EXPECT_EQ(config.api.retry.cap, 10s);
  EXPECT_EQ(config.api.retry.attempts, 3);
  EXPECT_EQ(config.sync.orders_since, "2026-03-01T00:00:00.000Z");  // normalised to UTC
  EXPECT_EQ(config.sync.progress_interval, 5s);
  EXPECT_EQ(config.sync.push_orders.interval, 2s);
  EXPECT_EQ(config.sync.push_orders.batch_size, 10);
  EXPECT_EQ(config.sync.push_orders.concurrency, 2);
  EXPECT_FALSE(config.sync.push_cancels.enabled);
  EXPECT_TRUE(config.sync.push_returns.enabled);
  EXPECT_EQ(config.metrics.host, "::1");
  EXPECT_EQ(config.metrics.port, 0);
}

TEST_F(ConfigLoaderTest, PullJobDefaults) {
  const SyncConfig sync = load_string(valid(), "test.yaml").sync;
  EXPECT_TRUE(sync.pull_shipments.enabled);
  EXPECT_EQ(sync.pull_shipments.interval, 2min);
  EXPECT_EQ(sync.pull_shipments.page_size, 250);
  EXPECT_EQ(sync.pull_shipments.overlap, 1min);
  EXPECT_FALSE(sync.pull_shipments.timelines);
  EXPECT_EQ(sync.mark_tracking.mode, TrackingMarkMode::after_write);
  EXPECT_EQ(sync.mark_tracking.interval, 10s);
  EXPECT_EQ(sync.mark_tracking.batch_size, 100);
  EXPECT_EQ(sync.mark_tracking.batch_wait, 5min);
  EXPECT_EQ(sync.mark_tracking.sweep_interval, 30min);
  EXPECT_TRUE(sync.pull_returns.enabled);
  EXPECT_EQ(sync.pull_returns.interval, 5min);
  EXPECT_EQ(sync.pull_returns.page_size, 100);
  EXPECT_TRUE(sync.pull_lots.enabled);
  EXPECT_EQ(sync.pull_lots.interval, 15min);
  EXPECT_TRUE(sync.pull_stock.enabled);
  EXPECT_EQ(sync.pull_stock.interval, 15min);
  EXPECT_EQ(sync.pull_stock.page_size, 250);
  // An empty jobs section changes nothing.
  EXPECT_EQ(load_string(valid("sync:\n  jobs:\n    pull_shipments: {}\n    mark_tracking: {}\n"), "test.yaml").sync,
            sync);
}

TEST_F(ConfigLoaderTest, PullJobKeysSet) {
  const SyncConfig sync = load_string(valid("sync:\n"
                                            "  jobs:\n"
                                            "    pull_shipments:\n"
                                            "      enabled: false\n"
                                            "      interval: 30s\n"
                                            "      page_size: 50\n"
                                            "      overlap: 5m\n"
                                            "      timelines: true\n"
                                            "    mark_tracking:\n"
                                            "      mode: acknowledged\n"
                                            "      interval: 1s\n"
                                            "      batch_size: 1000\n"
                                            "      batch_wait: 0s\n"
                                            "      sweep_interval: 7d\n"
                                            "    pull_returns:\n"
                                            "      enabled: false\n"
                                            "      interval: 1h\n"
                                            "      page_size: 1\n"
                                            "    pull_lots:\n"
                                            "      enabled: false\n"
                                            "      interval: 1h30m\n"),
                                      "test.yaml")
                              .sync;
  EXPECT_FALSE(sync.pull_shipments.enabled);
  EXPECT_EQ(sync.pull_shipments.interval, 30s);
  EXPECT_EQ(sync.pull_shipments.page_size, 50);
  EXPECT_EQ(sync.pull_shipments.overlap, 5min);
  EXPECT_TRUE(sync.pull_shipments.timelines);
  EXPECT_EQ(sync.mark_tracking.mode, TrackingMarkMode::acknowledged);
  EXPECT_EQ(sync.mark_tracking.interval, 1s);
  EXPECT_EQ(sync.mark_tracking.batch_size, 1000);
  EXPECT_EQ(sync.mark_tracking.batch_wait, 0s);
  EXPECT_EQ(sync.mark_tracking.sweep_interval, 7 * 24h);
  EXPECT_FALSE(sync.pull_returns.enabled);
  EXPECT_EQ(sync.pull_returns.interval, 1h);
  EXPECT_EQ(sync.pull_returns.page_size, 1);
  EXPECT_FALSE(sync.pull_lots.enabled);
  EXPECT_EQ(sync.pull_lots.interval, 90min);
  // The push jobs keep their own defaults.
  EXPECT_TRUE(sync.push_orders.enabled);
  EXPECT_EQ(sync.push_orders.batch_size, 100);
}

TEST_F(ConfigLoaderTest, TrackingMarkModes) {
  const auto mode_of = [&](std::string_view mode) {
    const std::string yaml = valid("sync:\n  jobs:\n    mark_tracking:\n      mode: " + std::string(mode) + "\n");
    return load_string(yaml, "test.yaml").sync.mark_tracking.mode;
  };
  EXPECT_EQ(mode_of("after_write"), TrackingMarkMode::after_write);
  EXPECT_EQ(mode_of("acknowledged"), TrackingMarkMode::acknowledged);
  EXPECT_EQ(mode_of("never"), TrackingMarkMode::never);
  EXPECT_THAT(errors_of(valid("sync:\n  jobs:\n    mark_tracking:\n      mode: always\n")),
              ElementsAre("test.yaml:12:13: sync.jobs.mark_tracking.mode: 'always' is not one of: after_write, "
                          "acknowledged, never"));
  EXPECT_THAT(errors_of(valid("sync:\n  jobs:\n    mark_tracking:\n      mode: [never]\n")),
              ElementsAre(HasSubstr("test.yaml:12:13: sync.jobs.mark_tracking.mode: expected a string")));
}

TEST_F(ConfigLoaderTest, PullJobValuesAreRangeChecked) {
  EXPECT_THAT(errors_of(valid("sync:\n"
                              "  jobs:\n"
                              "    pull_shipments:\n"
                              "      interval: 5ms\n"
                              "      page_size: 251\n"
                              "      overlap: 8d\n"
                              "      timelines: sometimes\n"
                              "    mark_tracking:\n"
                              "      interval: 2d\n"
                              "      batch_size: 1001\n"
                              "      sweep_interval: 30s\n"
                              "    pull_returns:\n"
                              "      page_size: 101\n"
                              "    pull_lots:\n"
                              "      interval: 8d\n")),
              ElementsAre("test.yaml:12:17: sync.jobs.pull_shipments.interval: 5ms is out of range: allowed 10ms to 1d",
                          "test.yaml:13:18: sync.jobs.pull_shipments.page_size: 251 is out of range: allowed 1 to 250",
                          "test.yaml:14:16: sync.jobs.pull_shipments.overlap: 8d is out of range: allowed 0s to 7d",
                          "test.yaml:15:18: sync.jobs.pull_shipments.timelines: expected true or false, found "
                          "'sometimes'",
                          "test.yaml:17:17: sync.jobs.mark_tracking.interval: 2d is out of range: allowed 10ms to 1d",
                          "test.yaml:18:19: sync.jobs.mark_tracking.batch_size: 1001 is out of range: allowed 1 to "
                          "1000",
                          "test.yaml:19:23: sync.jobs.mark_tracking.sweep_interval: 30s is out of range: allowed 1m "
                          "to 7d",
                          "test.yaml:21:18: sync.jobs.pull_returns.page_size: 101 is out of range: allowed 1 to 100",
                          "test.yaml:23:17: sync.jobs.pull_lots.interval: 8d is out of range: allowed 10ms to 7d"));
  EXPECT_THAT(errors_of(valid("sync:\n"
                              "  jobs:\n"
                              "    pull_shipments: {page_size: 0}\n"
                              "    mark_tracking: {batch_size: 0, sweep_interval: 8d}\n"
                              "    pull_returns: {page_size: 0}\n")),
              ElementsAre(HasSubstr("sync.jobs.pull_shipments.page_size: 0 is out of range: allowed 1 to 250"),
                          HasSubstr("sync.jobs.mark_tracking.batch_size: 0 is out of range: allowed 1 to 1000"),
                          HasSubstr("sync.jobs.mark_tracking.sweep_interval: 8d is out of range: allowed 1m to 7d"),
                          HasSubstr("sync.jobs.pull_returns.page_size: 0 is out of range: allowed 1 to 100")));
  // The bounds themselves are allowed.
  const SyncConfig sync = load_string(valid("sync:\n"
                                            "  jobs:\n"
                                            "    pull_shipments: {page_size: 250, overlap: 0s}\n"
                                            "    mark_tracking: {batch_size: 1, sweep_interval: 1m}\n"
                                            "    pull_returns: {page_size: 100}\n"),
                                      "test.yaml")
                              .sync;
  EXPECT_EQ(sync.pull_shipments.page_size, 250);
  EXPECT_EQ(sync.pull_shipments.overlap, 0s);
  EXPECT_EQ(sync.mark_tracking.batch_size, 1);
  EXPECT_EQ(sync.mark_tracking.sweep_interval, 1min);
  EXPECT_EQ(sync.pull_returns.page_size, 100);
}

TEST_F(ConfigLoaderTest, WindowKeysAreForPullShipmentsOnly) {
  EXPECT_THAT(errors_of(valid("sync:\n"
                              "  jobs:\n"
                              "    pull_returns:\n"
                              "      overlap: 1m\n"
                              "      timelines: true\n")),
              ElementsAre("test.yaml:12:7: sync.jobs.pull_returns.overlap: unknown key 'overlap'",
                          "test.yaml:13:7: sync.jobs.pull_returns.timelines: unknown key 'timelines'"));
  EXPECT_THAT(errors_of(valid("sync:\n  jobs:\n    pull_lots:\n      page_size: 10\n")),
              ElementsAre("test.yaml:12:7: sync.jobs.pull_lots.page_size: unknown key 'page_size'"));
}

TEST_F(ConfigLoaderTest, StartingPointMustBeADateTime) {
  std::string yaml = valid();
  yaml += "sync:\n  orders_since: last tuesday\n  jobs:\n    push_orders: {concurrency: 0}\n";
  EXPECT_THAT(errors_of(yaml),
              ElementsAre(HasSubstr("sync.orders_since: 'last tuesday' is not a date-time"),
                          HasSubstr("sync.jobs.push_orders.concurrency: 0 is out of range: allowed 1 to 64")));
}

TEST_F(ConfigLoaderTest, TheShippedExampleAndDemoFilesAreValid) {
  setenv("CREDENTIALS_DIRECTORY", dir.path().c_str(), 1);
  const Config example = load_file(testing::source_path("config/fulfillsync.example.yaml"));
  unsetenv("CREDENTIALS_DIRECTORY");
  EXPECT_EQ(example.api.token_file, token);
  // The demos' token and password files are created by ./dev demo; only syntax and keys are checked here.
  for (const char* demo : {"config/demo.yaml", "config/demo-postgresql.yaml"}) {
    try {
      load_file(testing::source_path(demo));
    } catch (const ConfigError& error) {
      for (const auto& diagnostic : error.diagnostics()) {
        EXPECT_THAT(diagnostic.key_path, ::testing::AnyOf("api.token_file", "merchant.postgresql.password_file"))
            << demo << ": " << diagnostic.message;
      }
    }
  }
}

// Every range the example file documents ("1s to 10m") is the loader's: both ends load, just outside
// them does not. The table is checked against the example both ways, so a range documented anew
// needs a row here.
TEST_F(ConfigLoaderTest, TheExampleDocumentsTheLoadersRanges) {
  struct Range {
    std::string documented;  // as the example's comment writes it
    std::string key;         // a key it applies to
    std::string below, low, high, above;  // below: "" when nothing below `low` is a valid value
    std::string sibling{};   // another key of the same section that `low`/`high` need
  };
  const std::vector<Range> ranges = {
      {"1s to 10m", "service.shutdown_timeout", "999ms", "1s", "10m", "10m1ms"},
      {"0s to 10m", "merchant.sqlite.busy_timeout", "", "0s", "10m", "10m1ms"},
      {"0s to 7d", "merchant.look_back", "", "0s", "7d", "7d1ms"},
      {"0s to 1d", "merchant.max_clock_skew", "", "0s", "1d", "1d1ms"},
      {"1 to 10000", "merchant.batch_size", "0", "1", "10000", "10001"},
      {"1 to 1000000", "api.requests_per_minute", "0", "1", "1000000", "1000001"},
      {"100ms to 5m", "api.connect_timeout", "99ms", "100ms", "5m", "5m1ms"},
      {"100ms to 10m", "api.request_timeout", "99ms", "100ms", "10m", "10m1ms"},
      {"1 to 64", "api.pool_size", "0", "1", "64", "65"},
      {"1ms to 1m", "api.retry.base", "0s", "1ms", "1m", "1m1ms", "cap: 1h"},
      {"1ms to 1h", "api.retry.cap", "0s", "1ms", "1h", "1h1ms", "base: 1ms"},
      {"1 to 100", "api.retry.attempts", "0", "1", "100", "101"},
      {"1s to 1h", "sync.progress_interval", "999ms", "1s", "1h", "1h1ms"},
      {"10ms to 24h", "sync.jobs.push_orders.interval", "9ms", "10ms", "24h", "24h1ms"},
      {"10ms to 24h", "sync.jobs.push_cancels.interval", "9ms", "10ms", "24h", "24h1ms"},
      {"10ms to 24h", "sync.jobs.push_returns.interval", "9ms", "10ms", "24h", "24h1ms"},
      {"10ms to 24h", "sync.jobs.pull_shipments.interval", "9ms", "10ms", "24h", "24h1ms"},
      {"10ms to 24h", "sync.jobs.mark_tracking.interval", "9ms", "10ms", "24h", "24h1ms"},
      {"10ms to 24h", "sync.jobs.pull_returns.interval", "9ms", "10ms", "24h", "24h1ms"},
      {"10ms to 7d", "sync.jobs.pull_lots.interval", "9ms", "10ms", "7d", "7d1ms"},
      {"10ms to 7d", "sync.jobs.pull_stock.interval", "9ms", "10ms", "7d", "7d1ms"},
      {"1 to 250", "sync.jobs.pull_stock.page_size", "0", "1", "250", "251"},
      {"1 to 1000", "sync.jobs.push_orders.batch_size", "0", "1", "1000", "1001"},
      {"1 to 1000", "sync.jobs.mark_tracking.batch_size", "0", "1", "1000", "1001"},
      {"1 to 64", "sync.jobs.push_orders.concurrency", "0", "1", "64", "65"},
      {"0s to 7d", "sync.jobs.pull_shipments.overlap", "", "0s", "7d", "7d1ms"},
      {"1m to 7d", "sync.jobs.mark_tracking.sweep_interval", "59s", "1m", "7d", "7d1ms"},
      {"0s to 24h", "sync.jobs.mark_tracking.batch_wait", "", "0s", "24h", "24h1ms"},
      {"0 to 65535", "metrics.listen", "", "127.0.0.1:0", "127.0.0.1:65535", "127.0.0.1:65536"},
      {"1 to 65535", "merchant.postgresql.port", "0", "1", "65535", "65536"},
      {"100ms to 1h", "merchant.postgresql.statement_timeout", "99ms", "100ms", "1h", "1h1ms"},
  };
  // The file valid() writes with `key: value` (and the row's sibling) added where the key belongs.
  const auto with = [&](const Range& range, const std::string& value) {
    const auto dot = range.key.rfind('.');
    const std::string section = range.key.substr(0, dot), name = range.key.substr(dot + 1);
    std::string yaml = valid();
    const auto insert_before = [&](std::string_view marker, const std::string& lines) {
      yaml.insert(yaml.find(marker), lines);
    };
    if (section == "merchant.postgresql") {
      yaml = valid_postgresql("host: db.shop.example\ndatabase: shop\nuser: fulfillsync\n" + name + ": " + value +
                              "\n");
    } else if (section == "merchant.sqlite") {
      insert_before("api:", "    " + name + ": " + value + "\n");
    } else if (section == "merchant") {
      insert_before("api:", "  " + name + ": " + value + "\n");
    } else if (section == "api") {
      yaml += "  " + name + ": " + value + "\n";
    } else if (section == "api.retry") {
      yaml += "  retry:\n    " + name + ": " + value + (range.sibling.empty() ? "" : "\n    " + range.sibling) + "\n";
    } else {
      std::string indent;
      std::size_t start = 0;
      for (std::size_t end; (end = range.key.find('.', start)) != std::string::npos; start = end + 1) {
        yaml += indent + range.key.substr(start, end - start) + ":\n";
        indent += "  ";
      }
      yaml += indent + name + ": " + value + "\n";
    }
    return yaml;
  };
  for (const Range& range : ranges) {
    SCOPED_TRACE(range.key);
    EXPECT_NO_THROW(load_string(with(range, range.low), "test.yaml"));
    EXPECT_NO_THROW(load_string(with(range, range.high), "test.yaml"));
    EXPECT_THAT(errors_of(with(range, range.above)), ElementsAre(HasSubstr(range.key + ": ")));
    if (!range.below.empty()) {
      EXPECT_THAT(errors_of(with(range, range.below)), ElementsAre(HasSubstr(range.key + ": ")));
    }
  }

  const std::string example = testing::read_file(testing::source_path("config/fulfillsync.example.yaml"));
  const std::regex documented_range(R"((?:^|[^\w.])(\d+[a-z]*) to (\d+[a-z]*)\b)");
  for (auto it = std::sregex_iterator(example.begin(), example.end(), documented_range); it != std::sregex_iterator();
       ++it) {
    const std::string text = (*it)[1].str() + " to " + (*it)[2].str();
    EXPECT_TRUE(std::any_of(ranges.begin(), ranges.end(), [&](const Range& r) { return r.documented == text; }))
        << "the example documents '" << text << "', which no row of this test checks against the loader";
  }
  for (const Range& range : ranges) {
    EXPECT_NE(example.find(range.documented), std::string::npos) << range.key << ": '" << range.documented << "'";
  }
}

TEST_F(ConfigLoaderTest, UnknownKeyIsReportedAtItsPlaceWithASuggestion) {
  EXPECT_THAT(errors_of(valid("service:\n  shutdown_timout: 5s\n")),
              ElementsAre("test.yaml:10:3: service.shutdown_timout: unknown key 'shutdown_timout' "
                          "(did you mean 'shutdown_timeout'?)"));
  EXPECT_THAT(errors_of(valid("webhooks: {}\n")), ElementsAre("test.yaml:9:1: webhooks: unknown key 'webhooks'"));
}

TEST_F(ConfigLoaderTest, WrongTypeIsReportedAtTheValue) {
  EXPECT_THAT(errors_of(valid("metrics:\n  enabled: maybe\n")),
              ElementsAre("test.yaml:10:12: metrics.enabled: expected true or false, found 'maybe'"));
  EXPECT_THAT(errors_of(valid("metrics:\n  enabled: [true]\n")),
              ElementsAre("test.yaml:10:12: metrics.enabled: expected true or false, found a list"));
  EXPECT_THAT(errors_of(valid("service: 30s\n")),
              ElementsAre("test.yaml:9:10: service: expected a mapping of keys, found a scalar"));
  EXPECT_THAT(errors_of(valid("api2:\n")), ElementsAre("test.yaml:9:1: api2: unknown key 'api2' (did you mean 'api'?)"));
}

TEST_F(ConfigLoaderTest, OutOfRangeValuesNameTheRange) {
  EXPECT_THAT(errors_of(valid("service:\n  shutdown_timeout: 1h\n")),
              ElementsAre("test.yaml:10:21: service.shutdown_timeout: 1h is out of range: allowed 1s to 10m"));
  EXPECT_THAT(errors_of(valid("service:\n  shutdown_timeout: 30\n")),
              ElementsAre("test.yaml:10:21: service.shutdown_timeout: '30' is not a duration: write a number with a "
                          "unit, e.g. 500ms, 30s, 5m, 1h"));
  EXPECT_THAT(errors_of(valid("metrics:\n  listen: 127.0.0.1:70000\n")),
              ElementsAre(HasSubstr("test.yaml:10:11: metrics.listen: '127.0.0.1:70000' is not HOST:PORT")));
}

// The metrics endpoint's TLS and basic auth, in the shape of the Prometheus exporters' web config.
TEST_F(ConfigLoaderTest, MetricsEndpointTlsAndBasicAuth) {
  const MetricsConfig metrics = load_string(valid("metrics:\n"
                                                  "  listen: 0.0.0.0:9464\n"
                                                  "  header_read_timeout: 2s\n"
                                                  "  tls_server_config:\n"
                                                  "    cert_file: /etc/fulfillsync/metrics.crt\n"
                                                  "    key_file: /etc/fulfillsync/metrics.key\n"
                                                  "    client_ca_file: /etc/fulfillsync/ca.crt\n"
                                                  "    min_version: TLS13\n"
                                                  "  basic_auth_users:\n"
                                                  "    prometheus: $2y$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012\n"),
                                            "test.yaml")
                                    .metrics;
  EXPECT_EQ(metrics.header_read_timeout, std::chrono::seconds(2));
  EXPECT_EQ(metrics.idle_timeout, std::chrono::seconds(60));
  ASSERT_TRUE(metrics.tls.has_value());
  EXPECT_EQ(metrics.tls->client_ca_file, "/etc/fulfillsync/ca.crt");
  EXPECT_EQ(metrics.tls->min_version, MetricsTlsConfig::MinVersion::tls13);
  EXPECT_EQ(metrics.basic_auth_users.size(), 1U);

  EXPECT_THAT(errors_of(valid("metrics:\n  listen: 192.0.2.7:9464\n")),
              ElementsAre(HasSubstr("metrics.listen: 192.0.2.7 is not loopback, and the endpoint has neither TLS nor "
                                    "basic auth: anyone who can reach the address reads the metrics")));
  EXPECT_NO_THROW(load_string(valid("metrics:\n  listen: 192.0.2.7:9464\n  insecure: true\n"), "test.yaml"));
  EXPECT_NO_THROW(load_string(valid("metrics:\n  listen: '[::1]:9464'\n"), "test.yaml"));
  EXPECT_THAT(errors_of(valid("metrics:\n  basic_auth_users:\n    prometheus: secret\n")),
              ElementsAre(HasSubstr("metrics.basic_auth_users: the password of 'prometheus' is not a bcrypt hash")));
  EXPECT_THAT(errors_of(valid("metrics:\n  tls_server_config:\n    cert_file: a.crt\n    key_file: a.key\n"
                              "    client_auth_type: RequireAndVerifyClientCert\n")),
              ElementsAre(HasSubstr("RequireAndVerifyClientCert needs client_ca_file")));
  EXPECT_THAT(errors_of(valid("metrics:\n  tls_server_config:\n    cert_file: a.crt\n")),
              ElementsAre(HasSubstr("metrics.tls_server_config.key_file")));
}

TEST_F(ConfigLoaderTest, EnumsListWhatIsAllowed) {
  EXPECT_THAT(errors_of(valid("logging:\n  level: loud\n")),
              ElementsAre("test.yaml:10:10: logging.level: 'loud' is not a log level: trace, debug, info, warn, "
                          "error, critical or off"));
}

TEST_F(ConfigLoaderTest, MissingRequiredKeysAreReportedAtTheirParent) {
  const std::string yaml =
      "checkpoint: {}\n"
      "merchant:\n"
      "  sqlite:\n"
      "    busy_timeout: 1s\n";
  EXPECT_THAT(errors_of(yaml), ElementsAre("test.yaml:1:1: api: required key 'api' is missing",
                                           "test.yaml:1:13: checkpoint.path: required key 'path' is missing",
                                           "test.yaml:4:5: merchant.sqlite.path: required key 'path' is missing"));
}

TEST_F(ConfigLoaderTest, EveryErrorIsReportedAtOnce) {
  const std::string yaml =
      "checkpoint:\n"
      "  path: a.db\n"
      "  colour: blue\n"
      "merchant:\n"
      "  sqlite:\n"
      "    path: shop.db\n"
      "    busy_timeout: forever\n"
      "api:\n"
      "  base_url: ftp://example.com\n"
      "  token_file: " + token.string() + "\n"
      "  requests_per_minute: 0\n";
  EXPECT_THAT(errors_of(yaml),
              ElementsAre("test.yaml:3:3: checkpoint.colour: unknown key 'colour'",
                          HasSubstr("test.yaml:7:19: merchant.sqlite.busy_timeout: 'forever' is not a duration"),
                          "test.yaml:9:13: api.base_url: 'ftp://example.com' is not an http:// or https:// URL",
                          "test.yaml:11:24: api.requests_per_minute: 0 is out of range: allowed 1 to 1000000"));
}

// In the order of the file, whatever order the checks run in (the base_url check runs last).
TEST_F(ConfigLoaderTest, ErrorsAreSortedByLine) {
  const std::string yaml =
      "api:\n"
      "  base_url: ftp://example.com\n"
      "  token_file: " + token.string() + "\n"
      "  pool_size: 0\n"
      "checkpoint:\n"
      "  path: a.db\n"
      "merchant:\n"
      "  sqlite:\n"
      "    path: shop.db\n"
      "metrics:\n"
      "  enabled: maybe\n";
  EXPECT_THAT(errors_of(yaml), ElementsAre(HasSubstr("test.yaml:2:13: api.base_url"), HasSubstr("test.yaml:4:14: api.pool_size"),
                                           HasSubstr("test.yaml:11:12: metrics.enabled")));
}

TEST_F(ConfigLoaderTest, SyntaxErrorsHaveALineAndColumn) {
  EXPECT_THAT(errors_of("checkpoint:\n  path: [unclosed\n"), ElementsAre(HasSubstr("test.yaml:3:1: ")));
}

// yaml-cpp reads an open quote on to the next quote character in the file, and reports where it then
// gave up: the error names the quote itself.
TEST_F(ConfigLoaderTest, AnUnterminatedQuoteIsReportedWhereItOpens) {
  EXPECT_THAT(errors_of(valid("logging:\n  level: 'info\n# the 'status' command\nmetrics:\n  enabled: true\n")),
              ElementsAre(HasSubstr("test.yaml:10:10: this quote is not closed on its line (the YAML parser then "
                                    "stopped at ")));
  EXPECT_THAT(errors_of(valid("metrics:\n  listen: \"127.0.0.1:9464\n")),
              ElementsAre("test.yaml:10:11: this quote is never closed"));
  // Quotes closed on their line, quotes in plain text and comments, escapes, and a quoted value that
  // spans lines and is closed are all fine: what remains is the value's own error.
  EXPECT_NO_THROW(load_string(valid("logging: {level: 'info'}  # it's \"quoted\n"
                                    "metrics:\n  listen: \"127.0.0.1:9464\"\n"),
                              "test.yaml"));
  EXPECT_THAT(errors_of(valid("logging: {level: 'in''fo'}\n")), ElementsAre(HasSubstr("'in'fo' is not a log level")));
  EXPECT_THAT(errors_of(valid("logging:\n  level: \"in\\\"\n    fo\"\n")),
              ElementsAre(HasSubstr("'in\" fo' is not a log level")));
}

// One error for a file that is not a mapping of keys, not one per missing key as well.
TEST_F(ConfigLoaderTest, AFileThatIsNoMappingIsOneError) {
  EXPECT_THAT(errors_of("just some text\n"), ElementsAre("test.yaml:1:1: expected a mapping of keys, found a scalar"));
  EXPECT_THAT(errors_of("- a\n- b\n"), ElementsAre("test.yaml:1:1: expected a mapping of keys, found a list"));
  EXPECT_THAT(errors_of("# only a comment\n"),
              ElementsAre("test.yaml: the file holds no configuration (it is empty, or only comments)"));
  EXPECT_THAT(errors_of(valid("service: 30s\n")),
              ElementsAre("test.yaml:9:10: service: expected a mapping of keys, found a scalar"));
  // A section that is no mapping: its required keys are not reported missing one by one.
  std::string yaml = valid();
  yaml.replace(yaml.find("checkpoint:\n  path: /var/lib/fulfillsync/checkpoint.db\n"),
               std::string("checkpoint:\n  path: /var/lib/fulfillsync/checkpoint.db\n").size(), "checkpoint: [a]\n");
  EXPECT_THAT(errors_of(yaml), ElementsAre("test.yaml:1:13: checkpoint: expected a mapping of keys, found a list"));
}

TEST_F(ConfigLoaderTest, TooDeepNestingIsOneErrorWithItsPlace) {
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  const auto errors = errors_of(valid("sync: " + deep + "\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], ::testing::MatchesRegex("test\\.yaml:9:[0-9]+: nested too deeply: .*"));
}

TEST_F(ConfigLoaderTest, ADirectoryIsNamedAsSuch) {
  try {
    load_file(dir.path());
    ADD_FAILURE() << "a directory loaded";
  } catch (const ConfigError& error) {
    ASSERT_EQ(error.diagnostics().size(), 1u);
    EXPECT_EQ(error.diagnostics()[0].to_string(),
              dir.path().string() + ": is a directory, not a configuration file (e.g. " +
                  (dir.path() / "fulfillsync.yaml").string() + ")");
  }
}

TEST_F(ConfigLoaderTest, DuplicateKeysAreErrors) {
  EXPECT_THAT(errors_of(valid("logging:\n  level: info\n  level: debug\n")),
              ElementsAre("test.yaml:11:3: logging.level: key 'level' appears more than once"));
}

TEST_F(ConfigLoaderTest, TokenFileReadableByOthersIsRefusedWithTheFix) {
  chmod(token.c_str(), 0644);
  EXPECT_THAT(errors_of(valid()),
              ElementsAre("test.yaml:8:15: api.token_file: " + token.string() +
                          " is accessible to group or others (mode 0644); restrict it with 'chmod 600 " +
                          token.string() + "', or pass it with systemd's LoadCredential= (see README)"));
  chmod(token.c_str(), 0640);
  EXPECT_THAT(errors_of(valid()), ElementsAre(HasSubstr("(mode 0640)")));
  chmod(token.c_str(), 0400);
  EXPECT_NO_THROW(load_string(valid(), "test.yaml"));
}

TEST_F(ConfigLoaderTest, MissingTokenFileIsAnError) {
  std::filesystem::remove(token);
  EXPECT_THAT(errors_of(valid()), ElementsAre(HasSubstr("api.token_file: cannot read " + token.string() +
                                                        ": No such file or directory")));
}

TEST_F(ConfigLoaderTest, EmptyTokenFileIsAnError) {
  testing::write_file(token, " \n");
  EXPECT_THAT(errors_of(valid()), ElementsAre("test.yaml:8:15: api.token_file: " + token.string() +
                                              " is empty: write the secret on its first line"));
}

// status, retry and resync never use the token: an operator who cannot read it can run them.
TEST_F(ConfigLoaderTest, SecretFilesAreNotTouchedWhenSkipped) {
  std::filesystem::remove(token);
  EXPECT_EQ(load_string(valid(), "test.yaml", Secrets::skip).api.token_file, token);
}

TEST_F(ConfigLoaderTest, CredentialsDirectoryIsExpanded) {
  setenv("CREDENTIALS_DIRECTORY", dir.path().c_str(), 1);
  std::string yaml = valid();
  yaml.replace(yaml.find(token.string()), token.string().size(), "${CREDENTIALS_DIRECTORY}/api-token");
  const Config config = load_string(yaml, "test.yaml");
  EXPECT_EQ(config.api.token_file, token);
  EXPECT_THAT(config.notes, ::testing::IsEmpty());
  unsetenv("CREDENTIALS_DIRECTORY");
}

// Outside systemd (an operator running check-config by hand, as the README does), a credential is
// read from the file the packaged unit's LoadCredential= loads it from, and the notes say so.
TEST_F(ConfigLoaderTest, OutsideSystemdACredentialIsReadWhereTheUnitLoadsItFrom) {
  unsetenv("CREDENTIALS_DIRECTORY");
  std::string yaml = valid();
  yaml.replace(yaml.find(token.string()), token.string().size(), "${CREDENTIALS_DIRECTORY}/api-token");
  testing::write_file(dir / "fulfillsync.yaml", yaml);
  const Config plain = load_file(dir / "fulfillsync.yaml");  // fulfillsyncd.service
  EXPECT_EQ(plain.api.token_file, token);
  EXPECT_THAT(plain.notes, ElementsAre("api.token_file: CREDENTIALS_DIRECTORY is not set (not started by systemd), "
                                       "so ${CREDENTIALS_DIRECTORY}/api-token is read from " + token.string() +
                                       ", the file the unit's LoadCredential= loads as credential 'api-token'"));

  testing::write_file(dir / "shop1.yaml", yaml);  // fulfillsyncd@shop1.service
  testing::write_file(dir / "shop1.api-token", "shop1-secret\n");
  chmod((dir / "shop1.api-token").c_str(), 0600);
  EXPECT_EQ(load_file(dir / "shop1.yaml").api.token_file, dir / "shop1.api-token");

  std::filesystem::remove(dir / "shop1.api-token");
  try {
    load_file(dir / "shop1.yaml");
    ADD_FAILURE() << "loaded without its token";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("api.token_file: cannot read " + (dir / "shop1.api-token").string()));
  }
}

TEST_F(ConfigLoaderTest, PlainHttpNeedsToBeAllowedExplicitly) {
  std::string yaml = valid();
  yaml.replace(yaml.find("https://"), 8, "http://");
  EXPECT_THAT(errors_of(yaml), ElementsAre(HasSubstr("test.yaml:7:13: api.base_url: plain http:// sends the token "
                                                     "unencrypted")));
}

TEST_F(ConfigLoaderTest, MerchantPollingKeysAreRangeChecked) {
  std::string yaml = valid();
  yaml.insert(yaml.find("api:"), "  batch_size: 0\n  look_back: -1s\n  max_clock_skew: 2d\n");
  EXPECT_THAT(errors_of(yaml), ElementsAre(HasSubstr("merchant.batch_size: 0 is out of range: allowed 1 to 10000"),
                                           HasSubstr("merchant.look_back: '-1s' is not a duration"),
                                           HasSubstr("merchant.max_clock_skew: 2d is out of range")));
}

// Naive updated_at values are read in merchant.timezone: a name the system's zoneinfo does not hold
// is refused where it is written, not when the first such row is read.
TEST_F(ConfigLoaderTest, TheMerchantTimeZoneMustBeOneTheSystemKnows) {
  for (const char* name : {"Europe/Berlim", "CEST", "../../etc/passwd"}) {
    std::string yaml = valid();
    const std::size_t line = static_cast<std::size_t>(std::count(yaml.begin(), yaml.begin() + yaml.find("api:"), '\n'));
    yaml.insert(yaml.find("api:"), fmt::format("  timezone: {}\n", name));
    EXPECT_THAT(errors_of(yaml), ElementsAre(HasSubstr(fmt::format("test.yaml:{}:13: merchant.timezone: '{}' is not a "
                                                                   "time zone",
                                                                   line + 1, name))))
        << name;
  }
}

TEST_F(ConfigLoaderTest, TablePrefixMustBeAPlainIdentifier) {
  std::string yaml = valid();
  yaml.insert(yaml.find("api:"), "  result_table_prefix: \"x; DROP TABLE orders; --\"\n");
  EXPECT_THAT(errors_of(yaml), ElementsAre(HasSubstr("merchant.result_table_prefix: 'x; DROP TABLE orders; --' is "
                                                     "not a plain SQL identifier")));
}

// --- merchant.driver: postgresql

TEST_F(ConfigLoaderTest, PostgresqlWithDefaults) {
  const Config config = load_string(valid_postgresql(), "test.yaml");
  EXPECT_EQ(config.merchant.driver, MerchantDriver::postgresql);
  const PostgresConfig& pg = config.merchant.postgresql;
  EXPECT_EQ(pg.connection, "");
  EXPECT_EQ(pg.host, "db.shop.example");
  EXPECT_EQ(pg.port, 5432);
  EXPECT_EQ(pg.database, "shop");
  EXPECT_EQ(pg.user, "fulfillsync");
  EXPECT_TRUE(pg.password_file.empty());
  EXPECT_EQ(pg.sslmode, "verify-full");  // a host that is not this machine
  EXPECT_TRUE(pg.sslrootcert.empty());
  EXPECT_EQ(pg.source_schema, "public");
  EXPECT_EQ(pg.result_schema, "fulfillsync");
  EXPECT_EQ(pg.statement_timeout, 30s);
  EXPECT_EQ(config.merchant.sqlite, SqliteConfig{});
  // The SQLite default stays the default.
  EXPECT_EQ(load_string(valid(), "test.yaml").merchant.driver, MerchantDriver::sqlite);
}

TEST_F(ConfigLoaderTest, EveryPostgresqlKeySet) {
  testing::write_file(dir / "pg-password", "s3cret\n");
  chmod((dir / "pg-password").c_str(), 0600);
  testing::write_file(dir / "ca.pem", "-----BEGIN CERTIFICATE-----\n");
  const Config config = load_string(valid_postgresql("host: 10.0.0.5\n"
                                                     "port: 6432\n"
                                                     "database: shop\n"
                                                     "user: fs\n"
                                                     "password_file: " + (dir / "pg-password").string() + "\n"
                                                     "sslmode: require\n"
                                                     "sslrootcert: " + (dir / "ca.pem").string() + "\n"
                                                     "source_schema: shop\n"
                                                     "result_schema: fs_results\n"
                                                     "statement_timeout: 5s\n"),
                                    "test.yaml");
  const PostgresConfig& pg = config.merchant.postgresql;
  EXPECT_EQ(pg.host, "10.0.0.5");
  EXPECT_EQ(pg.port, 6432);
  EXPECT_EQ(pg.database, "shop");
  EXPECT_EQ(pg.user, "fs");
  EXPECT_EQ(pg.password_file, dir / "pg-password");
  EXPECT_EQ(pg.sslmode, "require");
  EXPECT_EQ(pg.sslrootcert, dir / "ca.pem");
  EXPECT_EQ(pg.source_schema, "shop");
  EXPECT_EQ(pg.result_schema, "fs_results");
  EXPECT_EQ(pg.statement_timeout, 5s);
}

// Certificates are verified by default over the network only: loopback and sockets stay at libpq's
// own default.
TEST_F(ConfigLoaderTest, PostgresqlSslmodeDefaultsToVerifyFullForRemoteHosts) {
  const auto sslmode = [&](std::string_view lines) {
    return load_string(valid_postgresql(lines), "test.yaml").merchant.postgresql.sslmode;
  };
  EXPECT_EQ(sslmode("host: localhost\ndatabase: shop\nuser: fs\n"), "prefer");
  EXPECT_EQ(sslmode("host: 127.0.0.1\ndatabase: shop\nuser: fs\n"), "prefer");
  EXPECT_EQ(sslmode("host: /var/run/postgresql\ndatabase: shop\nuser: fs\n"), "prefer");
  EXPECT_EQ(sslmode("host: db.shop.example\ndatabase: shop\nuser: fs\n"), "verify-full");
  EXPECT_EQ(sslmode("connection: dbname=shop\n"), "prefer");  // the default socket
  EXPECT_EQ(sslmode("connection: host=localhost,db.shop.example dbname=shop\n"), "verify-full");
  EXPECT_EQ(sslmode("connection: postgresql://fs@db.shop.example/shop\n"), "verify-full");
  EXPECT_EQ(sslmode("connection: postgresql://fs@127.0.0.1/shop\n"), "prefer");
  // Set in the connection string: kept there, not added again.
  EXPECT_EQ(sslmode("connection: host=db.shop.example sslmode=require\n"), "");
  EXPECT_THAT(errors_of(valid_postgresql("connection: host=db.shop.example sslmode=require\nsslmode: verify-ca\n")),
              ElementsAre(HasSubstr("merchant.postgresql.sslmode: the connection string sets sslmode too")));
  EXPECT_THAT(errors_of(valid_postgresql("host: db\ndatabase: shop\nuser: fs\nsslmode: verify\n")),
              ElementsAre(HasSubstr("merchant.postgresql.sslmode: 'verify' is not one of: disable, allow, prefer, "
                                    "require, verify-ca, verify-full")));
}

TEST_F(ConfigLoaderTest, PostgresqlConnectionStringIsReadAsLibpqReadsIt) {
  const Config config = load_string(
      valid_postgresql("connection: \"host=db.shop.example dbname=shop user=fs application_name=fulfillsyncd\"\n"),
      "test.yaml");
  EXPECT_EQ(config.merchant.postgresql.connection, "host=db.shop.example dbname=shop user=fs application_name=fulfillsyncd");
  EXPECT_NO_THROW(load_string(valid_postgresql("connection: postgresql://fs@db.shop.example:6432/shop\n"), "test.yaml"));

  EXPECT_THAT(errors_of(valid_postgresql("connection: \"host=db dbname='shop\"\n")),
              ElementsAre(HasSubstr("test.yaml:6:17: merchant.postgresql.connection: not a libpq connection string: "
                                    "unterminated quoted string")));
  EXPECT_THAT(errors_of(valid_postgresql("connection: \"host=db colour=blue\"\n")),
              ElementsAre(HasSubstr("not a libpq connection string: invalid connection option \"colour\"")));
}

TEST_F(ConfigLoaderTest, PostgresqlPasswordIsNeverInline) {
  for (const char* connection : {"\"host=db dbname=shop password=hunter2\"", "postgresql://fs:hunter2@db/shop"}) {
    const auto errors = errors_of(valid_postgresql(fmt::format("connection: {}\n", connection)));
    EXPECT_THAT(errors, ElementsAre(HasSubstr("merchant.postgresql.connection: holds a password: never write it in "
                                              "the configuration; put it in password_file")))
        << connection;
    // The diagnostic does not repeat the secret.
    for (const auto& error : errors) EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  }
  EXPECT_THAT(errors_of(valid_postgresql("host: db\ndatabase: shop\nuser: fs\npassword: hunter2\n")),
              ElementsAre(HasSubstr("merchant.postgresql.password: unknown key 'password'")));
}

TEST_F(ConfigLoaderTest, PostgresqlPasswordFileIsCheckedAsTheTokenFile) {
  const auto password = dir / "pg-password";
  const std::string yaml = valid_postgresql("host: db\ndatabase: shop\nuser: fs\npassword_file: " + password.string() + "\n");
  testing::write_file(password, "s3cret\n");
  chmod(password.c_str(), 0644);
  EXPECT_THAT(errors_of(yaml), ElementsAre("test.yaml:9:20: merchant.postgresql.password_file: " + password.string() +
                                           " is accessible to group or others (mode 0644); restrict it with 'chmod "
                                           "600 " + password.string() + "', or pass it with systemd's "
                                           "LoadCredential= (see README)"));
  chmod(password.c_str(), 0600);
  EXPECT_EQ(load_string(yaml, "test.yaml").merchant.postgresql.password_file, password);
  std::filesystem::remove(password);
  EXPECT_THAT(errors_of(yaml), ElementsAre(HasSubstr("merchant.postgresql.password_file: cannot read")));
  EXPECT_NO_THROW(load_string(yaml, "test.yaml", Secrets::skip));

  // A systemd credential.
  testing::write_file(password, "s3cret\n");
  chmod(password.c_str(), 0600);
  setenv("CREDENTIALS_DIRECTORY", dir.path().c_str(), 1);
  const Config credential = load_string(
      valid_postgresql("host: db\ndatabase: shop\nuser: fs\npassword_file: ${CREDENTIALS_DIRECTORY}/pg-password\n"),
      "test.yaml");
  unsetenv("CREDENTIALS_DIRECTORY");
  EXPECT_EQ(credential.merchant.postgresql.password_file, password);
}

TEST_F(ConfigLoaderTest, PostgresqlIsNamedOneWayOnly) {
  EXPECT_THAT(errors_of(valid_postgresql("connection: dbname=shop\nhost: db\n")),
              ElementsAre(HasSubstr("merchant.postgresql.connection: set either connection or host, port, database "
                                    "and user, not both")));
  EXPECT_THAT(errors_of(valid_postgresql("port: 5433\n")),
              ElementsAre(HasSubstr("merchant.postgresql.host: required key 'host' is missing"),
                          HasSubstr("merchant.postgresql.database: required key 'database' is missing"),
                          HasSubstr("merchant.postgresql.user: required key 'user' is missing")));
}

TEST_F(ConfigLoaderTest, PostgresqlSchemasAreIdentifiersAndDistinct) {
  const std::string base = "host: db\ndatabase: shop\nuser: fs\n";
  EXPECT_THAT(errors_of(valid_postgresql(base + "source_schema: \"Shop; DROP\"\n")),
              ElementsAre(HasSubstr("merchant.postgresql.source_schema: 'Shop; DROP' is not a plain SQL identifier")));
  EXPECT_THAT(errors_of(valid_postgresql(base + "result_schema: " + std::string(64, 'r') + "\n")),
              ElementsAre(HasSubstr("merchant.postgresql.result_schema: '" + std::string(64, 'r') +
                                    "' is not a plain SQL identifier: use 1 to 63")));
  EXPECT_THAT(errors_of(valid_postgresql(base + "source_schema: shop\nresult_schema: shop\n")),
              ElementsAre(HasSubstr("merchant.postgresql.result_schema: 'shop' is source_schema too")));
}

TEST_F(ConfigLoaderTest, PostgresqlSslrootcertMustBeReadable) {
  EXPECT_THAT(errors_of(valid_postgresql("host: db\ndatabase: shop\nuser: fs\nsslrootcert: " +
                                         (dir / "missing.pem").string() + "\n")),
              ElementsAre(HasSubstr("merchant.postgresql.sslrootcert: cannot read " + (dir / "missing.pem").string() +
                                    ": No such file or directory")));
}

// The section of the other driver is named as such, not taken for a typo.
TEST_F(ConfigLoaderTest, OnlyTheChosenDriversSectionMayBePresent) {
  std::string both = valid_postgresql();
  both.insert(both.find("api:"), "  sqlite:\n    path: shop.db\n");
  EXPECT_THAT(errors_of(both), ElementsAre(HasSubstr("merchant.sqlite: merchant.driver is postgresql: remove this "
                                                     "section")));
  std::string sqlite_with_pg = valid();
  sqlite_with_pg.insert(sqlite_with_pg.find("api:"), "  postgresql:\n    host: db\n");
  EXPECT_THAT(errors_of(sqlite_with_pg),
              ElementsAre(HasSubstr("merchant.postgresql: merchant.driver is sqlite: remove this section")));
  std::string missing = valid_postgresql();
  missing.erase(missing.find("  postgresql:"), missing.find("api:") - missing.find("  postgresql:"));
  EXPECT_THAT(errors_of(missing), ElementsAre(HasSubstr("merchant.postgresql: required key 'postgresql' is missing")));
}

TEST_F(ConfigLoaderTest, OAuthReplacesTheTokenFile) {
  testing::write_file(dir / "secret", "s3cret\n");
  chmod((dir / "secret").c_str(), 0600);
  const std::string yaml =
      "checkpoint:\n"
      "  path: c.db\n"
      "merchant:\n"
      "  sqlite:\n"
      "    path: m.db\n"
      "api:\n"
      "  base_url: https://api.example.com\n"
      "  oauth:\n"
      "    auth_url: https://auth.example.com\n"
      "    client_id: app\n"
      "    client_secret_file: " + (dir / "secret").string() + "\n"
      "    scopes: [openid, offline_access]\n";
  const Config config = load_string(yaml, "test.yaml");
  ASSERT_TRUE(config.api.oauth);
  EXPECT_EQ(config.api.oauth->client_id, "app");
  EXPECT_EQ(config.api.oauth->redirect_uri, "http://127.0.0.1:8976/callback");
  EXPECT_EQ(config.api.oauth->scopes, (std::vector<std::string>{"openid", "offline_access"}));
  EXPECT_TRUE(config.api.token_file.empty());

  EXPECT_THAT(errors_of(yaml + "  token_file: " + token.string() + "\n"),
              ElementsAre("test.yaml:13:15: api.token_file: set either token_file or oauth, not both"));
  std::string remote_redirect = yaml;
  remote_redirect.insert(remote_redirect.find("    scopes"), "    redirect_uri: https://example.com/cb\n");
  EXPECT_THAT(errors_of(remote_redirect), ElementsAre(HasSubstr("api.oauth.redirect_uri: must be a loopback")));
}

TEST_F(ConfigLoaderTest, UnreadableFileIsReported) {
  try {
    load_file(dir / "missing.yaml");
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.diagnostics().at(0).to_string(),
              (dir / "missing.yaml").string() + ": cannot read: No such file or directory");
  }
}

}  // namespace
}  // namespace fulfillsync::config
