#pragma once
// The daemon's configuration: one YAML file, loaded and validated completely before anything uses it
// (see loader.hpp). config/fulfillsync.example.yaml documents every key.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

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

enum class MerchantDriver { sqlite };

struct SqliteConfig {
  std::filesystem::path path;
  Duration busy_timeout = std::chrono::seconds(5);

  bool operator==(const SqliteConfig&) const = default;
};

struct MerchantConfig {
  MerchantDriver driver = MerchantDriver::sqlite;
  SqliteConfig sqlite;
  // Whether the daemon creates and migrates its result tables in the merchant database.
  bool manage_result_tables = true;
  // Prefix of the result tables' names; a plain SQL identifier (validated).
  std::string result_table_prefix = "fulfillsync_";

  bool operator==(const MerchantConfig&) const = default;
};

struct ApiConfig {
  std::string base_url;
  std::string version = "2026-07";
  std::filesystem::path token_file;
  std::optional<std::filesystem::path> ca_file;
  bool allow_plain_http = false;
  std::optional<std::int32_t> channel_id;
  int requests_per_minute = 150;
  Duration connect_timeout = std::chrono::seconds(10);
  Duration request_timeout = std::chrono::seconds(30);

  bool operator==(const ApiConfig&) const = default;
};

struct MetricsConfig {
  bool enabled = true;
  std::string host = "127.0.0.1";  // loopback unless configured otherwise
  std::uint16_t port = 9464;       // 0 picks a free port (logged)

  bool operator==(const MetricsConfig&) const = default;
};

struct Config {
  std::filesystem::path source;  // the file it was loaded from
  ServiceConfig service;
  LoggingConfig logging;
  CheckpointConfig checkpoint;
  MerchantConfig merchant;
  ApiConfig api;
  MetricsConfig metrics;

  bool operator==(const Config&) const = default;
};

}  // namespace fulfillsync::config
