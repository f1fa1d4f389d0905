#include "fulfillsync/daemon/cli.hpp"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/logging.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/common/version.hpp"
#include "fulfillsync/config/loader.hpp"
#include "fulfillsync/daemon/auth_login.hpp"
#include "fulfillsync/daemon/config_check.hpp"
#include "fulfillsync/daemon/dry_run.hpp"
#include "fulfillsync/daemon/failpoints.hpp"
#include "fulfillsync/daemon/resync.hpp"
#include "fulfillsync/daemon/service.hpp"
#include "fulfillsync/daemon/status_report.hpp"

namespace fulfillsync::daemon {
namespace {

// Every check on its own line on stdout; exit 78 when one of them is an error.
int check_config(const CommandLine& line) {
  std::optional<config::Config> config;
  try {
    // The secret files are checked below, each on its line, with the rest.
    config = config::load_file(line.config_path, config::Secrets::skip);
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) std::cout << "ERROR " << diagnostic.to_string() << '\n';
    std::cout << "configuration " << line.config_path.string() << ": errors found\n";
    return exit_code::config;
  }
  int errors = 0, warnings = 0;
  for (const ConfigCheck& check : check_configuration(*config, line.online)) {
    std::cout << format_check(check) << '\n';
    errors += check.level == ConfigCheck::Level::error ? 1 : 0;
    warnings += check.level == ConfigCheck::Level::warning ? 1 : 0;
  }
  if (errors > 0) {
    std::cout << fmt::format("configuration {}: {} errors, {} warnings\n", line.config_path.string(), errors,
                             warnings);
    return exit_code::config;
  }
  std::cout << fmt::format("configuration {}: OK{}\n", line.config_path.string(),
                           warnings > 0 ? fmt::format(" ({} warnings)", warnings) : "");
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

// `secrets`: skipped by the commands that never use the token (status, retry, resync), so that an
// operator who cannot read it can run them.
std::optional<config::Config> load_or_report(const CommandLine& line, config::Secrets secrets) {
  try {
    return config::load_file(line.config_path, secrets);
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) spdlog::critical("{}", diagnostic.to_string());
    return std::nullopt;
  }
}

int run(const CommandLine& line) {
  // A dry run sends nothing, so it needs no token.
  auto config = load_or_report(line, line.dry_run ? config::Secrets::skip : config::Secrets::check);
  if (!config) return exit_code::config;
  if (line.dry_run) return dry_run(*config);
  std::unique_ptr<Service> service;
  try {
    arm_failpoints_from_environment();
    service = std::make_unique<Service>(line.config_path, std::move(*config), line.log_level,
                                        line.command == Command::once ? Service::Mode::once : Service::Mode::run);
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return exit_code::unavailable;
  }
  return service->run();
}

// `status` and `retry` work beside a running daemon: they open its store without taking its lock.
int status(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  try {
    CheckpointStore store(config->checkpoint.path, CheckpointStore::Access::alongside);
    OutboundLedger ledger(store);
    std::unique_ptr<merchant::MerchantDatabase> merchant;
    try {
      merchant = merchant::open_merchant_database(config->merchant);
    } catch (const merchant::MerchantDatabaseError& e) {
      spdlog::warn("without the merchant database: {}", e.what());
    }
    std::cout << format_status(store, ledger, merchant.get());
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
}

int retry(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  try {
    CheckpointStore store(config->checkpoint.path, CheckpointStore::Access::alongside);
    OutboundLedger ledger(store);
    if (line.retry_rejected) {
      std::cout << fmt::format("{} rejected entries requeued\n", ledger.requeue_all_rejected());
      return exit_code::ok;
    }
    int requeued = 0;
    for (const LedgerKind kind : {LedgerKind::order_create, LedgerKind::order_cancel, LedgerKind::return_create}) {
      if (ledger.requeue(kind, *line.retry_reference)) {
        std::cout << fmt::format("{} {} requeued\n", to_string(kind), *line.retry_reference);
        ++requeued;
      }
    }
    if (requeued == 0) {
      std::cerr << fmt::format("fulfillsyncd: nothing to requeue for '{}': no entry the provider rejected has it (a "
                               "row that failed local validation is sent again once it is fixed)\n",
                               *line.retry_reference);
      return exit_code::data_error;
    }
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
}

int resync_command(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  const auto since = timestamps::parse_iso8601(*line.resync_since);
  try {
    CheckpointStore store(config->checkpoint.path, CheckpointStore::Access::alongside);
    for (const std::string& done : resync(store, *since, line.resync_job)) std::cout << done << '\n';
  } catch (const std::invalid_argument& e) {
    std::cerr << "fulfillsyncd: " << e.what() << '\n';
    return exit_code::usage;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
}

// Adds the change log to the merchant's source tables (schema/merchant/README.md). Safe beside the
// shop application and a running daemon; running it again changes nothing.
int upgrade_source(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  try {
    const auto merchant = merchant::open_merchant_database(config->merchant);
    const bool added = merchant->install_change_log();
    std::cout << (added ? fmt::format("{}: change log added; the daemon reads by it from its next start\n",
                                      merchant->describe())
                        : fmt::format("{}: change log present; nothing to do\n", merchant->describe()));
  } catch (const merchant::MerchantDatabaseError& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
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
    } else if (arg == "--dry-run") {
      line.dry_run = true;
    } else if (arg == "--online" && line.command == Command::check_config) {
      line.online = true;
    } else if (arg == "--rejected" && line.command == Command::retry) {
      line.retry_rejected = true;
    } else if (line.command == Command::resync && is_option("--since")) {
      line.resync_since = value_of("--since");
      if (!line.resync_since) return std::nullopt;
      if (!timestamps::parse_iso8601(*line.resync_since)) {
        error = fmt::format("--since '{}' is not a date-time (2026-03-01 or 2026-03-01T12:00:00Z)", *line.resync_since);
        return std::nullopt;
      }
    } else if (line.command == Command::resync && is_option("--job")) {
      line.resync_job = value_of("--job");
      if (!line.resync_job) return std::nullopt;
    } else if (!arg.empty() && arg.front() == '-') {
      error = fmt::format("unknown option '{}'", arg);
      return std::nullopt;
    } else if (command_seen && line.command == Command::retry && !line.retry_reference) {
      line.retry_reference = arg;
    } else if (command_seen) {
      error = fmt::format("unexpected argument '{}'", arg);
      return std::nullopt;
    } else {
      command_seen = true;
      if (arg == "run") line.command = Command::run;
      else if (arg == "once") line.command = Command::once;
      else if (arg == "status") line.command = Command::status;
      else if (arg == "retry") line.command = Command::retry;
      else if (arg == "resync") line.command = Command::resync;
      else if (arg == "check-config") line.command = Command::check_config;
      else if (arg == "upgrade-source") line.command = Command::upgrade_source;
      else if (arg == "auth" && i + 1 < args.size() && args[i + 1] == "login") {
        line.command = Command::auth_login;
        ++i;
      } else {
        error = fmt::format("unknown command '{}'", arg);
        return std::nullopt;
      }
    }
  }
  if (line.command == Command::retry && line.retry_reference.has_value() == line.retry_rejected) {
    error = "retry needs a REFERENCE_ID or --rejected";
    return std::nullopt;
  }
  if (line.command == Command::resync && !line.resync_since) {
    error = "resync needs --since DATE";
    return std::nullopt;
  }
  if (line.dry_run && line.command != Command::run && line.command != Command::once) {
    error = "--dry-run goes with run or once";
    return std::nullopt;
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
      "  run                   run the daemon until SIGTERM (the default)\n"
      "  once                  run every job until nothing is left to do, print a summary and exit\n"
      "                        (see Exit status)\n"
      "  status                the outbound backlog by state, the oldest waiting entry, the latest\n"
      "                        rejections with their reasons, the tracking marks, and each job's runs,\n"
      "                        failures, items, last success and lag (works beside a running daemon)\n"
      "  retry REFERENCE_ID    send a rejected order, cancel or return again as it is\n"
      "  retry --rejected      the same for every rejected entry\n"
      "  resync --since DATE [--job NAME]\n"
      "                        read again what the provider changed since DATE: moves pull_shipments\n"
      "                        and pull_returns (or the one named) back (works beside a running daemon)\n"
      "  check-config [--online]\n"
      "                        check what run would meet, writing nothing: the file, the merchant\n"
      "                        database (read-only: source tables, their change log, the result tables), the\n"
      "                        checkpoint store's directory, the token file and sync.orders_since; one\n"
      "                        line per check, OK, WARN or ERROR with the fix; --online also asks the\n"
      "                        provider (GET /channel) and shows the channel it would use\n"
      "  auth login            sign in with OAuth (api.oauth) once; the daemon then refreshes the tokens itself\n"
      "  upgrade-source        add the change log and its triggers to the merchant's source tables\n"
      "                        (schema/merchant/change_log/), so changes are found whatever the clock\n"
      "                        says; one transaction, safe while the shop writes; running it again\n"
      "                        changes nothing (SQLite tables only, not views)\n"
      "\n"
      "Options:\n"
      "  -c, --config PATH      configuration file (default {})\n"
      "      --dry-run          with run or once: read the merchant's rows, build and validate every\n"
      "                         request, log them (personal data redacted); sends and writes nothing:\n"
      "                         the merchant database and the checkpoint store are only read, a missing\n"
      "                         store is not created, a missing merchant database exits 69\n"
      "  -l, --log-level LEVEL  trace, debug, info, warn, error, critical or off; overrides logging.level\n"
      "  -h, --help             show this help\n"
      "  -V, --version          show the version\n"
      "\n"
      "Exit status (sysexits):\n"
      "  0   success; once: all done\n"
      "  64  usage error\n"
      "  65  once: done, but rows stay rejected or tracking marks are refused\n"
      "  69  a store or the metrics endpoint cannot be opened; once: the provider cannot be reached\n"
      "      within api.retry, or a job failed api.retry.attempts runs in a row\n"
      "  70  internal error\n"
      "  75  once: stopped with work left, by SIGTERM/SIGINT or because the provider refused the\n"
      "      credentials; the next start resumes it\n"
      "  78  configuration error: check-config found one, or the provider refused the token, has no\n"
      "      channel to create orders in, or its TLS certificate is not trusted (api.ca_file);\n"
      "      systemd does not restart on it\n"
      "\n"
      "FULFILLSYNC_FAILPOINTS=NAME[@N],... kills the process at a named step (tests only).\n",
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
      case Command::run:
      case Command::once: return run(*line);
      case Command::status: return status(*line);
      case Command::retry: return retry(*line);
      case Command::resync: return resync_command(*line);
      case Command::auth_login: return login(*line);
      case Command::upgrade_source: return upgrade_source(*line);
    }
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return exit_code::software;
  }
  return exit_code::software;
}

}  // namespace fulfillsync::daemon
