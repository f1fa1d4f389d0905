#include "fulfillsync/daemon/cli.hpp"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/logging.hpp"
#include "fulfillsync/common/version.hpp"
#include "fulfillsync/config/loader.hpp"
#include "fulfillsync/daemon/auth_login.hpp"
#include "fulfillsync/daemon/service.hpp"

namespace fulfillsync::daemon {
namespace {

int check_config(const CommandLine& line) {
  try {
    config::load_file(line.config_path);
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) std::cerr << diagnostic.to_string() << '\n';
    return exit_code::config;
  }
  std::cout << "OK\n";
  return exit_code::ok;
}

int login(const CommandLine& line) {
  try {
    return auth_login(config::load_file(line.config_path));
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) std::cerr << diagnostic.to_string() << '\n';
    return exit_code::config;
  }
}

int run(const CommandLine& line) {
  config::Config config;
  try {
    config = config::load_file(line.config_path);
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) spdlog::critical("{}", diagnostic.to_string());
    return exit_code::config;
  }
  std::unique_ptr<Service> service;
  try {
    service = std::make_unique<Service>(line.config_path, std::move(config), line.log_level);
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return exit_code::unavailable;
  }
  return service->run();
}

}  // namespace

std::optional<CommandLine> parse_command_line(const std::vector<std::string>& args, std::string& error) {
  CommandLine line;
  bool command_seen = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    // Options take their value as the next word or after '='.
    const auto value_of = [&](std::string_view name) -> std::optional<std::string> {
      if (arg == name) {
        if (i + 1 >= args.size()) {
          error = fmt::format("{} needs a value", name);
          return std::nullopt;
        }
        return args[++i];
      }
      return arg.substr(name.size() + 1);
    };
    const auto is_option = [&](std::string_view name) {
      return arg == name || (arg.size() > name.size() && arg.compare(0, name.size(), name) == 0 && arg[name.size()] == '=');
    };
    if (arg == "-h" || arg == "--help") {
      line.command = Command::help;
      return line;
    }
    if (arg == "-V" || arg == "--version") {
      line.command = Command::version;
      return line;
    }
    if (is_option("--config") || arg == "-c") {
      auto value = value_of(arg == "-c" ? "-c" : "--config");
      if (!value) return std::nullopt;
      line.config_path = *value;
    } else if (is_option("--log-level") || arg == "-l") {
      auto value = value_of(arg == "-l" ? "-l" : "--log-level");
      if (!value) return std::nullopt;
      line.log_level = logging::parse_level(*value);
      if (!line.log_level) {
        error = fmt::format("'{}' is not a log level: trace, debug, info, warn, error, critical or off", *value);
        return std::nullopt;
      }
    } else if (!arg.empty() && arg.front() == '-') {
      error = fmt::format("unknown option '{}'", arg);
      return std::nullopt;
    } else if (command_seen) {
      error = fmt::format("unexpected argument '{}'", arg);
      return std::nullopt;
    } else {
      command_seen = true;
      if (arg == "run") line.command = Command::run;
      else if (arg == "check-config") line.command = Command::check_config;
      else if (arg == "auth" && i + 1 < args.size() && args[i + 1] == "login") {
        line.command = Command::auth_login;
        ++i;
      } else {
        error = fmt::format("unknown command '{}'", arg);
        return std::nullopt;
      }
    }
  }
  return line;
}

std::string usage_text() {
  return fmt::format(
      "Usage: fulfillsyncd [OPTIONS] [COMMAND]\n"
      "\n"
      "Synchronises a merchant's orders, returns, shipments, tracking and inventory lots with the\n"
      "fulfillment provider's API.\n"
      "\n"
      "Commands:\n"
      "  run            run the daemon until SIGTERM (the default)\n"
      "  check-config   validate the configuration; print OK, or every error with its line and column\n"
      "  auth login     sign in with OAuth (api.oauth) once; the daemon then refreshes the tokens itself\n"
      "\n"
      "Options:\n"
      "  -c, --config PATH      configuration file (default {})\n"
      "  -l, --log-level LEVEL  trace, debug, info, warn, error, critical or off; overrides logging.level\n"
      "  -h, --help             show this help\n"
      "  -V, --version          show the version\n"
      "\n"
      "Exit status: 0 success, 64 usage error, 69 a store or the metrics endpoint could not be opened,\n"
      "70 internal error, 78 configuration error.\n",
      kDefaultConfigPath);
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string error;
  const auto line = parse_command_line(args, error);
  if (!line) {
    std::cerr << "fulfillsyncd: " << error << "\n\n" << usage_text();
    return exit_code::usage;
  }
  logging::init(logging::detect_destination(), line->log_level.value_or(spdlog::level::info));
  try {
    switch (line->command) {
      case Command::help: std::cout << usage_text(); return exit_code::ok;
      case Command::version: std::cout << "fulfillsyncd " << kVersion << '\n'; return exit_code::ok;
      case Command::check_config: return check_config(*line);
      case Command::run: return run(*line);
      case Command::auth_login: return login(*line);
    }
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return exit_code::software;
  }
  return exit_code::software;
}

}  // namespace fulfillsync::daemon
