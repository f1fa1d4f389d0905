#pragma once
// fulfillsyncd's command line: parsing, help, and running the command named.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/common.h>

#include "fulfillsync/daemon/exit_codes.hpp"

namespace fulfillsync::daemon {

inline constexpr const char* kDefaultConfigPath = "/etc/fulfillsync/fulfillsync.yaml";

enum class Command {
  run, once, status, retry, resync, check_config, auth_login, upgrade_source, recover_store, backup, help, version
};

struct CommandLine {
  Command command = Command::run;
  std::filesystem::path config_path = kDefaultConfigPath;
  std::optional<spdlog::level::level_enum> log_level;
  bool dry_run = false;                       // run, once: build and validate, send nothing
  bool online = false;                        // check-config --online: ask the provider too
  bool json = false;                          // status --json
  std::optional<Command> help_topic;          // help: the command named beside --help
  std::optional<std::string> retry_reference;  // retry REFERENCE_ID
  std::optional<std::string> retry_product;    // retry --product REFERENCE_ID
  std::optional<std::string> retry_sku;        // retry --sku SKU
  bool retry_rejected = false;                 // retry --rejected
  std::optional<std::string> resync_since;     // resync --since DATE (ISO 8601)
  std::optional<std::string> resync_job;       // resync --job NAME
  std::optional<std::filesystem::path> backup_file;  // backup FILE
};

// Parses argv (without the program name). On a usage error returns nothing and sets `error`.
std::optional<CommandLine> parse_command_line(const std::vector<std::string>& args, std::string& error);

// fulfillsyncd --help: every command, the options and the exit statuses.
std::string usage_text();
// COMMAND --help: that command's own usage, options and exit statuses.
std::string usage_text(Command command);

// The whole program: parses the command line and runs the command. Returns the exit code.
int main(int argc, char** argv);

}  // namespace fulfillsync::daemon
